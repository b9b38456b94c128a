//! Unit tests of `logic/transaction/status.rs`.

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
