//! Unit tests of `logic/plan/step.rs`.

use serde_json::json;

use super::*;
use crate::api::common::Amount;
use crate::api::plan::Progress;
use crate::logic::plan::fixtures::{assign, at as state, mirror};
use crate::logic::plan::preview;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn on_change(verdict: PlanVerdict) -> Option<Step> {
    Some(Step::on_change(verdict))
}

const APPLIED: &str = "Applied as operation op-1; to revert it, apply a CategorizationPlan with spec.undoOf: groceries";

#[test]
fn what_a_plan_whose_write_is_over_shows() {
    let ended = |verdict: PlanVerdict, finished: Option<i64>, operation: Option<&str>| {
        let mut status = CategorizationPlanStatus::default();
        plan_status::apply(&mut status, &verdict, Some(2), at(0));
        status.finished_generation = finished;
        status.operation_id = operation.map(str::to_owned);
        status
    };
    let partly = PlanVerdict::PartiallyApplied("2 of 5 changes are in YNAB".into());
    let failed = PlanVerdict::Failed("YNAB refused".into());
    // (what, status, generation now) → step
    let cases: Vec<(&str, CategorizationPlanStatus, Option<i64>, Option<Step>)> = vec![
        (
            "applied",
            ended(PlanVerdict::Applied("said".into()), Some(2), Some("op-1")),
            Some(2),
            on_change(PlanVerdict::Applied(APPLIED.into())),
        ),
        (
            "applied by a version without operation ids",
            ended(PlanVerdict::Applied("said".into()), Some(2), None),
            Some(2),
            on_change(PlanVerdict::Applied(
                "Applied as operation ; to revert it, apply a CategorizationPlan with spec.undoOf: groceries".into(),
            )),
        ),
        (
            "partly applied: its words stay",
            ended(partly.clone(), Some(2), Some("op-1")),
            Some(2),
            on_change(partly),
        ),
        (
            "failed: its words stay",
            ended(failed.clone(), Some(2), None),
            Some(2),
            on_change(failed),
        ),
        (
            "applied, then the spec changed",
            ended(PlanVerdict::Applied("said".into()), Some(2), Some("op-1")),
            Some(3),
            None,
        ),
        (
            "still applying",
            ended(PlanVerdict::Applying { interrupted: None }, None, None),
            Some(2),
            None,
        ),
    ];
    for (what, status, generation, want) in cases {
        assert_eq!(settled("groceries", &status, generation), want, "{what}");
    }
}

fn resume(hash: &str) -> Resume {
    Resume {
        attempt_id: "uid-1-1790000000000".into(),
        started_at: Time(at(0)),
        hash: hash.into(),
        changes: vec![],
        decision: None,
        moved_since: BTreeSet::new(),
        knowledge: Some(40),
        elsewhere: BTreeSet::new(),
    }
}

#[test]
fn a_cut_off_write_goes_on_only_on_its_own_preview() {
    let moved = Resume {
        moved_since: BTreeSet::from(["tx-048".to_owned()]),
        ..resume("hash-1")
    };
    let undone = Resume {
        elsewhere: BTreeSet::from(["tx-048".to_owned()]),
        ..resume("hash-1")
    };
    // a cut-off write → (resumed, settled)
    type Split = (Option<Resume>, Option<Resume>);
    let cases: Vec<(Option<Resume>, Split)> = vec![
        (None, (None, None)),
        (Some(resume("hash-1")), (Some(resume("hash-1")), None)),
        (Some(resume("hash-0")), (None, Some(resume("hash-0")))),
        // The same preview, read after a later operation moved a transaction back: settled.
        (Some(moved.clone()), (None, Some(moved))),
        // The same preview, but a transaction changed since the write was decided: it may
        // have landed and been undone, so it is settled, never resent.
        (Some(undone.clone()), (None, Some(undone))),
    ];
    for (cut, want) in cases {
        assert_eq!(resumes(cut.clone(), "hash-1"), want, "{cut:?}");
    }
}

#[test]
fn a_resumed_write_keeps_its_id_start_and_knowledge() {
    let unknown = Resume {
        knowledge: None,
        ..resume("h")
    };
    let cases = [
        (Some(resume("h")), ("uid-1-1790000000000", at(0), 40)),
        (Some(unknown), ("uid-1-1790000000000", at(0), 90)),
        (None, ("uid-1-1790000060000", at(60), 90)),
    ];
    for (resumed, (id, start, knowledge)) in cases {
        let want = (id.to_owned(), Time(start), knowledge);
        assert_eq!(attempt(resumed.as_ref(), "uid-1", at(60), 90), want);
    }
}

fn record(verdict: &str, hash: &str) -> DecisionRecord {
    DecisionRecord {
        verdict: verdict.into(),
        by: "carol".into(),
        comment: Some("a gift".into()),
        request: Some("groceries-abc".into()),
        decided_at: None,
        preview_hash: hash.into(),
        edited_hash: None,
        edits: None,
    }
}

#[test]
fn what_stops_a_preview_before_anyone_is_asked() {
    let m = mirror();
    let some = preview(&[assign("tx-048", "cat-groceries")], &state(&m));
    let none = preview(&[], &state(&m));
    let rejected = PlanVerdict::Blocked {
        phase: PlanPhase::Rejected,
        reason: "Rejected",
        message: "carol rejected this preview (ApprovalRequest groceries-abc): a gift. Change the spec to ask again.".into(),
    };
    // (what, preview, decision kept) → step
    let cases: Vec<(&str, &PlanPreview, Option<DecisionRecord>, Option<Step>)> = vec![
        ("changes to ask for", &some, None, None),
        (
            "nothing to do",
            &none,
            None,
            on_change(PlanVerdict::NothingToDo),
        ),
        (
            "this very preview was rejected",
            &some,
            Some(record("Reject", &some.hash)),
            on_change(rejected),
        ),
        (
            "an earlier preview was rejected",
            &some,
            Some(record("Reject", "hash-0")),
            None,
        ),
        (
            "approved before",
            &some,
            Some(record("Approve", &some.hash)),
            None,
        ),
    ];
    for (what, preview, decision, want) in cases {
        let mut status = CategorizationPlanStatus {
            decision,
            intent: Some(WriteIntent {
                attempt_id: "op".into(),
                target_hash: "hash-0".into(),
                from_hash: None,
                knowledge: None,
                started_at: Time(at(0)),
            }),
            progress: Some(Progress::default()),
            ..CategorizationPlanStatus::default()
        };
        assert_eq!(previewed(&mut status, preview), want, "{what}");
        assert_eq!(
            (status.intent, status.progress, status.preview),
            (None, None, Some(preview.clone().into())),
            "{what}"
        );
    }
    // A write resumed on this very preview keeps its intent and progress, whatever stops the
    // reconcile before it goes out again.
    let intent = WriteIntent {
        attempt_id: "op".into(),
        target_hash: some.hash.clone(),
        from_hash: None,
        knowledge: Some(40),
        started_at: Time(at(0)),
    };
    let mut status = CategorizationPlanStatus {
        intent: Some(intent.clone()),
        progress: Some(Progress::default()),
        ..CategorizationPlanStatus::default()
    };
    assert_eq!(previewed(&mut status, &some), None);
    assert_eq!(status.intent, Some(intent));
    assert_eq!(status.progress, Some(Progress::default()));
}

#[test]
fn the_summary_of_an_approval_request() {
    let m = mirror();
    let two = preview(
        &[
            assign("tx-048", "cat-groceries"),
            assign("tx-049", "cat-transport"),
        ],
        &state(&m),
    )
    .changes;
    let amounts = |amounts: &[&str]| {
        let mut changes = vec![two[0].clone(); amounts.len()];
        for (c, a) in changes.iter_mut().zip(amounts) {
            c.change.amount = Amount((*a).into());
        }
        changes
    };
    let cases: Vec<(Vec<PlannedChange>, &str)> = vec![
        (vec![], "0 transactions to recategorise, 0.00 in total"),
        (
            two.clone(),
            "2 transactions to recategorise, 53.40 in total",
        ),
        (
            amounts(&["-1.50", "2.25", "not money"]),
            "3 transactions to recategorise, 3.75 in total",
        ),
        (
            amounts(&["-9000000000000000", "9000000000000000"]),
            "2 transactions to recategorise, 9223372036854775.807 in total",
        ),
    ];
    for (changes, want) in cases {
        assert_eq!(summary(&changes), want);
    }
}

#[test]
fn a_hold_at_the_gate_keeps_its_request_and_a_rejection() {
    let approve = record("Approve", "hash-0");
    let waiting = Hold::AwaitingApproval {
        request: "groceries-abc".into(),
        why: "a new payee".into(),
    };
    let rejected = Hold::Rejected {
        request: "groceries-abc".into(),
        by: "carol".into(),
        comment: Some("a gift".into()),
        decided_at: None,
        preview_hash: "hash-1".into(),
    };
    let policy = Hold::PolicyBlocked { why: "no".into() };
    // hold → (request, decision kept)
    let cases: Vec<(Hold, Option<&str>, DecisionRecord)> = vec![
        (waiting, Some("groceries-abc"), approve.clone()),
        (rejected, Some("groceries-abc"), record("Reject", "hash-1")),
        (policy, None, approve.clone()),
    ];
    for (hold, request, decision) in cases {
        let mut status = CategorizationPlanStatus {
            approval_request: Some("older-request".into()),
            decision: Some(approve.clone()),
            ..CategorizationPlanStatus::default()
        };
        let step = held(&mut status, &hold);
        let want = Step::after(gate::plan_verdict(&hold), Duration::from_secs(600));
        assert_eq!(step, want, "{hold:?}");
        assert_eq!(status.approval_request.as_deref(), request, "{hold:?}");
        assert_eq!(status.decision, Some(decision), "{hold:?}");
    }
}

#[test]
fn a_budget_that_lets_nothing_out() {
    let spec = |enabled: bool, suspend: bool| -> BudgetSpec {
        serde_json::from_value(json!({
            "planId": "last-used",
            "tokenSecretRef": {"name": "ynab", "key": "token"},
            "writes": {"enabled": enabled},
            "suspend": suspend,
        }))
        .expect("a Budget spec")
    };
    let read_only = on_change(PlanVerdict::ReadOnly(
        "Approved, but Budget household has spec.writes.enabled: false, so nothing is written: enable writes on the Budget to apply it".into(),
    ));
    let suspended = Some(Step::after(
        PlanVerdict::Pending(
            "Approved, but Budget household is suspended (spec.suspend: true): nothing is written until it is resumed".into(),
        ),
        Duration::from_secs(60),
    ));
    // (writes enabled, suspended) → step
    let cases = [
        ((true, false), None),
        ((false, false), read_only.clone()),
        ((true, true), suspended),
        ((false, true), read_only),
    ];
    for ((enabled, suspend), want) in cases {
        let got = held_back("household", &spec(enabled, suspend));
        assert_eq!(got, want, "enabled {enabled}, suspended {suspend}");
    }
    assert_eq!(
        no_destination("household"),
        Step::after(
            PlanVerdict::Pending("Waiting for Budget household to sync with YNAB".into()),
            Duration::from_secs(30),
        )
    );
}

#[test]
fn the_intent_is_recorded_before_the_write() {
    let request = "groceries-abc".to_owned();
    let cases = [(Some(&request), Some("groceries-abc")), (None, None)];
    for (approved_through, want) in cases {
        let mut status = CategorizationPlanStatus {
            approval_request: Some("older-request".into()),
            ..CategorizationPlanStatus::default()
        };
        start(
            &mut status,
            ("op-1", &Time(at(3)), 77),
            "hash-1",
            approved_through,
        );
        assert_eq!(status.approval_request.as_deref(), want);
        assert_eq!(
            status.intent,
            Some(WriteIntent {
                attempt_id: "op-1".into(),
                target_hash: "hash-1".into(),
                from_hash: None,
                knowledge: Some(77),
                started_at: Time(at(3)),
            })
        );
    }
}

/// The soak's `resent-after-landing`: plan p-335's write landed (A→B), plan p-374 moved the
/// transaction back (B→A), then p-335 resumed after a restart, read A as "not landed" and wrote
/// B again over p-374's decision.
#[test]
fn a_later_operation_that_started_from_the_writes_target_shows_it_had_landed() {
    let change = |tx: &str, from: &str, to: &str| AppliedChange {
        transaction_id: tx.into(),
        from_category_id: Some(from.into()),
        to_category_id: Some(to.into()),
    };
    let ours = [change("tx-1", "a", "b"), change("tx-2", "a", "c")];
    let back = [change("tx-1", "b", "a")];
    let unrelated = [change("tx-3", "b", "a")];
    let from_before = [change("tx-1", "a", "d")];
    let start = "2026-12-04T10:00:00Z";
    let (later, earlier) = ("2026-12-04T10:00:05.5Z", "2026-12-04T09:59:59Z");
    // (what, other operations) → moved
    type Case<'a> = (&'a str, Vec<Journaled<'a>>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        ("nothing else", vec![], vec![]),
        (
            "moved back later",
            vec![("op-2", later, &back)],
            vec!["tx-1"],
        ),
        ("the same operation", vec![("op-1", later, &back)], vec![]),
        (
            "moved before ours started",
            vec![("op-2", earlier, &back)],
            vec![],
        ),
        (
            "another transaction",
            vec![("op-2", later, &unrelated)],
            vec![],
        ),
        (
            "started from our from: it read ours as not landed",
            vec![("op-2", later, &from_before)],
            vec![],
        ),
        (
            "a start that does not parse",
            vec![("op-2", "soon", &back)],
            vec!["tx-1"],
        ),
    ];
    for (what, others, want) in cases {
        let got = moved_since(("op-1", start, &ours), others);
        let want: BTreeSet<String> = want.into_iter().map(str::to_owned).collect();
        assert_eq!(got, want, "{what}");
    }
}
