//! Unit tests of `logic/approval/edited.rs`.

use serde_json::json;

use super::*;
use crate::api::plan::{CategorizationPlanSpec, CategorizationPlanStatus};
use crate::api::transaction::{TransactionSpec, TransactionStatus};
use crate::logic::plan::fixtures::{assign, at, mirror};
use crate::logic::plan::preview;
use crate::logic::transaction::converge;

fn changes(assignments: &[(&str, &str)]) -> Vec<PlannedChange> {
    let assignments: Vec<_> = assignments.iter().map(|(t, c)| assign(t, c)).collect();
    preview(&assignments, &at(&mirror())).changes
}

fn when(minute: u32) -> Timestamp {
    format!("2026-12-07T10:{minute:02}:00Z")
        .parse()
        .expect("a time")
}

/// A Transaction whose status says it last wrote `category` to `id` at `minute`.
fn transaction(id: &str, category: Option<&str>, minute: u32) -> Transaction {
    let spec: TransactionSpec =
        serde_json::from_value(json!({"budgetRef": {"name": "household"}, "transactionId": id}))
            .expect("a spec");
    let mut t = Transaction::new(&format!("t-{id}"), spec);
    t.metadata.namespace = Some("home".into());
    t.status = Some(
        serde_json::from_value::<TransactionStatus>(json!({"applied": {
            "hash": "h", "categoryId": category, "at": when(minute).to_string()}}))
        .expect("a status"),
    );
    t
}

/// A plan in `phase` whose preview moves each `(id, category)`, applied at `minute`.
fn plan(phase: &str, moves: &[(&str, Option<&str>)], minute: u32) -> CategorizationPlan {
    let spec: CategorizationPlanSpec =
        serde_json::from_value(json!({"budgetRef": {"name": "household"}})).expect("a spec");
    let mut p = CategorizationPlan::new("p", spec);
    p.metadata.namespace = Some("home".into());
    let changes: Vec<_> = moves
        .iter()
        .map(|(id, c)| json!({"transactionId": id, "date": "2026-09-16", "amount": "-1.00", "toCategoryId": c}))
        .collect();
    p.status = Some(
        serde_json::from_value::<CategorizationPlanStatus>(json!({
            "phase": phase,
            "appliedAt": when(minute).to_string(),
            "preview": {"hash": "h", "serverKnowledge": 1, "changeCount": changes.len(),
                "changes": changes, "unchangedCount": 0}}))
        .expect("a status"),
    );
    p
}

/// What `transactions` and `plans` last wrote to tx-048 and tx-065 of Budget household.
fn last_of(transactions: &[Transaction], plans: &[CategorizationPlan]) -> LastWritten {
    let mut written = Written::default();
    transactions.iter().for_each(|t| written.transaction(t));
    plans.iter().for_each(|p| written.plan(p));
    let ids: HashSet<&str> = ["tx-048", "tx-065"].into();
    written.of("home", "household", &ids, "")
}

/// What the last write to a transaction was, as a case expects it.
type Expected<'a> = Option<Vec<Option<&'a str>>>;

#[test]
fn the_latest_write_of_any_object_is_what_ledgerops_last_wrote() {
    let cases: Vec<(&str, Vec<Transaction>, Vec<CategorizationPlan>, Expected)> = vec![
        ("nothing wrote it", vec![], vec![], None),
        (
            "a Transaction",
            vec![transaction("tx-065", Some("cat-a"), 1)],
            vec![],
            Some(vec![Some("cat-a")]),
        ),
        (
            "a plan applied after the Transaction",
            vec![transaction("tx-065", Some("cat-a"), 1)],
            vec![plan("Applied", &[("tx-065", Some("cat-b"))], 2)],
            Some(vec![Some("cat-b")]),
        ),
        (
            "a Transaction after the plan",
            vec![transaction("tx-065", Some("cat-a"), 3)],
            vec![plan("Applied", &[("tx-065", Some("cat-b"))], 2)],
            Some(vec![Some("cat-a")]),
        ),
        (
            "a plan and its undo within the same second: either may be last",
            vec![],
            vec![
                plan("Applied", &[("tx-065", Some("cat-b"))], 2),
                plan("Applied", &[("tx-065", None)], 2),
            ],
            Some(vec![Some("cat-b"), None]),
        ),
        (
            "a partly applied plan counts",
            vec![],
            vec![plan("PartiallyApplied", &[("tx-065", None)], 2)],
            Some(vec![None]),
        ),
        (
            "a plan that failed after part of it landed counts",
            vec![],
            vec![plan("Failed", &[("tx-065", None)], 2)],
            Some(vec![None]),
        ),
        (
            "a plan that was only previewed does not",
            vec![transaction("tx-065", Some("cat-a"), 1)],
            vec![plan("AwaitingApproval", &[("tx-065", Some("cat-b"))], 2)],
            Some(vec![Some("cat-a")]),
        ),
        (
            "another Budget's writes do not",
            vec![{
                let mut t = transaction("tx-065", Some("cat-a"), 1);
                t.spec.budget_ref.name = "other".into();
                t
            }],
            vec![],
            None,
        ),
        (
            "another namespace's writes do not",
            vec![{
                let mut t = transaction("tx-065", Some("cat-a"), 1);
                t.metadata.namespace = Some("elsewhere".into());
                t
            }],
            vec![],
            None,
        ),
        (
            "another transaction's writes do not",
            vec![transaction("tx-066", Some("cat-a"), 1)],
            vec![plan("Applied", &[("tx-066", Some("cat-b"))], 2)],
            None,
        ),
    ];
    for (name, transactions, plans, expected) in cases {
        let last = last_of(&transactions, &plans);
        let found: Option<Vec<Option<&str>>> = last
            .categories("tx-065")
            .map(|c| c.iter().map(Option::as_deref).collect());
        assert_eq!(found, expected, "{name}");
    }
}

#[test]
fn a_write_the_policy_would_run_over_an_edit_asks_a_person() {
    let run = Decision {
        action: Action::Run,
        reason: "small".into(),
    };
    let name = |id: &str| mirror().categories.get(id).map(|c| c.name.clone());
    // tx-065 shows Groceries; tx-048 shows no category.
    let cases: Vec<(&str, Vec<PlannedChange>, Vec<Transaction>, Decision)> = vec![
        (
            "ledgerops never wrote it",
            changes(&[("tx-065", "cat-transport")]),
            vec![],
            run.clone(),
        ),
        (
            "it still shows what ledgerops wrote",
            changes(&[("tx-065", "cat-transport")]),
            vec![transaction("tx-065", Some("cat-groceries"), 1)],
            run.clone(),
        ),
        (
            "written twice within one second, it shows one of the two",
            changes(&[("tx-065", "cat-transport")]),
            vec![
                transaction("tx-065", Some("cat-transport"), 1),
                transaction("tx-065", Some("cat-groceries"), 1),
            ],
            run.clone(),
        ),
        (
            "someone moved it since ledgerops wrote it",
            changes(&[("tx-065", "cat-transport")]),
            vec![transaction("tx-065", Some("cat-transport"), 1)],
            Decision {
                action: Action::Ask,
                reason: "tx-065 shows \"Groceries\" (cat-groceries) in YNAB, set by someone else since ledgerops wrote \"Transport\" (cat-transport): a person decides whether to write over that edit".into(),
            },
        ),
        (
            "someone took away the category ledgerops wrote",
            changes(&[("tx-048", "cat-transport")]),
            vec![transaction("tx-048", Some("cat-gone"), 1)],
            Decision {
                action: Action::Ask,
                reason: "tx-048 shows no category in YNAB, set by someone else since ledgerops wrote cat-gone: a person decides whether to write over that edit".into(),
            },
        ),
    ];
    for (case, changes, transactions, expected) in cases {
        let decided = respect(
            run.clone(),
            &changes,
            |_: &HashSet<&str>| Some(last_of(&transactions, &[])),
            name,
        );
        assert_eq!(decided, Ok(expected), "{case}");
    }
}

#[test]
fn only_a_write_that_would_run_is_looked_at() {
    let edited = changes(&[("tx-065", "cat-transport")]);
    for action in [Action::Ask, Action::Block] {
        let decision = Decision {
            action,
            reason: "as decided".into(),
        };
        let decided = respect(
            decision.clone(),
            &edited,
            |_: &HashSet<&str>| panic!("the objects are not read"),
            |_| None,
        );
        assert_eq!(decided, Ok(decision));
    }
    let nothing = Decision {
        action: Action::Run,
        reason: "there is nothing to write".into(),
    };
    let decided = respect(
        nothing.clone(),
        &[],
        |_: &HashSet<&str>| panic!("the objects are not read"),
        |_| None,
    );
    assert_eq!(decided, Ok(nothing));
}

#[test]
fn a_write_that_would_run_waits_while_what_was_written_is_unknown() {
    let edited = changes(&[("tx-065", "cat-transport")]);
    let run = Decision {
        action: Action::Run,
        reason: "small".into(),
    };
    let waiting = respect(run, &edited, |_: &HashSet<&str>| None, |_| None);
    assert_eq!(waiting, Err(NotListed));
    let ask = Decision {
        action: Action::Ask,
        reason: "large".into(),
    };
    let asked = respect(ask.clone(), &edited, |_: &HashSet<&str>| None, |_| None);
    assert_eq!(asked, Ok(ask));
}

/// `t` with a write to `category` started at `minute` on `knowledge` and not settled.
fn writing(mut t: Transaction, category: &str, minute: u32, knowledge: i64) -> Transaction {
    t.spec.category_id = Some(category.into());
    let target = converge::target_of(&t.spec).expect("a target").hash();
    let status = t.status.get_or_insert_with(Default::default);
    status.intent = Some(
        serde_json::from_value(json!({"attemptId": "a", "targetHash": target,
            "knowledge": knowledge, "startedAt": when(minute).to_string()}))
        .expect("an intent"),
    );
    t
}

/// `p` with its write open, decided on `knowledge`.
fn applying(mut p: CategorizationPlan, name: &str, knowledge: i64) -> CategorizationPlan {
    p.metadata.name = Some(name.into());
    let status = p.status.as_mut().expect("a status");
    status.intent = Some(
        serde_json::from_value(json!({"attemptId": "b", "targetHash": "h",
            "knowledge": knowledge, "startedAt": when(5).to_string()}))
        .expect("an intent"),
    );
    p
}

#[test]
fn a_write_not_settled_yet_counts_as_written_for_every_other_object() {
    let ids: HashSet<&str> = ["tx-065"].into();
    let categories = |w: &Written, asking: &str| -> Option<Vec<Option<String>>> {
        w.of("home", "household", &ids, asking)
            .categories("tx-065")
            .map(<[_]>::to_vec)
    };
    let mut written = Written::default();
    let t = transaction("tx-065", Some("cat-a"), 1);
    let open = writing(t.clone(), "cat-b", 2, 40);
    written.transaction(&open);
    let both = Some(vec![Some("cat-a".to_owned()), Some("cat-b".to_owned())]);
    assert_eq!(
        categories(&written, "home/Plan/p"),
        both,
        "either may be in YNAB"
    );
    assert_eq!(
        categories(&written, &key_of(&open)),
        Some(vec![Some("cat-a".to_owned())]),
        "the object that wrote it settles its own write"
    );
    // Never written before: the open write alone.
    let mut fresh = Written::default();
    let mut first = writing(t.clone(), "cat-b", 2, 40);
    first.status.as_mut().unwrap().applied = None;
    fresh.transaction(&first);
    assert_eq!(categories(&fresh, ""), Some(vec![Some("cat-b".to_owned())]));
    // A spec edited since no longer says what the open write writes: it matches nothing.
    let mut edited = first.clone();
    edited.spec.category_id = Some("cat-x".into());
    let mut unknown = Written::default();
    unknown.transaction(&edited);
    assert_eq!(
        categories(&unknown, ""),
        Some(vec![]),
        "nothing it shows is ours"
    );
    // Settled, it is what its status says; deleted unsettled, it is forgotten.
    written.transaction(&t);
    assert_eq!(
        categories(&written, ""),
        Some(vec![Some("cat-a".to_owned())])
    );
    fresh.gone(&first);
    assert_eq!(categories(&fresh, ""), None);
    // A plan's open write counts its preview's targets.
    let p = applying(plan("Applying", &[("tx-065", Some("cat-c"))], 3), "p-1", 30);
    fresh.plan(&p);
    assert_eq!(categories(&fresh, ""), Some(vec![Some("cat-c".to_owned())]));
}

#[test]
fn one_read_back_reaches_the_oldest_unsettled_write_of_a_budget() {
    let mut written = Written::default();
    assert_eq!(written.oldest_open("home", "household"), None);
    let t = |id: &str, k| writing(transaction(id, None, 1), "cat-b", 2, k);
    written.transaction(&t("tx-065", 40));
    written.transaction(&t("tx-066", 35));
    written.plan(&applying(plan("Applying", &[], 3), "p-1", 50));
    let mut other = t("tx-067", 10);
    other.spec.budget_ref.name = "other".into();
    written.transaction(&other);
    assert_eq!(written.oldest_open("home", "household"), Some(35));
    written.transaction(&transaction("tx-066", None, 3));
    assert_eq!(written.oldest_open("home", "household"), Some(40));
    assert_eq!(written.oldest_open("home", "other"), Some(10));
}
