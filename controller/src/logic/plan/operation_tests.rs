//! Unit tests of `logic/plan/operation.rs`.

use k8s_openapi::jiff::SignedDuration;

use super::*;

#[test]
fn every_end_of_an_operation() {
    let w = |s: &str| s.to_string();
    let cases: Vec<(usize, Option<WriteResult>, Conclusion)> = vec![
        (5, None, Conclusion::Applied),
        (5, Some(WriteResult::Landed), Conclusion::Applied),
        (
            0,
            Some(WriteResult::NotLanded(w("503"))),
            Conclusion::Retry(w(
                "0 of 5 changes are in YNAB; the next did not land (503); ledgerops tries again with the same approval",
            )),
        ),
        (
            2,
            Some(WriteResult::Waiting {
                until: Timestamp::UNIX_EPOCH,
                why: w("paced"),
            }),
            Conclusion::Waiting {
                until: Timestamp::UNIX_EPOCH,
                message: w(
                    "2 of 5 changes are in YNAB; the rest goes out with the same approval once its turn comes (paced)",
                ),
            },
        ),
        (
            0,
            Some(WriteResult::Refused(w("400"))),
            Conclusion::Failed(w("400")),
        ),
        (
            0,
            Some(WriteResult::Blocked(w("tx reconciled"))),
            Conclusion::Blocked(w("tx reconciled")),
        ),
        (
            0,
            Some(WriteResult::Stale(w("moved"))),
            Conclusion::Restart(w("moved")),
        ),
        (
            0,
            Some(WriteResult::Changed(w("edited"))),
            Conclusion::Restart(w("edited")),
        ),
        (
            3,
            Some(WriteResult::Mismatch(w("other category"))),
            Conclusion::Failed(w("other category")),
        ),
    ];
    for (written, stop, want) in cases {
        assert_eq!(conclude(written, 5, stop.as_ref()), want, "{stop:?}");
    }
    for stop in [
        WriteResult::Refused(w("404")),
        WriteResult::Blocked(w("closed month")),
        WriteResult::Stale(w("moved")),
        WriteResult::Changed(w("edited")),
    ] {
        let got = conclude(2, 5, Some(&stop));
        assert!(
            matches!(&got, Conclusion::PartiallyApplied(m) if m.starts_with("2 of 5 changes are in YNAB")),
            "{stop:?} after 2 landed gave {got:?}"
        );
    }
}

#[test]
fn an_interrupted_operation_keeps_what_landed_and_leaves_edits_alone() {
    use crate::logic::plan::fixtures::{mirror, recategorise};
    let change = |tx: &str, from: Option<&str>, to: &str| AppliedChange {
        transaction_id: tx.into(),
        from_category_id: from.map(str::to_owned),
        to_category_id: Some(to.into()),
    };
    let journal = [
        change("tx-048", None, "cat-groceries"),
        change("tx-049", None, "cat-transport"),
    ];
    let none = std::collections::BTreeSet::new();
    let mut m = mirror();
    assert_eq!(
        interrupted(&journal, &m, &none, &none),
        None,
        "nothing landed: start over"
    );
    recategorise(&mut m, "tx-048", Some("cat-groceries"));
    recategorise(&mut m, "tx-049", Some("cat-transport"));
    assert_eq!(
        interrupted(&journal, &m, &none, &none),
        Some(Conclusion::Applied)
    );
    recategorise(&mut m, "tx-049", Some("cat-investments"));
    let got = interrupted(&journal, &m, &none, &none);
    assert!(
        matches!(&got, Some(Conclusion::PartiallyApplied(msg))
            if msg.starts_with("1 of 2") && msg.contains("YNAB changed tx-049 since")),
        "{got:?}"
    );
    recategorise(&mut m, "tx-049", None);
    let got = interrupted(&journal, &m, &none, &none);
    assert!(
        matches!(&got, Some(Conclusion::PartiallyApplied(msg)) if msg.contains("did not go out")),
        "{got:?}"
    );
    // tx-049 shows where the write started, but a later operation had moved it on from the
    // write's target: it had landed.
    let moved = std::collections::BTreeSet::from(["tx-049".to_owned()]);
    assert_eq!(
        interrupted(&journal, &m, &moved, &none),
        Some(Conclusion::Applied)
    );
}

/// A journal that moved tx-048 to Groceries and tx-049 to Transport, both from nothing.
fn groceries_and_transport() -> [AppliedChange; 2] {
    let change = |tx: &str, to: &str| AppliedChange {
        transaction_id: tx.into(),
        from_category_id: None,
        to_category_id: Some(to.into()),
    };
    [
        change("tx-048", "cat-groceries"),
        change("tx-049", "cat-transport"),
    ]
}

#[test]
fn an_interrupted_operation_never_starts_over_what_moved_since_it_was_decided() {
    use crate::logic::plan::fixtures::{mirror, recategorise};
    let journal = groceries_and_transport();
    let none = std::collections::BTreeSet::new();
    let mut m = mirror();
    // Nothing shows the write, and tx-049 moved to a third category before it was decided
    // (or in this process, whose lost answers the batcher remembers): start over.
    recategorise(&mut m, "tx-049", Some("cat-investments"));
    assert_eq!(interrupted(&journal, &m, &none, &none), None);
    // The same, but it moved after the decision: the write may have landed first.
    let elsewhere = std::collections::BTreeSet::from(["tx-049".to_owned()]);
    let got = interrupted(&journal, &m, &none, &elsewhere);
    assert!(
        matches!(&got, Some(Conclusion::Failed(msg)) if msg.contains("YNAB changed tx-049 since it was decided")),
        "{got:?}"
    );
    // Both show where the write started, but tx-048 changed since the decision: the write may
    // have landed and been undone.
    let m = mirror();
    let elsewhere = std::collections::BTreeSet::from(["tx-048".to_owned()]);
    let got = interrupted(&journal, &m, &none, &elsewhere);
    assert!(
        matches!(&got, Some(Conclusion::Failed(msg)) if msg.contains("YNAB changed tx-048 since")),
        "{got:?}"
    );
}

#[test]
fn what_moved_elsewhere_since_a_decision_is_read_from_the_mirrors_history() {
    use crate::logic::plan::fixtures::{mirror, recategorise};
    let journal = groceries_and_transport();
    let mut m = mirror();
    let decided = m.server_knowledge;
    assert_eq!(
        moved_elsewhere(&journal, &m, decided - 1),
        None,
        "older than the mirror remembers"
    );
    assert_eq!(
        moved_elsewhere(&journal, &m, decided),
        Some(Default::default())
    );
    // tx-048 landed (at its target since); tx-049 was written and undone, or edited.
    recategorise(&mut m, "tx-048", Some("cat-groceries"));
    recategorise(&mut m, "tx-049", Some("cat-dining"));
    recategorise(&mut m, "tx-049", None);
    let want = std::collections::BTreeSet::from(["tx-049".to_owned()]);
    assert_eq!(moved_elsewhere(&journal, &m, decided), Some(want));
}

#[test]
fn only_a_retry_keeps_the_operation_open() {
    let finals = [
        Conclusion::Applied,
        Conclusion::PartiallyApplied("p".into()),
        Conclusion::Failed("f".into()),
        Conclusion::Blocked("b".into()),
        Conclusion::Restart("r".into()),
    ];
    assert!(finals.iter().all(Conclusion::is_final));
    assert!(!Conclusion::Retry("r".into()).is_final());
    assert_eq!(Conclusion::Applied.outcome(), "Applied");
    assert_eq!(Conclusion::Applied.reason(), None);
    assert_eq!(
        Conclusion::PartiallyApplied("p".into()).outcome(),
        "PartiallyApplied"
    );
}

#[test]
fn only_a_retry_a_restart_or_a_wait_looks_again_by_itself() {
    let now = Timestamp::from_second(1_790_000_000).unwrap();
    let step = Conclusion::Restart("r".into()).verdict(String::new(), now);
    assert_eq!(step.verdict, PlanVerdict::Pending("r".into()));
    assert_eq!(step.wait, Some(Duration::from_secs(60)));
    let step = Conclusion::Retry("r".into()).verdict(String::new(), now);
    assert_eq!(step.wait, Some(Duration::from_secs(30)));
    // A paced write looks again when its turn comes, at least a second on.
    for (until, wait) in [(now + SignedDuration::from_secs(90), 90), (now, 1)] {
        let waiting = Conclusion::Waiting {
            until,
            message: "w".into(),
        };
        assert!(!waiting.is_final());
        let step = waiting.verdict(String::new(), now);
        assert_eq!(step.wait, Some(Duration::from_secs(wait)));
        assert_eq!(
            step.verdict,
            PlanVerdict::Applying {
                interrupted: Some("w".into())
            }
        );
    }
    for c in [
        Conclusion::Applied,
        Conclusion::PartiallyApplied("p".into()),
        Conclusion::Failed("f".into()),
        Conclusion::Blocked("b".into()),
    ] {
        assert_eq!(c.verdict("done".into(), now).wait, None, "{c:?}");
    }
}

#[test]
fn a_change_is_written_only_from_its_before() {
    let state = |category: Option<&str>| EndState {
        allocation: Some(category.map_or(Allocation::Uncategorized, |c| {
            Allocation::Category(c.into())
        })),
        ..EndState::default()
    };
    // (the category before, the one the plan writes)
    let cases = [
        (Some("cat-dining"), Some("cat-groceries")),
        (None, Some("cat-groceries")),
        (Some("cat-groceries"), None),
    ];
    for (from, to) in cases {
        let change = AppliedChange {
            transaction_id: "tx-048".into(),
            from_category_id: from.map(str::to_owned),
            to_category_id: to.map(str::to_owned),
        };
        let want = WriteItem {
            transaction_id: "tx-048".into(),
            target: state(to),
            expect: Expect::Exactly(state(from)),
        };
        assert_eq!(write_item(&change), want, "{from:?} → {to:?}");
    }
}
