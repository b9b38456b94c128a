//! What one all-or-nothing plan write came to, from the outcome of each of its items.

use k8s_openapi::jiff::Timestamp;

use crate::logic::transaction::batch::Outcome;

/// The plan's write, as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteResult {
    /// Every change is in YNAB (written now, or landed before).
    Landed,
    /// The request failed or its answer was lost and could not be settled: try again.
    NotLanded(String),
    /// Not sent: an unasked write waits for its turn in the token's hour, until `until`.
    Waiting { until: Timestamp, why: String },
    /// YNAB refused the change itself: sending it again fails the same way.
    Refused(String),
    /// The approval no longer covers what would be written: nothing was written.
    Stale(String),
    /// A guard forbids changing these transactions: nothing was written.
    Blocked(String),
    /// YNAB changed under the preview in a way the hash does not cover, or a transaction is
    /// gone: nothing was written.
    Changed(String),
    /// YNAB accepted the write but shows something else.
    Mismatch(String),
}

/// Sums up `outcomes`, one per item of the write whose transaction ids are `ids`.
pub fn summarize(ids: &[String], outcomes: &[Outcome]) -> WriteResult {
    let pairs = || ids.iter().zip(outcomes);
    if let Some((_, Outcome::Refused(why))) =
        pairs().find(|(_, o)| matches!(o, Outcome::Refused(_)))
    {
        return WriteResult::Refused(format!(
            "{why}. Sending it again would fail the same way: fix or remove the transactions YNAB refuses"
        ));
    }
    if let Some((_, Outcome::NotLanded(why) | Outcome::Unsettled(why))) =
        pairs().find(|(_, o)| matches!(o, Outcome::NotLanded(_) | Outcome::Unsettled(_)))
    {
        return WriteResult::NotLanded(why.clone());
    }
    if let Some((_, Outcome::Waiting { until, why })) =
        pairs().find(|(_, o)| matches!(o, Outcome::Waiting { .. }))
    {
        let (until, why) = (*until, why.clone());
        return WriteResult::Waiting { until, why };
    }
    if let Some((_, Outcome::Stale(why))) = pairs().find(|(_, o)| matches!(o, Outcome::Stale(_))) {
        return WriteResult::Stale(why.clone());
    }
    let blocked: Vec<String> = pairs()
        .filter_map(|(id, o)| match o {
            Outcome::Blocked(b) => Some(format!("{id}: {}", b.message)),
            _ => None,
        })
        .collect();
    if !blocked.is_empty() {
        return WriteResult::Blocked(format!(
            "Nothing was written: {}. Remove these transactions from the plan.",
            blocked.join("; ")
        ));
    }
    let mismatched = ids_where(ids, outcomes, |o| *o == Outcome::Mismatch);
    if !mismatched.is_empty() {
        return WriteResult::Mismatch(format!(
            "YNAB accepted the write but shows other categories afterwards for {}: check them in YNAB",
            mismatched.join(", ")
        ));
    }
    let changed = ids_where(ids, outcomes, |o| {
        matches!(o, Outcome::Diverged | Outcome::Missing)
    });
    if !changed.is_empty() {
        return WriteResult::Changed(format!(
            "YNAB changed {} between the preview and the write: nothing was written, a new preview and request follow",
            changed.join(", ")
        ));
    }
    WriteResult::Landed
}

fn ids_where(ids: &[String], outcomes: &[Outcome], f: impl Fn(&Outcome) -> bool) -> Vec<String> {
    ids.iter()
        .zip(outcomes)
        .filter(|(_, o)| f(o))
        .map(|(id, _)| id.clone())
        .collect()
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
