//! Unit tests of `logic/transaction/step/decide.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::super::fixtures::{at, category, seen};
use super::*;
use crate::api::common::WriteIntent;
use crate::logic::transaction::converge::{Allocation, EndState};

fn converged(reason: &'static str, message: &str) -> Verdict {
    Verdict::Converged {
        reason,
        message: message.into(),
    }
}

fn intent(target: &EndState, from: Option<&EndState>) -> WriteIntent {
    WriteIntent {
        attempt_id: "uid-1-1790000000000".into(),
        target_hash: target.hash(),
        from_hash: from.map(EndState::hash),
        knowledge: Some(40),
        started_at: Time(at(0)),
    }
}

fn settled(how: &str, warning: bool, completes: Option<bool>) -> Option<Settled> {
    Some(Settled {
        note: format!(
            "Write uid-1-1790000000000 was interrupted before its outcome was recorded; YNAB shows {how}"
        ),
        warning,
        completes,
    })
}

#[test]
fn a_decision_from_ynab_a_resolution_and_an_interrupted_write() {
    let (ours, wanted, theirs) = (
        category("cat-bakery"),
        category("cat-groceries"),
        category("cat-dining"),
    );
    let applied = Some(super::super::applied_state(&ours, at(0)));
    let uncategorized = EndState {
        allocation: Some(Allocation::Uncategorized),
        ..EndState::default()
    };
    let status = |intent: Option<WriteIntent>| TransactionStatus {
        applied: applied.clone(),
        intent,
        ..TransactionStatus::default()
    };
    let prior = Expect::Prior(Some(ours.clone()));
    // (what, status, resolution, YNAB shows) → decision
    let cases: Vec<(&str, TransactionStatus, Option<&str>, EndState, Decision)> = vec![
        (
            "YNAB shows what was applied: write",
            status(None),
            None,
            ours.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: prior.clone(),
                settled: None,
            },
        ),
        (
            "never applied: write",
            TransactionStatus::default(),
            None,
            uncategorized.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: Expect::Prior(None),
                settled: None,
            },
        ),
        (
            "someone else's category",
            status(None),
            None,
            theirs.clone(),
            Decision {
                precommit: Precommit::Diverged,
                expect: prior.clone(),
                settled: None,
            },
        ),
        (
            "theirs: still a divergence, kept as YNAB's",
            status(None),
            Some("theirs"),
            theirs.clone(),
            Decision {
                precommit: Precommit::Diverged,
                expect: prior.clone(),
                settled: None,
            },
        ),
        (
            "ours: measured from YNAB's state, so written over it",
            status(None),
            Some("ours"),
            theirs.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: Expect::Prior(Some(theirs.clone())),
                settled: None,
            },
        ),
        (
            "already there, as applied",
            TransactionStatus {
                applied: Some(super::super::applied_state(&wanted, at(0))),
                ..TransactionStatus::default()
            },
            None,
            wanted.clone(),
            Decision {
                precommit: Precommit::NoChange,
                expect: Expect::Prior(Some(wanted.clone())),
                settled: None,
            },
        ),
        (
            "interrupted, and it had landed",
            status(Some(intent(&wanted, Some(&ours)))),
            None,
            wanted.clone(),
            Decision {
                precommit: Precommit::AlreadyTarget,
                expect: prior.clone(),
                settled: settled(
                    "it had landed: adopted, not written again",
                    false,
                    Some(true),
                ),
            },
        ),
        (
            "interrupted before it went out",
            status(Some(intent(&wanted, Some(&ours)))),
            None,
            ours.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: prior.clone(),
                settled: settled("it had not landed: writing it now", false, None),
            },
        ),
        (
            "interrupted, then someone changed it",
            status(Some(intent(&wanted, Some(&ours)))),
            None,
            theirs.clone(),
            Decision {
                precommit: Precommit::Diverged,
                expect: prior.clone(),
                settled: settled(
                    "someone changed the transaction since: nothing is written",
                    true,
                    Some(false),
                ),
            },
        ),
        (
            "interrupted for a spec that changed since: decided afresh",
            status(Some(intent(&theirs, Some(&ours)))),
            None,
            ours.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: prior.clone(),
                settled: None,
            },
        ),
        (
            "interrupted, but a person's resolution overrides it",
            status(Some(intent(&wanted, Some(&ours)))),
            Some("ours"),
            theirs.clone(),
            Decision {
                precommit: Precommit::Write,
                expect: Expect::Prior(Some(theirs.clone())),
                settled: None,
            },
        ),
    ];
    for (what, status, resolution, current, want) in cases {
        let got = decide(&seen(current, wanted.clone()), &status, resolution, Some(3));
        assert_eq!(got, want, "{what}");
    }
}

/// The soak's `person-overwritten` after a leader kill: a write landed, its answer was lost,
/// a person put the transaction back, and the next leader read "where it started" as "never
/// went out". What YNAB says changed since the decision tells the two apart.
#[test]
fn an_interrupted_write_that_shows_its_start_but_changed_since_is_not_sent_again() {
    let (ours, wanted) = (category("cat-bakery"), category("cat-groceries"));
    let status = TransactionStatus {
        applied: Some(super::super::applied_state(&ours, at(0))),
        intent: Some(intent(&wanted, Some(&ours))),
        ..TransactionStatus::default()
    };
    let cases = [
        (Some(false), Precommit::Write),
        (None, Precommit::Write),
        (Some(true), Precommit::Diverged),
    ];
    for (changed, want) in cases {
        let mut seen = seen(ours.clone(), wanted.clone());
        seen.changed_since_intent = changed;
        let got = decide(&seen, &status, None, Some(3));
        assert_eq!(got.precommit, want, "changed since: {changed:?}");
        assert_eq!(
            got.settled.map(|s| s.warning),
            Some(want == Precommit::Diverged)
        );
    }
}

/// Before its first write, a Transaction holds to what YNAB showed when its spec was first read:
/// an edit made since is someone else's (the soak's `person-overwritten`: a spouse recategorised
/// a transaction 24 s after it was declared, and the first write went over it).
#[test]
fn the_first_write_holds_to_the_baseline_of_its_generation() {
    let (uncategorized, wanted, theirs) = (
        EndState {
            allocation: Some(Allocation::Uncategorized),
            ..EndState::default()
        },
        category("cat-groceries"),
        category("cat-dining"),
    );
    let baseline = |generation: i64, of: &EndState| TransactionStatus {
        baseline: Some(Baseline {
            generation,
            hash: of.hash(),
            at: Time(at(0)),
        }),
        ..TransactionStatus::default()
    };
    let unchanged = Expect::Unchanged(uncategorized.hash());
    // (what, status, resolution, YNAB shows now) → (precommit, expect)
    type Case<'a> = (
        &'a str,
        TransactionStatus,
        Option<&'a str>,
        &'a EndState,
        Precommit,
        Expect,
    );
    let cases: Vec<Case> = vec![
        (
            "YNAB still shows the baseline: write",
            baseline(3, &uncategorized),
            None,
            &uncategorized,
            Precommit::Write,
            Expect::Exactly(uncategorized.clone()),
        ),
        (
            "someone categorised it since: nothing is written",
            baseline(3, &uncategorized),
            None,
            &theirs,
            Precommit::Diverged,
            unchanged.clone(),
        ),
        (
            "someone made it what the spec asks: adopted",
            baseline(3, &uncategorized),
            None,
            &wanted,
            Precommit::AlreadyTarget,
            unchanged.clone(),
        ),
        (
            "a person resolved it as ours: written over their edit",
            baseline(3, &uncategorized),
            Some("ours"),
            &theirs,
            Precommit::Write,
            Expect::Prior(Some(theirs.clone())),
        ),
        (
            "a baseline of an older generation does not hold",
            baseline(2, &uncategorized),
            None,
            &theirs,
            Precommit::Write,
            Expect::Prior(None),
        ),
        (
            "once something was applied, that is the measure",
            TransactionStatus {
                applied: Some(super::super::applied_state(&wanted, at(0))),
                ..baseline(3, &uncategorized)
            },
            None,
            &uncategorized,
            Precommit::Write,
            Expect::Prior(Some(wanted.clone())),
        ),
    ];
    for (what, status, resolution, current, precommit, expect) in cases {
        let got = decide(
            &seen(current.clone(), wanted.clone()),
            &status,
            resolution,
            Some(3),
        );
        let want = Decision {
            precommit,
            expect,
            settled: None,
        };
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn the_baseline_is_pinned_once_per_generation_until_something_is_applied() {
    let (first, later) = (category("cat-bakery"), category("cat-dining"));
    let wanted = category("cat-groceries");
    let mut status = TransactionStatus::default();
    pin_baseline(
        &mut status,
        &seen(first.clone(), wanted.clone()),
        Some(1),
        at(0),
    );
    let pinned = status.baseline.clone().expect("pinned at the first read");
    assert_eq!(
        (pinned.generation, pinned.hash.as_str()),
        (1, first.hash().as_str())
    );
    // A later read of the same generation keeps the first one.
    pin_baseline(
        &mut status,
        &seen(later.clone(), wanted.clone()),
        Some(1),
        at(5),
    );
    assert_eq!(status.baseline.as_ref(), Some(&pinned));
    // A new spec is read afresh.
    pin_baseline(
        &mut status,
        &seen(later.clone(), wanted.clone()),
        Some(2),
        at(9),
    );
    let repinned = status.baseline.clone().unwrap();
    assert_eq!((repinned.generation, repinned.hash), (2, later.hash()));
    // Once a state is applied, the baseline goes.
    status.applied = Some(super::super::applied_state(&wanted, at(10)));
    pin_baseline(&mut status, &seen(later, wanted), Some(2), at(11));
    assert_eq!(status.baseline, None);
}

/// Which state a status records as applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applied {
    Before,
    Current,
    Target,
}

#[test]
fn a_decision_that_writes_nothing() {
    let (ours, wanted, theirs) = (
        category("cat-bakery"),
        category("cat-groceries"),
        category("cat-dining"),
    );
    let before = super::super::applied_state(&ours, at(0));
    let in_flight = Some(intent(&wanted, Some(&ours)));
    let diverged = Verdict::Diverged(
        "Someone changed this transaction in YNAB: it shows Dining Out, ledgerops last applied Bakery, and the spec asks for Groceries. Nothing was written. Annotate ledgerops.dev/resolve=ours to write the spec anyway, or ledgerops.dev/resolve=theirs to keep YNAB's.".into(),
    );
    // (what, decision, resolution, an intent in flight) →
    // (step, accepted at, applied, intent kept)
    type Case = (
        &'static str,
        Precommit,
        Option<&'static str>,
        bool,
        (Option<Step>, Option<i64>, Applied, bool),
    );
    let cases: Vec<Case> = vec![
        (
            "a write",
            Precommit::Write,
            None,
            true,
            (None, None, Applied::Before, true),
        ),
        (
            "theirs kept",
            Precommit::Diverged,
            Some("theirs"),
            true,
            (
                Some(Step::idle(converged(
                    "AcceptedTheirs",
                    "YNAB's state is kept, as a person asked: ledgerops writes again when the spec changes",
                ))),
                Some(3),
                Applied::Current,
                false,
            ),
        ),
        (
            "nothing to change",
            Precommit::NoChange,
            None,
            true,
            (
                Some(Step::idle(converged(
                    "NoChange",
                    "YNAB holds the declared state",
                ))),
                None,
                Applied::Before,
                false,
            ),
        ),
        (
            "adopted",
            Precommit::AlreadyTarget,
            None,
            false,
            (
                Some(Step::idle(converged(
                    "Adopted",
                    "YNAB already holds the declared state: adopted without writing",
                ))),
                None,
                Applied::Target,
                false,
            ),
        ),
        (
            "diverged",
            Precommit::Diverged,
            None,
            false,
            (
                Some(Step::idle(diverged.clone())),
                None,
                Applied::Before,
                false,
            ),
        ),
        (
            "diverged after an interrupted write of ours",
            Precommit::Diverged,
            None,
            true,
            (
                Some(Step::idle(diverged.clone())),
                None,
                Applied::Target,
                false,
            ),
        ),
        (
            "ours does not keep YNAB's state",
            Precommit::Diverged,
            Some("ours"),
            false,
            (Some(Step::idle(diverged)), None, Applied::Before, false),
        ),
    ];
    for (what, precommit, resolution, interrupted, want) in cases {
        let mut status = TransactionStatus {
            applied: Some(before.clone()),
            intent: in_flight.clone().filter(|_| interrupted),
            ..TransactionStatus::default()
        };
        let now = at(60);
        let seen = seen(theirs.clone(), wanted.clone());
        let step = without_write(precommit, &seen, resolution, &mut status, Some(3), now);
        let applied = match status.applied {
            Some(a) if a == before => Applied::Before,
            Some(a) if a == super::super::applied_state(&theirs, now) => Applied::Current,
            Some(a) if a == super::super::applied_state(&wanted, now) => Applied::Target,
            other => panic!("{what}: applied {other:?}"),
        };
        let got = (
            step,
            status.accepted_generation,
            applied,
            status.intent.is_some(),
        );
        assert_eq!(got, want, "{what}");
    }
}
