//! A Transaction's status from what its reconcile concluded: the phase, and conditions that
//! follow API conventions (`Ready` and `Converged` always; `Diverged`, `Blocked`,
//! `AwaitingApproval` and `Interrupted` only while true).

use k8s_openapi::jiff::Timestamp;

use crate::api::transaction::{TransactionPhase, TransactionStatus};
use crate::logic::status::conditions::{
    self, AWAITING_APPROVAL, BLOCKED, INTERRUPTED, Observed, READY, VALID,
};
use crate::logic::status::kstatus;

/// What a reconcile concluded about one Transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The Budget has not synced yet.
    Pending(String),
    /// The Budget's mirror has not synced since ledgerops started, so nothing new is known: the
    /// last conclusion stands (a restart does not flap Ready), or Pending when there is none.
    Unsynced(String),
    /// The spec cannot be applied as written.
    Invalid(String),
    /// A guard or a person forbids the write.
    Blocked {
        reason: &'static str,
        message: String,
    },
    /// Someone else changed the record.
    Diverged(String),
    /// Writes are disabled on the Budget; this is what would change.
    WouldWrite(String),
    /// Waiting for a person on an ApprovalRequest.
    AwaitingApproval(String),
    /// A write is in flight: its intent is recorded, its outcome not yet.
    Writing(String),
    /// A write failed or its outcome could not be settled; it is tried again.
    Interrupted(String),
    /// YNAB holds the declared state.
    Converged {
        reason: &'static str,
        message: String,
    },
}

pub const CONVERGED: &str = "Converged";
pub const DIVERGED: &str = "Diverged";

/// Whether a person's `resolve` annotation has been acted on once the Transaction is in `phase`:
/// while the write it asked for waits for an approval, the resolution must stay, or the approved
/// write would find the divergence again and never happen.
pub fn resolution_handled(phase: Option<TransactionPhase>) -> bool {
    phase != Some(TransactionPhase::AwaitingApproval)
}

/// Sets phase and conditions on `status` (the other fields are the reconciler's).
pub fn apply(
    status: &mut TransactionStatus,
    verdict: &Verdict,
    generation: Option<i64>,
    now: Timestamp,
) {
    if matches!(verdict, Verdict::Unsynced(_)) && status.phase.is_some() {
        return;
    }
    // Looked at again and still converged for this generation: how it converged (Written,
    // Adopted, NoChange) stays as recorded, so a resync of 10,000 converged Transactions
    // rewrites none of them.
    if matches!(verdict, Verdict::Converged { .. })
        && status.phase == Some(TransactionPhase::Converged)
        && status.observed_generation == generation
    {
        return;
    }
    let (phase, converged, ready_reason, ready_message) = match verdict {
        Verdict::Pending(m) | Verdict::Unsynced(m) => (
            TransactionPhase::Pending,
            Observed::new(CONVERGED, false, "Pending", m),
            "Pending",
            m,
        ),
        Verdict::Invalid(m) => (
            TransactionPhase::Invalid,
            Observed::new(CONVERGED, false, "Invalid", m),
            "Invalid",
            m,
        ),
        Verdict::Blocked { reason, message } => (
            TransactionPhase::Blocked,
            Observed::new(CONVERGED, false, *reason, message),
            *reason,
            message,
        ),
        Verdict::Diverged(m) => (
            TransactionPhase::Diverged,
            Observed::new(CONVERGED, false, "Diverged", m),
            "Diverged",
            m,
        ),
        Verdict::WouldWrite(m) => (
            TransactionPhase::WouldWrite,
            Observed::new(CONVERGED, false, "WritesDisabled", m),
            "WritesDisabled",
            m,
        ),
        Verdict::AwaitingApproval(m) => (
            TransactionPhase::AwaitingApproval,
            Observed::new(CONVERGED, false, "AwaitingApproval", m),
            "AwaitingApproval",
            m,
        ),
        Verdict::Writing(m) => (
            TransactionPhase::Writing,
            Observed::new(CONVERGED, false, "Writing", m),
            "Writing",
            m,
        ),
        Verdict::Interrupted(m) => (
            TransactionPhase::Interrupted,
            Observed::new(CONVERGED, false, "Interrupted", m),
            "Interrupted",
            m,
        ),
        Verdict::Converged { reason, message } => (
            TransactionPhase::Converged,
            Observed::new(CONVERGED, true, *reason, message),
            *reason,
            message,
        ),
    };
    let ready = Observed::new(
        READY,
        phase == TransactionPhase::Converged,
        ready_reason,
        ready_message.clone(),
    );
    let valid = match verdict {
        Verdict::Invalid(m) => Observed::new(VALID, false, "Invalid", m),
        _ => Observed::new(
            VALID,
            true,
            "Valid",
            "The spec can be applied to this transaction",
        ),
    };
    let mut c = status.conditions.clone();
    for observed in [converged, ready, valid] {
        c = conditions::set(&c, observed, generation, now);
    }
    let flags = [
        (
            DIVERGED,
            matches!(verdict, Verdict::Diverged(_))
                .then_some(("EditedInYnab", ready_message.as_str())),
        ),
        (
            BLOCKED,
            matches!(verdict, Verdict::Blocked { .. })
                .then_some((ready_reason, ready_message.as_str())),
        ),
        (
            AWAITING_APPROVAL,
            matches!(verdict, Verdict::AwaitingApproval(_))
                .then_some(("ApprovalRequested", ready_message.as_str())),
        ),
        (
            INTERRUPTED,
            matches!(verdict, Verdict::Interrupted(_))
                .then_some(("OutcomeUnknown", ready_message.as_str())),
        ),
    ];
    let c = conditions::set_flags(&c, &flags, generation, now);
    status.conditions = kstatus::summarize(&c, kstatus::transaction(phase), generation, now);
    status.phase = Some(phase);
    status.observed_generation = generation;
}

#[cfg(test)]
mod resolution_tests {
    use super::*;

    #[test]
    fn a_resolution_waits_with_its_write() {
        assert!(!resolution_handled(Some(
            TransactionPhase::AwaitingApproval
        )));
        for phase in [
            None,
            Some(TransactionPhase::Converged),
            Some(TransactionPhase::Diverged),
            Some(TransactionPhase::WouldWrite),
            Some(TransactionPhase::Writing),
        ] {
            assert!(resolution_handled(phase), "{phase:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restart_before_the_first_sync_keeps_the_last_conclusion() {
        let unsynced = Verdict::Unsynced("Waiting for Budget b to sync with YNAB".into());
        let mut fresh = TransactionStatus::default();
        apply(&mut fresh, &unsynced, Some(1), at(0));
        assert_eq!(fresh.phase, Some(TransactionPhase::Pending));
        let mut converged = TransactionStatus::default();
        let done = Verdict::Converged {
            reason: "Written",
            message: "ok".into(),
        };
        apply(&mut converged, &done, Some(1), at(0));
        let before = converged.clone();
        apply(&mut converged, &unsynced, Some(2), at(50));
        assert_eq!(converged, before, "nothing new is known: nothing changes");
    }

    #[test]
    fn converged_again_keeps_how_it_converged() {
        let mut status = TransactionStatus::default();
        let written = Verdict::Converged {
            reason: "Written",
            message: "Wrote uncategorized → Groceries".into(),
        };
        apply(&mut status, &written, Some(1), at(0));
        let before = status.clone();
        let looked_again = Verdict::Converged {
            reason: "NoChange",
            message: "YNAB holds the declared state".into(),
        };
        apply(&mut status, &looked_again, Some(1), at(60));
        assert_eq!(status, before, "a resync rewrites nothing");
        // A new generation is a new conclusion.
        apply(&mut status, &looked_again, Some(2), at(60));
        assert_eq!(status.observed_generation, Some(2));
        let ready = conditions::get(&status.conditions, conditions::READY).unwrap();
        assert_eq!(ready.reason, "NoChange");
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + s).unwrap()
    }

    fn types(s: &TransactionStatus) -> Vec<(String, String)> {
        s.conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect()
    }

    #[test]
    fn abnormal_conditions_are_present_only_while_true() {
        let mut s = TransactionStatus::default();
        apply(
            &mut s,
            &Verdict::Diverged("YNAB shows Dining".into()),
            Some(2),
            at(0),
        );
        assert_eq!(s.phase, Some(TransactionPhase::Diverged));
        assert!(types(&s).contains(&(DIVERGED.into(), "True".into())));
        assert_eq!(
            conditions::get(&s.conditions, READY).unwrap().status,
            "False"
        );
        apply(
            &mut s,
            &Verdict::Converged {
                reason: "Written",
                message: "ok".into(),
            },
            Some(3),
            at(10),
        );
        assert!(conditions::get(&s.conditions, DIVERGED).is_none());
        let ready = conditions::get(&s.conditions, READY).unwrap();
        assert_eq!(
            (
                ready.status.as_str(),
                ready.reason.as_str(),
                ready.observed_generation
            ),
            ("True", "Written", Some(3))
        );
        assert_eq!(s.observed_generation, Some(3));
    }

    #[test]
    fn every_verdict_has_its_phase_and_reason() {
        let cases = [
            (
                Verdict::Pending("p".into()),
                TransactionPhase::Pending,
                None,
            ),
            (
                Verdict::Invalid("i".into()),
                TransactionPhase::Invalid,
                None,
            ),
            (
                Verdict::Blocked {
                    reason: "Reconciled",
                    message: "b".into(),
                },
                TransactionPhase::Blocked,
                Some(BLOCKED),
            ),
            (
                Verdict::WouldWrite("w".into()),
                TransactionPhase::WouldWrite,
                None,
            ),
            (
                Verdict::AwaitingApproval("a".into()),
                TransactionPhase::AwaitingApproval,
                Some(AWAITING_APPROVAL),
            ),
            (
                Verdict::Interrupted("x".into()),
                TransactionPhase::Interrupted,
                Some(INTERRUPTED),
            ),
            (
                Verdict::Writing("w".into()),
                TransactionPhase::Writing,
                None,
            ),
        ];
        for (verdict, phase, flag) in cases {
            let mut s = TransactionStatus::default();
            apply(&mut s, &verdict, Some(1), at(0));
            assert_eq!(s.phase, Some(phase), "{verdict:?}");
            if let Some(flag) = flag {
                assert_eq!(
                    conditions::get(&s.conditions, flag).unwrap().status,
                    "True",
                    "{verdict:?}"
                );
            }
            let valid = conditions::get(&s.conditions, VALID).unwrap();
            assert_eq!(
                valid.status == "False",
                matches!(verdict, Verdict::Invalid(_))
            );
        }
    }
}
