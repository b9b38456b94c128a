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
    /// A sync asked for by an annotation alone waits this long: [`ASKED_BURST`] ran lately.
    Held(Duration),
}

/// How many syncs asked by an annotation alone run within [`ASKED_WINDOW`]; more wait. Anyone
/// who may annotate a Budget (an editor) could otherwise spend a token's hour on syncs.
pub const ASKED_BURST: usize = 3;
/// See [`ASKED_BURST`].
pub const ASKED_WINDOW: Duration = Duration::from_secs(600);

/// A reconcile made for what the last successful sync was made for, `elapsed` after it and
/// before `interval` has passed, reads nothing: at start-up the Budget's list and its Secret's
/// wake it twice, and each YNAB read counts against a token's 200 an hour. A spec change, other
/// credentials, no sync yet, or a sync that is due read at once; an annotation alone (a sync a
/// person asks for) reads at once unless [`ASKED_BURST`] such syncs ran in the last
/// [`ASKED_WINDOW`] (`asked`: how long ago each ran), and then when the oldest leaves it.
pub fn due(
    last: Option<(&SyncedFor, Duration)>,
    now: &SyncedFor,
    interval: Duration,
    asked: &[Duration],
) -> Due {
    match last {
        Some((made_for, elapsed)) if made_for == now && elapsed < interval => {
            Due::In(interval - elapsed)
        }
        Some((made_for, elapsed)) if asked_only(made_for, now) && elapsed < interval => {
            let recent: Vec<Duration> = asked
                .iter()
                .copied()
                .filter(|a| *a < ASKED_WINDOW)
                .collect();
            match recent.iter().max() {
                Some(oldest) if recent.len() >= ASKED_BURST => Due::Held(ASKED_WINDOW - *oldest),
                _ => Due::Now,
            }
        }
        _ => Due::Now,
    }
}

/// Whether `now` differs from `before` by its annotations alone: a sync asked for.
pub fn asked_only(before: &SyncedFor, now: &SyncedFor) -> bool {
    before.generation == now.generation
        && before.credentials == now.credentials
        && before.annotations != now.annotations
}

#[cfg(test)]
#[path = "sync_due_tests.rs"]
mod tests;
