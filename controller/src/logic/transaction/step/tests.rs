//! Unit tests of `logic/transaction/step/mod.rs`.

use super::fixtures::at;
use super::*;
use crate::api::transaction::Flag;
use crate::logic::transaction::converge::Line;

#[test]
fn what_the_status_records_as_applied() {
    let line = |amount, category: &str, memo: Option<&str>| Line {
        amount,
        category_id: category.into(),
        memo: memo.map(str::to_owned),
    };
    let split_line = |amount: &str, category: &str, memo: Option<&str>| SplitLine {
        amount: Amount(amount.into()),
        category_id: category.into(),
        memo: memo.map(str::to_owned),
    };
    let state = |allocation| EndState {
        allocation,
        memo: Some("bread".into()),
        approved: Some(true),
        flag: Some(Flag::Red),
    };
    // allocation → (category, split lines)
    type Case = (
        Option<Allocation>,
        (Option<&'static str>, Option<Vec<SplitLine>>),
    );
    let cases: Vec<Case> = vec![
        (
            Some(Allocation::Category("cat-groceries".into())),
            (Some("cat-groceries"), None),
        ),
        (
            Some(Allocation::split(vec![
                line(-1_234, "cat-household", None),
                line(-4_200, "cat-groceries", Some("bread")),
            ])),
            (
                None,
                Some(vec![
                    split_line("-4.200", "cat-groceries", Some("bread")),
                    split_line("-1.234", "cat-household", None),
                ]),
            ),
        ),
        (Some(Allocation::Uncategorized), (None, None)),
        (None, (None, None)),
    ];
    for (allocation, (category, split)) in cases {
        let state = state(allocation);
        let want = AppliedState {
            hash: state.hash(),
            category_id: category.map(str::to_owned),
            split,
            memo: Some("bread".into()),
            approved: Some(true),
            flag_color: Some(Flag::Red),
            at: Time(at(5)),
        };
        assert_eq!(applied_state(&state, at(5)), want, "{state:?}");
    }
}

#[test]
fn a_transaction_in_words() {
    let m = crate::logic::plan::fixtures::mirror();
    let category = super::fixtures::category;
    let (current, target) = (category("cat-transport"), category("cat-groceries"));
    let applied = applied_state(&category("cat-investments"), at(0));
    // applied → (current, target, applied, change) in words
    let cases: Vec<(Option<AppliedState>, [&str; 4])> = vec![
        (
            None,
            ["Transport", "Groceries", "nothing", "Transport → Groceries"],
        ),
        (
            Some(applied),
            [
                "Transport",
                "Groceries",
                "Investments",
                "Transport → Groceries",
            ],
        ),
    ];
    for (applied, [current_words, target_words, applied_words, change_words]) in cases {
        let states = (current.clone(), target.clone());
        let seen = Seen::new("tx-049", states, applied.as_ref(), None, &m);
        let want = Seen {
            id: "tx-049".into(),
            current: current.clone(),
            target: target.clone(),
            current_words: current_words.into(),
            target_words: target_words.into(),
            applied_words: applied_words.into(),
            change_words: change_words.into(),
            knowledge: m.server_knowledge,
            changed_since_intent: None,
        };
        assert_eq!(seen, want, "{applied:?}");
        assert_eq!(seen.summary(), format!("tx-049: {change_words}"));
    }
}

#[test]
fn an_unsettled_write_waits_for_a_read_back_the_mirror_does_not_remember() {
    use crate::api::common::WriteIntent;
    use crate::logic::budget::mirror::Mirror;
    // The mirror's history starts at knowledge 10 (a full read there).
    let mirror = Mirror {
        server_knowledge: 12,
        history_from: 10,
        ..Mirror::default()
    };
    let intent = |knowledge: Option<i64>| WriteIntent {
        attempt_id: "op-1".into(),
        target_hash: "h".into(),
        from_hash: None,
        knowledge,
        started_at: Time(at(0)),
    };
    let waiting = Some(Verdict::Pending(
        "Waiting to read back what changed in YNAB since write op-1 was decided, to settle it"
            .into(),
    ));
    let cases = [
        ("no unsettled write", None, None),
        (
            "a write that recorded no knowledge",
            Some(intent(None)),
            None,
        ),
        ("decided within the history", Some(intent(Some(10))), None),
        ("decided before it", Some(intent(Some(9))), waiting.clone()),
    ];
    for (name, intent, expected) in cases {
        assert_eq!(
            awaiting_read_back(intent.as_ref(), &mirror),
            expected,
            "{name}"
        );
    }
    // An empty mirror remembers nothing: every write with a knowledge waits.
    assert_eq!(
        awaiting_read_back(Some(&intent(Some(10))), &Mirror::default()),
        waiting
    );
}
