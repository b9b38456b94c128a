//! How a plan's operation that ended is recorded: how many of its changes YNAB holds, and what
//! the plan's status keeps of it. The journal's completion is made of the same tally.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::AppliedChange;
use super::operation::Conclusion;
use crate::api::common::DecisionRecord;
use crate::api::plan::{CategorizationPlanStatus, Progress};
use crate::logic::budget::mirror::Mirror;

/// What an operation that ended did.
#[derive(Debug)]
pub struct End<'a> {
    pub operation_id: &'a str,
    pub decision: Option<&'a DecisionRecord>,
    pub changes: &'a [AppliedChange],
    /// Changes YNAB holds, as the write counted them; 0 to count them on the mirror.
    pub written: u32,
    pub conclusion: &'a Conclusion,
    /// When it ended.
    pub at: Timestamp,
}

/// How many of an operation's changes YNAB holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tally {
    pub written: u32,
    pub total: u32,
    /// The transactions YNAB does not show where the operation put them.
    pub not_written: Vec<String>,
}

/// Counts `end`'s changes on `mirror`, read after it ended.
pub fn tally(end: &End<'_>, mirror: &Mirror) -> Tally {
    let not_written: Vec<String> = end
        .changes
        .iter()
        .filter(|c| {
            mirror
                .transactions
                .get(&c.transaction_id)
                .is_none_or(|tx| tx.category_id != c.to_category_id)
        })
        .map(|c| c.transaction_id.clone())
        .collect();
    let total = u32::try_from(end.changes.len()).unwrap_or(u32::MAX);
    let held = total.saturating_sub(u32::try_from(not_written.len()).unwrap_or(u32::MAX));
    Tally {
        written: if end.written > 0 { end.written } else { held },
        total,
        not_written,
    }
}

/// Records in `status` how the operation ended, at `generation` of the spec: one that wrote
/// something is the plan's operation (undone with `spec.undoOf`), and one over for good
/// settles the plan until its spec changes.
pub fn record_end(
    status: &mut CategorizationPlanStatus,
    end: &End<'_>,
    tally: &Tally,
    generation: Option<i64>,
) {
    status.intent = None;
    status.progress = Some(Progress {
        written: tally.written,
        total: tally.total,
        ..status.progress.clone().unwrap_or_default()
    });
    if tally.written > 0 {
        status.operation_id = Some(end.operation_id.to_owned());
        status.applied_at = Some(Time(end.at));
        status.decision = end.decision.cloned();
    }
    if matches!(
        end.conclusion,
        Conclusion::Applied | Conclusion::PartiallyApplied(_) | Conclusion::Failed(_)
    ) {
        status.finished_generation = generation;
    }
}

#[cfg(test)]
#[path = "end_tests.rs"]
mod tests;
