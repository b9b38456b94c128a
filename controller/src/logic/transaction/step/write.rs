//! The write: what holds it back before the approval gate, the intent recorded before it goes
//! out, and what its outcome means for the Transaction.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::{RESOLVE, Seen, Step, converged, record_applied, refused};
use crate::api::budget::BudgetSpec;
use crate::api::common::{DecisionRecord, WriteIntent};
use crate::api::transaction::TransactionStatus;
use crate::logic::plan::PlanError;
use crate::logic::transaction::batch::Outcome;
use crate::logic::transaction::converge;
use crate::logic::transaction::split;
use crate::logic::transaction::status::Verdict;
use crate::ynab_model::TransactionSummary;

/// What stops the write before anyone is asked about it: a guard on the transaction (reconciled,
/// closed month, a split YNAB cannot change), or the Budget `budget` (writes disabled,
/// suspended).
pub fn held_back(
    seen: &Seen,
    ynab_tx: &TransactionSummary,
    budget: &str,
    spec: &BudgetSpec,
) -> Option<Step> {
    let guarded = converge::guard(ynab_tx, spec.closed_through.as_deref())
        .or_else(|| split::unwritable(&seen.id, &seen.current, &seen.target));
    let change = &seen.change_words;
    let verdict = if let Some(blocked) = guarded {
        Verdict::Blocked {
            reason: blocked.reason,
            message: blocked.message,
        }
    } else if !spec.writes.enabled {
        Verdict::WouldWrite(format!(
            "Would write {change}; Budget {budget} has spec.writes.enabled: false"
        ))
    } else if spec.suspend {
        // Nothing is written, nor asked for, while the Budget is suspended; unsuspending it
        // wakes the Transaction again.
        Verdict::Blocked {
            reason: "Suspended",
            message: format!(
                "Would write {change}; Budget {budget} is suspended (spec.suspend: true), so nothing is written until it is set back to false"
            ),
        }
    } else {
        return None;
    };
    Some(Step::idle(verdict))
}

/// Approved, but the Budget's token is not there to write with.
pub fn no_token(budget: &str) -> Step {
    Step::not_ready(Verdict::Pending(format!(
        "Waiting for the YNAB token of Budget {budget}"
    )))
}

/// Records in `status` the intent of the write `attempt_id`, started at `now`, and returns what
/// status shows while it is in flight. The intent is durable before the write: a restart that
/// finds it re-reads YNAB to settle it.
pub fn start(
    status: &mut TransactionStatus,
    seen: &Seen,
    attempt_id: &str,
    now: Timestamp,
) -> Verdict {
    status.intent = Some(WriteIntent {
        attempt_id: attempt_id.to_owned(),
        target_hash: seen.target.hash(),
        from_hash: Some(seen.current.hash()),
        knowledge: Some(seen.knowledge),
        started_at: Time(now),
    });
    Verdict::Writing(format!("Writing {}", seen.change_words))
}

/// Whether the write's outcome is known, so that the approval it spent is completed: `Some`
/// with whether YNAB holds the change, `None` while it is tried again under that approval.
pub fn approval_used(outcome: &Outcome) -> Option<bool> {
    match outcome {
        Outcome::NotLanded(_)
        | Outcome::Unsettled(_)
        | Outcome::Waiting { .. }
        | Outcome::Skipped => None,
        known => Some(known.holds_target()),
    }
}

/// What the write's `outcome`, known at `now`, means: recorded in `status`, with `decision`
/// (who authorized it) kept when YNAB holds the change.
pub fn written(
    outcome: Outcome,
    seen: &Seen,
    decision: DecisionRecord,
    status: &mut TransactionStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> Step {
    if outcome.holds_target() {
        status.decision = Some(decision);
    }
    // Whether it landed is not known: the intent stays, and is settled by what YNAB says
    // changed since it was decided, in this process or the next.
    if !matches!(outcome, Outcome::Unsettled(_)) {
        status.intent = None;
    }
    let (id, change) = (&seen.id, &seen.change_words);
    let verdict = match outcome {
        Outcome::Written => {
            record_applied(status, &seen.target, now);
            converged("Written", &format!("Wrote {change}"))
        }
        Outcome::AlreadyTarget | Outcome::NoChange => {
            record_applied(status, &seen.target, now);
            converged(
                "Adopted",
                "YNAB already held the declared state: adopted without writing",
            )
        }
        Outcome::Diverged => Verdict::Diverged(format!(
            "YNAB changed {id} just before the write, so nothing was written: look at it in YNAB, then annotate {RESOLVE}=ours or theirs"
        )),
        Outcome::Missing => Verdict::Invalid(PlanError::UnknownTransaction(id.clone()).to_string()),
        Outcome::Blocked(b) => Verdict::Blocked {
            reason: b.reason,
            message: b.message,
        },
        // What was written is what an edit is measured against from now on, as for a write
        // that landed: YNAB may show another category because someone moved the transaction
        // between the write and the read that settled it, and no other object's policy may
        // then put back what ledgerops wrote over that edit (see `logic::approval::edited`).
        Outcome::Mismatch => {
            record_applied(status, &seen.target, now);
            Verdict::Diverged(format!(
                "YNAB accepted the write of {id} but shows something else: check it in YNAB"
            ))
        }
        Outcome::Refused(why) => {
            status.refused_generation = generation;
            refused(format!(
                "YNAB refused the write of {change} ({why}); it is not sent again until the spec changes"
            ))
        }
        // What was approved no longer holds: look again at once, to ask anew.
        Outcome::Stale(why) => {
            return Step::after(Verdict::Pending(why), Duration::from_secs(1));
        }
        // Nothing went out, and nothing needs a person: it goes when its turn comes.
        Outcome::Waiting { until, why } => {
            let wait = Duration::try_from(until.duration_since(now))
                .unwrap_or_default()
                .max(Duration::from_secs(1));
            return Step::after(
                Verdict::Pending(format!("The write of {change} waits: {why}")),
                wait,
            );
        }
        Outcome::Unsettled(why) => {
            let message = format!(
                "The answer to the write of {change} was lost ({why}); the next read of YNAB tells whether it landed, and it is not sent again before"
            );
            return Step::after(Verdict::Interrupted(message), Duration::from_secs(30));
        }
        Outcome::Skipped | Outcome::NotLanded(_) => {
            let why = match outcome {
                Outcome::NotLanded(why) => why,
                _ => "skipped".into(),
            };
            let message =
                format!("The write of {change} did not land ({why}); ledgerops tries again");
            return Step::after(Verdict::Interrupted(message), Duration::from_secs(30));
        }
    };
    Step::idle(verdict)
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
