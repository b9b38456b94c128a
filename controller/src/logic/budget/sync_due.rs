//! Whether a Budget reconcile reads YNAB, or the sync before it still stands.

use std::time::Duration;

/// What a sync was made for: the Budget's generation, and digests of its annotations (a
/// `ledgerops.dev/sync-requested-at` is one) and of its API URL and token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncedFor {
    pub generation: Option<i64>,
    pub annotations: String,
    pub credentials: String,
}

/// Read YNAB now, or look again after this long.
#[derive(Debug, PartialEq, Eq)]
pub enum Due {
    Now,
    In(Duration),
}

/// A reconcile made for what the last successful sync was made for, `elapsed` after it and
/// before `interval` has passed, reads nothing: at start-up the Budget's list and its Secret's
/// wake it twice, and each YNAB read counts against a token's 200 an hour. Anything new (a spec
/// change, an annotation, other credentials), no sync yet, or a sync that is due reads at once.
pub fn due(last: Option<(&SyncedFor, Duration)>, now: &SyncedFor, interval: Duration) -> Due {
    match last {
        Some((made_for, elapsed)) if made_for == now && elapsed < interval => {
            Due::In(interval - elapsed)
        }
        _ => Due::Now,
    }
}

#[cfg(test)]
#[path = "sync_due_tests.rs"]
mod tests;
