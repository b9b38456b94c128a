//! What to do from YNAB's state, a person's resolution and a write an earlier run left
//! unsettled; and what a decision that writes nothing records.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::{RESOLVE, Seen, Step, converged, record_applied};
use crate::api::transaction::{Baseline, TransactionStatus};
use crate::logic::transaction::converge::{self, Expect, Precommit};
use crate::logic::transaction::status::Verdict;
use crate::logic::transaction::view;

/// What to do, and what a write checks YNAB's state against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub precommit: Precommit,
    pub expect: Expect,
    /// The write an earlier run started and never recorded the outcome of, settled by this
    /// decision.
    pub settled: Option<Settled>,
}

/// How an interrupted write ended, as YNAB shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The Event's note.
    pub note: String,
    /// Someone changed the transaction since: the Event is a Warning.
    pub warning: bool,
    /// Settled without writing: the approval that write spent is completed (`true`: it had
    /// landed). `None` when the write goes out now, under that approval.
    pub completes: Option<bool>,
}

/// Records in `status` what YNAB shows (`seen`) as the baseline of `generation`, unless one was
/// recorded for it already: the first read of a spec is what its first write holds to. Once
/// ledgerops has written or adopted a state, that state is the measure instead.
pub fn pin_baseline(
    status: &mut TransactionStatus,
    seen: &Seen,
    generation: Option<i64>,
    now: Timestamp,
) {
    if status.applied.is_some() {
        status.baseline = None;
        return;
    }
    let Some(generation) = generation else {
        return;
    };
    if status
        .baseline
        .as_ref()
        .is_none_or(|b| b.generation != generation)
    {
        status.baseline = Some(Baseline {
            generation,
            hash: seen.current.hash(),
            at: Time(now),
        });
    }
}

/// Whether a person's `resolve` annotation (`resolution`) says the spec wins over YNAB's state.
fn ours_wins(resolution: Option<&str>) -> bool {
    resolution == Some("ours")
}

/// What a write checks YNAB's state against: a person's `ours` measures from YNAB's current
/// state (the spec is written over it); otherwise what ledgerops last applied, or before its
/// first write, the baseline of this `generation`.
fn expectation(
    seen: &Seen,
    status: &TransactionStatus,
    resolution: Option<&str>,
    generation: Option<i64>,
) -> Expect {
    if ours_wins(resolution) {
        return Expect::Prior(Some(seen.current.clone()));
    }
    match (&status.applied, &status.baseline) {
        (Some(applied), _) => Expect::Prior(Some(converge::prior_of(applied))),
        // Still the baseline: the write holds to exactly that state (the batch compares it on
        // the fields it writes, which a hash could not).
        (None, Some(b)) if Some(b.generation) == generation && seen.current.hash() == b.hash => {
            Expect::Exactly(seen.current.clone())
        }
        (None, Some(b)) if Some(b.generation) == generation => Expect::Unchanged(b.hash.clone()),
        (None, _) => Expect::Prior(None),
    }
}

/// Decides from `seen` and the status of `generation`, with a person's `resolve` annotation
/// (`resolution`).
pub fn decide(
    seen: &Seen,
    status: &TransactionStatus,
    resolution: Option<&str>,
    generation: Option<i64>,
) -> Decision {
    let expect = expectation(seen, status, resolution, generation);
    // A person's resolution overrides what an interrupted write would settle to.
    let settled = status
        .intent
        .as_ref()
        .filter(|_| resolution.is_none())
        .and_then(|i| {
            let recorded = (i.target_hash.as_str(), i.from_hash.as_deref());
            let changed = seen.changed_since_intent;
            converge::settle_intent(&seen.current, &seen.target, recorded, changed)
                .map(|precommit| (i, precommit))
        });
    let Some((intent, precommit)) = settled else {
        let precommit = converge::precommit(&seen.current, &seen.target, &expect);
        return Decision {
            precommit,
            expect,
            settled: None,
        };
    };
    let how = match precommit {
        Precommit::AlreadyTarget | Precommit::NoChange => {
            "it had landed: adopted, not written again"
        }
        Precommit::Write => "it had not landed: writing it now",
        Precommit::Diverged => "someone changed the transaction since: nothing is written",
    };
    let settled = Settled {
        note: format!(
            "Write {} was interrupted before its outcome was recorded; YNAB shows {how}",
            intent.attempt_id
        ),
        warning: precommit == Precommit::Diverged,
        completes: (precommit != Precommit::Write).then_some(precommit != Precommit::Diverged),
    };
    Decision {
        precommit,
        expect,
        settled: Some(settled),
    }
}

/// The step of a decision that writes nothing, recorded in `status` at `now`; `None` for
/// [`Precommit::Write`].
pub fn without_write(
    precommit: Precommit,
    seen: &Seen,
    resolution: Option<&str>,
    status: &mut TransactionStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> Option<Step> {
    let verdict = match precommit {
        Precommit::Write => return None,
        Precommit::Diverged if resolution == Some("theirs") => {
            status.accepted_generation = generation;
            record_applied(status, &seen.current, now);
            status.intent = None;
            converged(
                "AcceptedTheirs",
                "YNAB's state is kept, as a person asked: ledgerops writes again when the spec changes",
            )
        }
        Precommit::NoChange => {
            status.intent = None;
            converged("NoChange", "YNAB holds the declared state")
        }
        Precommit::AlreadyTarget => {
            status.intent = None;
            record_applied(status, &seen.target, now);
            converged(
                "Adopted",
                "YNAB already holds the declared state: adopted without writing",
            )
        }
        Precommit::Diverged => {
            if status.intent.take().is_some() {
                // The interrupted write is settled as ours: someone changed the record after it,
                // and that stays a divergence rather than becoming a first write.
                record_applied(status, &seen.target, now);
            }
            Verdict::Diverged(view::divergence_message(
                &seen.current_words,
                &seen.applied_words,
                &seen.target_words,
                RESOLVE,
            ))
        }
    };
    Some(Step::idle(verdict))
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
