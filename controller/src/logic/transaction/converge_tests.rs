//! Unit tests of `logic/transaction/converge.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use serde_json::json;

use super::*;

use super::test_states::{category as cat, split};

fn with_memo(mut s: EndState, memo: &str) -> EndState {
    s.memo = Some(memo.into());
    s
}

fn prior(s: &EndState) -> Expect {
    Expect::Prior(Some(s.clone()))
}

fn tx(category: Option<&str>, cleared: &str, date: &str) -> TransactionSummary {
    serde_json::from_value(json!({
        "id": "tx-1", "date": date, "amount": -4500, "memo": "note", "cleared": cleared, "approved": false,
        "flag_color": null, "account_id": "acc", "payee_id": null, "category_id": category,
        "transfer_account_id": null, "deleted": false
    }))
    .unwrap()
}

#[test]
fn the_hash_is_stable_and_tells_states_apart() {
    assert_eq!(cat("dining").hash(), cat("dining").hash());
    assert_ne!(cat("dining").hash(), cat("gifts").hash());
    assert_ne!(
        with_memo(cat("dining"), "a").hash(),
        with_memo(cat("dining"), "b").hash()
    );
    assert_eq!(cat("dining").hash().len(), 64);
}

/// Seed 000's precommit table, and the cases it leaves implicit.
#[test]
fn precommit_decides_before_writing() {
    use Precommit::*;
    let uncategorized = EndState {
        allocation: Some(Allocation::Uncategorized),
        ..EndState::default()
    };
    let cases: Vec<(&str, EndState, EndState, Expect, Precommit)> = vec![
        (
            "target already equals the prior",
            cat("dining"),
            cat("dining"),
            prior(&cat("dining")),
            NoChange,
        ),
        (
            "a landed retry is adopted, not a no-op",
            cat("gifts"),
            cat("gifts"),
            prior(&cat("dining")),
            AlreadyTarget,
        ),
        (
            "target present without a prior",
            cat("gifts"),
            cat("gifts"),
            Expect::Prior(None),
            AlreadyTarget,
        ),
        (
            "a spouse recategorised it",
            cat("groceries"),
            cat("gifts"),
            prior(&cat("dining")),
            Diverged,
        ),
        (
            "the normal revision",
            cat("dining"),
            cat("gifts"),
            prior(&cat("dining")),
            Write,
        ),
        (
            "no prior: nothing of ours to clobber",
            cat("dining"),
            cat("gifts"),
            Expect::Prior(None),
            Write,
        ),
        (
            "someone split what ledgerops categorised",
            split(&[("a", -1), ("b", -2)]),
            cat("gifts"),
            prior(&cat("dining")),
            Diverged,
        ),
        (
            "someone split it, and the spec still asks for our category",
            split(&[("a", -1), ("b", -2)]),
            cat("dining"),
            prior(&cat("dining")),
            Diverged,
        ),
        (
            "someone recategorised one line of our split",
            split(&[("a", -1), ("c", -2)]),
            split(&[("a", -1), ("b", -2)]),
            prior(&split(&[("a", -1), ("b", -2)])),
            Diverged,
        ),
        (
            "someone unsplit our split into one category",
            cat("a"),
            split(&[("a", -1), ("b", -2)]),
            prior(&split(&[("a", -1), ("b", -2)])),
            Diverged,
        ),
        (
            "our split, listed in another order, has landed and holds",
            split(&[("b", -2), ("a", -1)]),
            split(&[("a", -1), ("b", -2)]),
            prior(&split(&[("a", -1), ("b", -2)])),
            NoChange,
        ),
        (
            "a split YNAB holds without a prior is adopted",
            split(&[("a", -1), ("b", -2)]),
            split(&[("b", -2), ("a", -1)]),
            Expect::Prior(None),
            AlreadyTarget,
        ),
        (
            "a split over what someone else split, without a prior",
            split(&[("a", -3)]),
            split(&[("a", -1), ("b", -2)]),
            Expect::Prior(None),
            Write,
        ),
        (
            "uncategorized after our split is not a divergence",
            EndState {
                allocation: Some(Allocation::Uncategorized),
                ..EndState::default()
            },
            split(&[("a", -1), ("b", -2)]),
            prior(&split(&[("a", -1), ("b", -2)])),
            Write,
        ),
        (
            "uncategorized is not a divergence",
            uncategorized.clone(),
            cat("gifts"),
            prior(&cat("dining")),
            Write,
        ),
        (
            "a memo-only drift is not a divergence",
            with_memo(cat("dining"), "their note"),
            with_memo(cat("gifts"), "ours"),
            prior(&with_memo(cat("dining"), "orig")),
            Write,
        ),
        (
            "the prior is compared on the target's fields only",
            cat("gifts"),
            cat("gifts"),
            prior(&with_memo(cat("gifts"), "an old memo")),
            NoChange,
        ),
        (
            "plan: still as previewed",
            uncategorized.clone(),
            cat("groceries"),
            Expect::Exactly(uncategorized.clone()),
            Write,
        ),
        (
            "plan: someone categorised it since",
            cat("dining"),
            cat("groceries"),
            Expect::Exactly(uncategorized.clone()),
            Diverged,
        ),
        (
            "plan: already applied",
            cat("groceries"),
            cat("groceries"),
            Expect::Exactly(uncategorized.clone()),
            AlreadyTarget,
        ),
        (
            "plan: previewed as already there",
            cat("groceries"),
            cat("groceries"),
            Expect::Exactly(cat("groceries")),
            NoChange,
        ),
        (
            "first write: YNAB still shows the baseline",
            cat("bakery"),
            cat("groceries"),
            Expect::Unchanged(cat("bakery").hash()),
            Write,
        ),
        (
            "first write: someone recategorised it since",
            cat("dining"),
            cat("groceries"),
            Expect::Unchanged(cat("bakery").hash()),
            Diverged,
        ),
        (
            "first write: someone uncategorised it since",
            uncategorized.clone(),
            cat("groceries"),
            Expect::Unchanged(cat("bakery").hash()),
            Diverged,
        ),
        (
            "first write: someone made it the target",
            cat("groceries"),
            cat("groceries"),
            Expect::Unchanged(cat("bakery").hash()),
            AlreadyTarget,
        ),
    ];
    for (name, current, target, expect, want) in cases {
        assert_eq!(precommit(&current, &target, &expect), want, "{name}");
    }
}

#[test]
fn only_what_differs_is_written() {
    let ours = with_memo(split(&[("a", -1), ("b", -2)]), "ours");
    let theirs_memo = with_memo(split(&[("b", -2), ("a", -1)]), "theirs");
    assert_eq!(
        still_to_write(&theirs_memo, &ours),
        EndState {
            memo: Some("ours".into()),
            ..EndState::default()
        },
        "a split in place is not sent again"
    );
    assert_eq!(still_to_write(&ours, &ours), EndState::default());
    let uncategorized = EndState {
        allocation: Some(Allocation::Uncategorized),
        memo: Some("ours".into()),
        ..EndState::default()
    };
    assert_eq!(
        still_to_write(&uncategorized, &ours),
        split(&[("a", -1), ("b", -2)])
    );
}

#[test]
fn an_interrupted_write_is_settled_by_what_ynab_shows() {
    use Precommit::{AlreadyTarget, Diverged, Write};
    let before = EndState {
        allocation: Some(Allocation::Uncategorized),
        ..EndState::default()
    };
    let target = cat("groceries");
    let (t, from) = (target.hash(), before.hash());
    let (yes, no, unknown) = (Some(true), Some(false), None);
    let dining = cat("dining");
    // (what, YNAB shows, recorded start, changed since the decision) → settled
    let cases = [
        ("landed", &target, Some(&from), unknown, AlreadyTarget),
        (
            "landed, read back",
            &target,
            Some(&from),
            yes,
            AlreadyTarget,
        ),
        ("not landed", &before, Some(&from), unknown, Write),
        ("not landed, nothing since", &before, Some(&from), no, Write),
        // The A→B→A: its fields say "never went out", the history says it moved since.
        (
            "landed and undone since",
            &before,
            Some(&from),
            yes,
            Diverged,
        ),
        ("changed since", &dining, Some(&from), unknown, Diverged),
        (
            "changed since, read back",
            &dining,
            Some(&from),
            yes,
            Diverged,
        ),
        ("no recorded start", &dining, None, unknown, Write),
        (
            "no recorded start, changed since",
            &dining,
            None,
            yes,
            Diverged,
        ),
    ];
    for (what, current, start, changed, want) in cases {
        let start = start.map(String::as_str);
        let settled = settle_intent(current, &target, (&t, start), changed);
        assert_eq!(settled, Some(want), "{what}");
    }
    assert_eq!(
        settle_intent(&before, &cat("transport"), (&t, Some(&from)), None),
        None,
        "the spec changed since"
    );
}

#[test]
fn verify_compares_the_read_back() {
    assert_eq!(
        verify(Some(&cat("dining")), &cat("dining")),
        Verified::Match
    );
    assert_eq!(verify(None, &cat("dining")), Verified::CouldNotConfirm);
    assert_eq!(
        verify(Some(&cat("gifts")), &cat("dining")),
        Verified::Diverged
    );
}

#[test]
fn observe_reads_only_the_managed_fields() {
    let current = tx(Some("cat-dining"), "cleared", "2026-09-16");
    assert_eq!(observe(&current, &[], &cat("x")), cat("cat-dining"));
    let managed = EndState {
        memo: Some(String::new()),
        approved: Some(true),
        ..EndState::default()
    };
    let seen = observe(&current, &[], &managed);
    assert_eq!(
        seen,
        EndState {
            memo: Some("note".into()),
            approved: Some(false),
            ..EndState::default()
        }
    );
    let uncategorized = tx(None, "cleared", "2026-09-16");
    assert_eq!(
        observe(&uncategorized, &[], &cat("x")).allocation,
        Some(Allocation::Uncategorized)
    );
}

#[test]
fn guards_block_reconciled_and_closed_months() {
    let reconciled = guard(&tx(None, "reconciled", "2026-09-16"), None).unwrap();
    assert_eq!(reconciled.reason, "Reconciled");
    assert!(reconciled.message.contains("tx-1") && reconciled.message.contains("Unreconcile"));
    let closed = guard(&tx(None, "cleared", "2026-08-31"), Some("2026-08")).unwrap();
    assert_eq!(closed.reason, "ClosedMonth");
    assert!(closed.message.contains("2026-08-31"));
    assert_eq!(
        guard(&tx(None, "cleared", "2026-09-01"), Some("2026-08")),
        None
    );
    assert_eq!(guard(&tx(None, "uncleared", "2025-01-01"), None), None);
}

#[test]
fn spec_targets_and_save_items() {
    let spec: TransactionSpec = serde_json::from_value(json!({
        "budgetRef": {"name": "b"}, "transactionId": "tx-1",
        "split": [{"amount": "-4.00", "categoryId": "c1"}, {"amount": "-0.50", "categoryId": "c2", "memo": "tip"}],
        "flagColor": "none"
    }))
    .unwrap();
    let target = target_of(&spec).unwrap();
    let item = serde_json::to_value(save_item("tx-1", &target)).unwrap();
    assert_eq!(item["id"], "tx-1");
    assert_eq!(item["category_id"], serde_json::Value::Null);
    assert_eq!(item["flag_color"], serde_json::Value::Null);
    assert_eq!(item["subtransactions"][0]["amount"], -4000);
    assert_eq!(item["subtransactions"][1]["memo"], "tip");
    assert!(
        item.get("memo").is_none(),
        "an unmanaged memo is not sent: {item}"
    );
    let bad: TransactionSpec = serde_json::from_value(json!({
        "budgetRef": {"name": "b"}, "transactionId": "tx-1",
        "split": [{"amount": "4,00", "categoryId": "c1"}, {"amount": "1", "categoryId": "c2"}]
    }))
    .unwrap();
    assert!(target_of(&bad).is_err());
}
