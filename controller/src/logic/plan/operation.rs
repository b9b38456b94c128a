//! A plan's write as one operation: its changes go out in chunks of at most `maxBatchSize`, one
//! bulk update each, in order, and the operation ends when every chunk landed or one stopped it.
//! YNAB has no transactions across requests, so a stop after a chunk landed leaves the plan
//! partly applied: that is said, journaled and undoable, never hidden.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::outcome::WriteResult;
use super::step::Step;
use super::undo::AppliedChange;
use crate::api::plan::PlanPhase;
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::status::PlanVerdict;
use crate::logic::transaction::batch::WriteItem;
use crate::logic::transaction::converge::{Allocation, EndState, Expect};

/// How an operation ended, from how many changes YNAB holds and what stopped it, if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conclusion {
    /// Every change is in YNAB.
    Applied,
    /// Some changes landed, then the operation stopped for a reason a retry cannot fix.
    PartiallyApplied(String),
    /// Nothing landed, and a retry cannot fix it (YNAB refused, or shows something else).
    Failed(String),
    /// Nothing landed: a guard forbids a change.
    Blocked(String),
    /// Nothing landed: the approved preview no longer holds, so it is previewed again.
    Restart(String),
    /// A request failed in a way a later try may fix: the same approval goes on.
    Retry(String),
    /// The rest waits for its turn in the token's hour, until `until`: the same approval goes
    /// on then.
    Waiting { until: Timestamp, message: String },
}

/// The operation's end after `written` of `total` changes are in YNAB, stopped by `stop` (or
/// not stopped, when `None`).
pub fn conclude(written: usize, total: usize, stop: Option<&WriteResult>) -> Conclusion {
    let partly = |why: &str| {
        Conclusion::PartiallyApplied(format!(
            "{written} of {total} changes are in YNAB, then the write stopped: {why}. YNAB has no transactions across requests, so what landed stays; it is journaled and undone with spec.undoOf. Edit the plan to apply the rest."
        ))
    };
    match stop {
        None => Conclusion::Applied,
        Some(WriteResult::Landed) => Conclusion::Applied,
        Some(WriteResult::NotLanded(why)) => Conclusion::Retry(format!(
            "{written} of {total} changes are in YNAB; the next did not land ({why}); ledgerops tries again with the same approval"
        )),
        Some(WriteResult::Waiting { until, why }) => Conclusion::Waiting {
            until: *until,
            message: format!(
                "{written} of {total} changes are in YNAB; the rest goes out with the same approval once its turn comes ({why})"
            ),
        },
        Some(WriteResult::Mismatch(why)) => Conclusion::Failed(why.clone()),
        Some(WriteResult::Refused(why)) if written == 0 => Conclusion::Failed(why.clone()),
        Some(WriteResult::Blocked(why)) if written == 0 => Conclusion::Blocked(why.clone()),
        Some(WriteResult::Stale(why) | WriteResult::Changed(why)) if written == 0 => {
            Conclusion::Restart(why.clone())
        }
        Some(
            WriteResult::Refused(why)
            | WriteResult::Blocked(why)
            | WriteResult::Stale(why)
            | WriteResult::Changed(why),
        ) => partly(why),
    }
}

/// The transactions of `changes`, a write decided at `knowledge`, that YNAB changed since to
/// something other than the write's target: someone's edit, or the write landed and was undone
/// since (an A→B→A its fields cannot show). `None` when the mirror does not remember that far.
pub fn moved_elsewhere(
    changes: &[AppliedChange],
    mirror: &Mirror,
    knowledge: i64,
) -> Option<BTreeSet<String>> {
    let mut moved = BTreeSet::new();
    for c in changes {
        let id = &c.transaction_id;
        let at_target = mirror
            .transactions
            .get(id)
            .is_some_and(|t| t.category_id == c.to_category_id);
        if mirror.changed_since(id, knowledge)? && !at_target {
            moved.insert(id.clone());
        }
    }
    Some(moved)
}

/// How an operation cut off by a restart ended, when its approved preview no longer holds (YNAB
/// changed meanwhile): each change its journal recorded either holds, never went out, or was
/// changed by someone since and is left alone; one that a later operation moved on from
/// (`moved_since`) had landed, and one YNAB moved elsewhere since the write was decided
/// (`elsewhere`, see [`moved_elsewhere`]) is left alone. `None` when nothing landed and nothing
/// moved since the decision: the plan starts over.
pub fn interrupted(
    changes: &[AppliedChange],
    mirror: &Mirror,
    moved_since: &BTreeSet<String>,
    elsewhere: &BTreeSet<String>,
) -> Option<Conclusion> {
    let category = |id: &str| mirror.transactions.get(id).map(|t| t.category_id.clone());
    let landed = changes
        .iter()
        .filter(|c| {
            moved_since.contains(&c.transaction_id)
                || category(&c.transaction_id) == Some(c.to_category_id.clone())
        })
        .count();
    let changed: Vec<&str> = changes
        .iter()
        .filter(|c| {
            let now = category(&c.transaction_id);
            let moved =
                now != Some(c.to_category_id.clone()) && now != Some(c.from_category_id.clone());
            moved || elsewhere.contains(&c.transaction_id)
        })
        .map(|c| c.transaction_id.as_str())
        .collect();
    if landed == 0 && elsewhere.is_empty() {
        return None;
    }
    if landed == changes.len() {
        return Some(Conclusion::Applied);
    }
    if landed == 0 {
        // It may have landed and been undone: starting over would write it again, over that.
        let moved: Vec<&str> = elsewhere.iter().map(String::as_str).collect();
        return Some(Conclusion::Failed(format!(
            "the write was cut off before its outcome was recorded, and YNAB changed {} since it was decided (someone's edit, or this write undone): nothing is written over that under this approval. Change the plan's spec to ask again",
            moved.join(", ")
        )));
    }
    let why = if changed.is_empty() {
        "the rest did not go out before the restart, and YNAB changed since".to_owned()
    } else {
        format!(
            "YNAB changed {} since (someone else's edit, left alone)",
            changed.join(", ")
        )
    };
    Some(conclude(
        landed,
        changes.len(),
        Some(&WriteResult::Changed(format!(
            "the write was interrupted; {why}"
        ))),
    ))
}

impl Conclusion {
    /// Whether the operation is over: its approval is used up and its journal completed.
    pub fn is_final(&self) -> bool {
        !matches!(self, Self::Retry(_) | Self::Waiting { .. })
    }

    /// The word the journal's completion records.
    pub fn outcome(&self) -> &'static str {
        match self {
            Self::Applied => "Applied",
            Self::PartiallyApplied(_) => "PartiallyApplied",
            Self::Failed(_)
            | Self::Blocked(_)
            | Self::Restart(_)
            | Self::Retry(_)
            | Self::Waiting { .. } => "Failed",
        }
    }

    /// Why the operation stopped short, if it did.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Applied => None,
            Self::PartiallyApplied(m)
            | Self::Failed(m)
            | Self::Blocked(m)
            | Self::Restart(m)
            | Self::Retry(m)
            | Self::Waiting { message: m, .. } => Some(m),
        }
    }

    /// The plan's verdict at `now`, and when to look again. `applied` is the message of an
    /// applied plan.
    pub fn verdict(&self, applied: String, now: Timestamp) -> Step {
        match self {
            Self::Applied => Step::on_change(PlanVerdict::Applied(applied)),
            Self::PartiallyApplied(m) => Step::on_change(PlanVerdict::PartiallyApplied(m.clone())),
            Self::Failed(m) => Step::on_change(PlanVerdict::Failed(m.clone())),
            Self::Blocked(m) => Step::on_change(PlanVerdict::Blocked {
                phase: PlanPhase::Blocked,
                reason: "GuardedTransaction",
                message: m.clone(),
            }),
            // The write path just re-read YNAB: the next preview sees what changed. The wait
            // bounds what a plan that keeps going stale can cost.
            Self::Restart(m) => {
                Step::after(PlanVerdict::Pending(m.clone()), Duration::from_secs(60))
            }
            Self::Retry(m) => Step::after(
                PlanVerdict::Applying {
                    interrupted: Some(m.clone()),
                },
                Duration::from_secs(30),
            ),
            // Nothing went out: looking again before its turn would find the same.
            Self::Waiting { until, message } => Step::after(
                PlanVerdict::Applying {
                    interrupted: Some(message.clone()),
                },
                Duration::try_from(until.duration_since(now))
                    .unwrap_or_default()
                    .max(Duration::from_secs(1)),
            ),
        }
    }
}

/// The write that moves one transaction as the preview shows, only if YNAB still shows its
/// "before".
pub fn write_item(change: &AppliedChange) -> WriteItem {
    let allocation = |id: &Option<String>| {
        let a = id
            .clone()
            .map_or(Allocation::Uncategorized, Allocation::Category);
        EndState {
            allocation: Some(a),
            ..EndState::default()
        }
    };
    WriteItem {
        transaction_id: change.transaction_id.clone(),
        target: allocation(&change.to_category_id),
        expect: Expect::Exactly(allocation(&change.from_category_id)),
    }
}

#[cfg(test)]
#[path = "operation_tests.rs"]
mod tests;
