//! Unit tests of `logic/transaction/step/write.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use serde_json::json;

use super::super::fixtures::{at, category, seen};
use super::*;
use crate::logic::plan::fixtures::mirror;
use crate::logic::transaction::converge::{Allocation, EndState, Line};
use crate::ynab_model::ClearedStatus;

fn spec(enabled: bool, suspend: bool, closed_through: Option<&str>) -> BudgetSpec {
    serde_json::from_value(json!({
        "planId": "last-used",
        "tokenSecretRef": {"name": "ynab", "key": "token"},
        "writes": {"enabled": enabled},
        "suspend": suspend,
        "closedThrough": closed_through,
    }))
    .expect("a Budget spec")
}

fn bakery(cleared: ClearedStatus) -> TransactionSummary {
    let mut tx = mirror().transactions["tx-048"].clone();
    tx.cleared = cleared;
    tx
}

fn blocked(reason: &'static str, message: &str) -> Verdict {
    Verdict::Blocked {
        reason,
        message: message.into(),
    }
}

fn split() -> EndState {
    let line = |category: &str| Line {
        amount: -4_200,
        category_id: category.into(),
        memo: None,
    };
    EndState {
        allocation: Some(Allocation::split(vec![line("cat-a"), line("cat-b")])),
        ..EndState::default()
    }
}

#[test]
fn what_holds_a_write_back_before_anyone_is_asked() {
    let reconciled = blocked(
        "Reconciled",
        "Transaction tx-048 is reconciled: ledgerops never edits a reconciled transaction. Unreconcile it in YNAB first, or take the change out of the spec.",
    );
    let closed = blocked(
        "ClosedMonth",
        "Transaction tx-048 is dated 2026-09-16, in a month the Budget closes (spec.closedThrough: 2026-09): reopen the month on the Budget, or take the change out of the spec.",
    );
    let split_in_ynab = blocked(
        "SplitInYnab",
        "Transaction tx-048 is split in YNAB, and YNAB's API cannot change or remove the lines of a split: change the split in YNAB to what the spec declares (ledgerops then adopts it), or change the spec's categoryId or split to match YNAB, or remove them from the spec.",
    );
    let disabled = Verdict::WouldWrite(
        "Would write Dining Out → Groceries; Budget household has spec.writes.enabled: false"
            .into(),
    );
    let suspended = blocked(
        "Suspended",
        "Would write Dining Out → Groceries; Budget household is suspended (spec.suspend: true), so nothing is written until it is set back to false",
    );
    let cleared = ClearedStatus::Cleared;
    // (what, YNAB's record, YNAB's state, Budget) → step
    let cases: Vec<(
        &str,
        TransactionSummary,
        EndState,
        BudgetSpec,
        Option<Verdict>,
    )> = vec![
        (
            "nothing",
            bakery(cleared),
            category("cat-dining"),
            spec(true, false, None),
            None,
        ),
        (
            "an open month",
            bakery(cleared),
            category("cat-dining"),
            spec(true, false, Some("2026-08")),
            None,
        ),
        (
            "reconciled",
            bakery(ClearedStatus::Reconciled),
            category("cat-dining"),
            spec(true, false, None),
            Some(reconciled.clone()),
        ),
        (
            "a closed month",
            bakery(cleared),
            category("cat-dining"),
            spec(true, false, Some("2026-09")),
            Some(closed),
        ),
        (
            "a split YNAB cannot change",
            bakery(cleared),
            split(),
            spec(true, false, None),
            Some(split_in_ynab),
        ),
        (
            "writes disabled",
            bakery(cleared),
            category("cat-dining"),
            spec(false, false, None),
            Some(disabled.clone()),
        ),
        (
            "suspended",
            bakery(cleared),
            category("cat-dining"),
            spec(true, true, None),
            Some(suspended),
        ),
        (
            "a guard before the Budget",
            bakery(ClearedStatus::Reconciled),
            category("cat-dining"),
            spec(false, true, None),
            Some(reconciled),
        ),
        (
            "writes disabled before suspended",
            bakery(cleared),
            category("cat-dining"),
            spec(false, true, None),
            Some(disabled),
        ),
    ];
    for (what, tx, current, spec, want) in cases {
        let seen = seen(current, category("cat-groceries"));
        let got = held_back(&seen, &tx, "household", &spec);
        assert_eq!(got, want.map(Step::idle), "{what}");
    }
}

#[test]
fn without_a_token_it_waits_a_minute() {
    assert_eq!(
        no_token("household"),
        Step {
            verdict: Verdict::Pending("Waiting for the YNAB token of Budget household".into()),
            requeue: Duration::from_secs(60),
        }
    );
}

#[test]
fn the_intent_is_recorded_before_the_write() {
    let (from, to) = (category("cat-dining"), category("cat-groceries"));
    let mut status = TransactionStatus::default();
    let verdict = start(
        &mut status,
        &seen(from.clone(), to.clone()),
        "uid-1-7",
        at(0),
    );
    assert_eq!(
        verdict,
        Verdict::Writing("Writing Dining Out → Groceries".into())
    );
    assert_eq!(
        status.intent,
        Some(WriteIntent {
            attempt_id: "uid-1-7".into(),
            target_hash: to.hash(),
            from_hash: Some(from.hash()),
            knowledge: Some(40),
            started_at: Time(at(0)),
        })
    );
}

fn guard() -> converge::Blocked {
    converge::Blocked {
        reason: "ClosedMonth",
        message: "closed".into(),
    }
}

#[test]
fn an_approval_is_used_up_once_the_outcome_is_known() {
    let cases: Vec<(Outcome, Option<bool>)> = vec![
        (Outcome::Written, Some(true)),
        (Outcome::AlreadyTarget, Some(true)),
        (Outcome::NoChange, Some(true)),
        (Outcome::Mismatch, Some(true)),
        (Outcome::Diverged, Some(false)),
        (Outcome::Missing, Some(false)),
        (Outcome::Blocked(guard()), Some(false)),
        (Outcome::Refused("400".into()), Some(false)),
        (Outcome::Stale("moved".into()), Some(false)),
        (Outcome::NotLanded("503".into()), None),
        (Outcome::Unsettled("dropped".into()), None),
        (Outcome::Skipped, None),
    ];
    for (outcome, want) in cases {
        assert_eq!(approval_used(&outcome), want, "{outcome:?}");
    }
}

#[test]
fn what_each_outcome_of_the_write_means() {
    let idle = Duration::from_secs(600);
    let converged = |reason, message: &str| Verdict::Converged {
        reason,
        message: message.into(),
    };
    let adopted = converged(
        "Adopted",
        "YNAB already held the declared state: adopted without writing",
    );
    // outcome → (verdict, requeue, decision kept, target applied, refused at)
    type Case = (Outcome, (Verdict, Duration, bool, bool, Option<i64>));
    let cases: Vec<Case> = vec![
        (
            Outcome::Written,
            (
                converged("Written", "Wrote Dining Out → Groceries"),
                idle,
                true,
                true,
                None,
            ),
        ),
        (Outcome::AlreadyTarget, (adopted.clone(), idle, true, true, None)),
        (Outcome::NoChange, (adopted, idle, true, true, None)),
        (
            Outcome::Diverged,
            (
                Verdict::Diverged("YNAB changed tx-048 just before the write, so nothing was written: look at it in YNAB, then annotate ledgerops.dev/resolve=ours or theirs".into()),
                idle,
                false,
                false,
                None,
            ),
        ),
        (
            Outcome::Missing,
            (
                Verdict::Invalid(PlanError::UnknownTransaction("tx-048".into()).to_string()),
                idle,
                false,
                false,
                None,
            ),
        ),
        (
            Outcome::Blocked(guard()),
            (blocked("ClosedMonth", "closed"), idle, false, false, None),
        ),
        (
            Outcome::Mismatch,
            (
                Verdict::Diverged(
                    "YNAB accepted the write of tx-048 but shows something else: check it in YNAB".into(),
                ),
                idle,
                true,
                true,
                None,
            ),
        ),
        (
            Outcome::Refused("400: category is hidden".into()),
            (
                blocked(
                    "RefusedByYnab",
                    "YNAB refused the write of Dining Out → Groceries (400: category is hidden); it is not sent again until the spec changes",
                ),
                idle,
                false,
                false,
                Some(3),
            ),
        ),
        (
            Outcome::Stale("the transaction changed".into()),
            (
                Verdict::Pending("the transaction changed".into()),
                Duration::from_secs(1),
                false,
                false,
                None,
            ),
        ),
        (
            Outcome::NotLanded("503".into()),
            (
                Verdict::Interrupted(
                    "The write of Dining Out → Groceries did not land (503); ledgerops tries again".into(),
                ),
                Duration::from_secs(30),
                false,
                false,
                None,
            ),
        ),
        (
            Outcome::Unsettled("dropped".into()),
            (
                Verdict::Interrupted(
                    "The answer to the write of Dining Out → Groceries was lost (dropped); the next read of YNAB tells whether it landed, and it is not sent again before".into(),
                ),
                Duration::from_secs(30),
                false,
                false,
                None,
            ),
        ),
        (
            Outcome::Skipped,
            (
                Verdict::Interrupted(
                    "The write of Dining Out → Groceries did not land (skipped); ledgerops tries again".into(),
                ),
                Duration::from_secs(30),
                false,
                false,
                None,
            ),
        ),
    ];
    let (from, to) = (category("cat-dining"), category("cat-groceries"));
    let decision = DecisionRecord {
        verdict: "Approve".into(),
        by: "bob".into(),
        comment: None,
        request: Some("tx-048-abc".into()),
        decided_at: None,
        preview_hash: "hash-1".into(),
        edited_hash: None,
        edits: None,
    };
    for (outcome, want) in cases {
        let what = format!("{outcome:?}");
        let unsettled = matches!(outcome, Outcome::Unsettled(_));
        let mut status = TransactionStatus::default();
        start(
            &mut status,
            &seen(from.clone(), to.clone()),
            "uid-1-7",
            at(0),
        );
        let seen = seen(from.clone(), to.clone());
        let step = written(
            outcome,
            &seen,
            decision.clone(),
            &mut status,
            Some(3),
            at(9),
        );
        // Only an answer that was lost keeps the intent, for a later read to settle.
        assert_eq!(status.intent.is_some(), unsettled, "{what}: the intent");
        let applied = match &status.applied {
            None => false,
            Some(a) if *a == super::super::applied_state(&to, at(9)) => true,
            Some(other) => panic!("{what}: applied {other:?}"),
        };
        let got = (
            step.verdict,
            step.requeue,
            status.decision == Some(decision.clone()),
            applied,
            status.refused_generation,
        );
        assert_eq!(got, want, "{what}");
    }
}
