//! Unit tests of `logic/plan/end.rs`.

use super::*;
use crate::logic::plan::fixtures::{mirror, recategorise};

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

fn change(tx: &str, to: &str) -> AppliedChange {
    AppliedChange {
        transaction_id: tx.into(),
        from_category_id: None,
        to_category_id: Some(to.into()),
    }
}

fn end<'a>(changes: &'a [AppliedChange], written: u32, conclusion: &'a Conclusion) -> End<'a> {
    End {
        operation_id: "op-1",
        decision: None,
        changes,
        written,
        conclusion,
        at: at(9),
    }
}

#[test]
fn what_ynab_holds_of_an_operation() {
    let mut m = mirror();
    recategorise(&mut m, "tx-048", Some("cat-groceries"));
    let changes = [
        change("tx-048", "cat-groceries"),
        change("tx-049", "cat-transport"),
        change("tx-deleted", "cat-groceries"),
    ];
    let not_written = vec!["tx-049".to_owned(), "tx-deleted".to_owned()];
    // what the write counted → tally
    let cases = [
        (
            0,
            Tally {
                written: 1,
                total: 3,
                not_written: not_written.clone(),
            },
        ),
        (
            2,
            Tally {
                written: 2,
                total: 3,
                not_written: not_written.clone(),
            },
        ),
    ];
    for (counted, want) in cases {
        let got = tally(&end(&changes, counted, &Conclusion::Applied), &m);
        assert_eq!(got, want, "counted {counted}");
    }
    let none = tally(&end(&[], 0, &Conclusion::Applied), &m);
    assert_eq!(
        none,
        Tally {
            written: 0,
            total: 0,
            not_written: vec![]
        }
    );
}

#[test]
fn what_the_status_keeps_of_an_ended_operation() {
    let decision = DecisionRecord {
        verdict: "Approve".into(),
        by: "bob".into(),
        comment: None,
        request: Some("groceries-abc".into()),
        decided_at: None,
        preview_hash: "hash-1".into(),
        edited_hash: None,
        edits: None,
    };
    let changes = [change("tx-048", "cat-groceries")];
    // (conclusion, written) → (operation recorded, finished at this generation)
    let cases = [
        (Conclusion::Applied, 1, (true, true)),
        (Conclusion::PartiallyApplied("p".into()), 1, (true, true)),
        (Conclusion::Failed("f".into()), 0, (false, true)),
        (Conclusion::Blocked("b".into()), 0, (false, false)),
        (Conclusion::Restart("r".into()), 0, (false, false)),
        (Conclusion::Restart("r".into()), 1, (true, false)),
    ];
    for (conclusion, written, (recorded, finished)) in cases {
        let mut status = CategorizationPlanStatus {
            intent: None,
            progress: Some(Progress {
                written: 0,
                total: 1,
                chunks_done: 1,
                chunks: 1,
            }),
            finished_generation: Some(1),
            ..CategorizationPlanStatus::default()
        };
        let mut ended = end(&changes, written, &conclusion);
        ended.decision = Some(&decision);
        let tally = Tally {
            written,
            total: 1,
            not_written: vec![],
        };
        record_end(&mut status, &ended, &tally, Some(4));
        let what = format!("{conclusion:?} with {written} written");
        assert_eq!(
            status.progress,
            Some(Progress {
                written,
                total: 1,
                chunks_done: 1,
                chunks: 1,
            }),
            "{what}"
        );
        assert_eq!(status.intent, None, "{what}");
        let operation = (
            status.operation_id.as_deref(),
            status.applied_at.clone(),
            status.decision.clone(),
        );
        let want = if recorded {
            (Some("op-1"), Some(Time(at(9))), Some(decision.clone()))
        } else {
            (None, None, None)
        };
        assert_eq!(operation, want, "{what}");
        let want = if finished { Some(4) } else { Some(1) };
        assert_eq!(status.finished_generation, want, "{what}");
    }
}
