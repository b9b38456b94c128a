//! Unit tests of `logic/budget/mirror.rs`.

use serde_json::{Value, json};

use super::*;

fn tx(id: &str, category: Option<&str>, deleted: bool) -> Value {
    json!({"id": id, "date": "2026-09-16", "amount": -8400, "memo": null, "cleared": "uncleared",
           "approved": false, "flag_color": null, "account_id": "acc-1", "payee_id": null,
           "category_id": category, "transfer_account_id": null, "deleted": deleted})
}

fn category(id: &str, name: &str, deleted: bool) -> Value {
    json!({"id": id, "category_group_id": "grp-1", "name": name, "hidden": false, "internal": false,
           "budgeted": 0, "activity": 0, "balance": 0, "deleted": deleted})
}

fn sub(id: &str, tx: &str, deleted: bool) -> Value {
    json!({"id": id, "transaction_id": tx, "amount": -4200, "memo": null, "payee_id": null,
           "category_id": "cat-1", "transfer_account_id": null, "deleted": deleted})
}

fn plan(
    transactions: Vec<Value>,
    categories: Vec<Value>,
    subtransactions: Vec<Value>,
) -> PlanDetail {
    serde_json::from_value(json!({
        "id": "plan-1", "name": "Household",
        "currency_format": {"iso_code": "EUR", "example_format": "123 456,78", "decimal_digits": 2,
            "decimal_separator": ",", "symbol_first": false, "group_separator": " ",
            "currency_symbol": "€", "display_symbol": true},
        "accounts": [], "payees": [], "payee_locations": [], "category_groups": [],
        "categories": categories, "months": [], "transactions": transactions,
        "subtransactions": subtransactions, "scheduled_transactions": [], "scheduled_subtransactions": []
    }))
    .expect("a valid plan export")
}

#[test]
fn a_full_sync_then_deltas_upsert_and_delete() {
    let mut m = Mirror::default();
    let full = plan(
        vec![tx("tx-1", None, false), tx("tx-2", Some("cat-1"), false)],
        vec![category("cat-1", "Groceries", false)],
        vec![],
    );
    assert_eq!(
        m.apply(full, 10),
        Changes {
            upserted: 3,
            deleted: 0
        }
    );
    assert_eq!(m.plan_name, "Household");
    assert_eq!(
        m.currency,
        Some(Currency {
            iso_code: "EUR".into(),
            decimal_digits: 2
        })
    );
    assert_eq!(
        m.counts(),
        MirrorCounts {
            accounts: 0,
            categories: 1,
            payees: 0,
            transactions: 2
        }
    );

    let delta = plan(
        vec![tx("tx-1", Some("cat-1"), false), tx("tx-2", None, true)],
        vec![],
        vec![],
    );
    assert_eq!(
        m.apply(delta, 12),
        Changes {
            upserted: 1,
            deleted: 1
        }
    );
    assert_eq!(m.server_knowledge, 12);
    assert_eq!(m.transactions["tx-1"].category_id.as_deref(), Some("cat-1"));
    assert!(!m.transactions.contains_key("tx-2"));
    // Names and currency survive a delta that does not repeat them.
    assert_eq!(m.categories["cat-1"].name, "Groceries");
}

#[test]
fn only_real_changes_are_reported() {
    let mut m = Mirror::default();
    let full = plan(
        vec![tx("tx-1", None, false), tx("tx-2", Some("cat-1"), false)],
        vec![],
        vec![],
    );
    assert_eq!(m.changed_transactions(&full), ["tx-1", "tx-2"]);
    m.apply(full, 10);
    // The echo of what the mirror already holds is not a change; an edit and a deletion are.
    let delta = plan(
        vec![
            tx("tx-1", None, false),
            tx("tx-2", Some("cat-2"), false),
            tx("tx-3", None, true),
        ],
        vec![],
        vec![],
    );
    assert_eq!(m.changed_transactions(&delta), ["tx-2"]);
    let gone = plan(vec![tx("tx-1", None, true)], vec![], vec![]);
    assert_eq!(m.changed_transactions(&gone), ["tx-1"]);
    let split = plan(
        vec![tx("tx-1", None, false)],
        vec![],
        vec![sub("s-1", "tx-1", false)],
    );
    assert_eq!(m.changed_transactions(&split), ["tx-1"]);
}

#[test]
fn an_older_answer_is_ignored() {
    let mut m = Mirror::default();
    m.apply(
        plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
        20,
    );
    let stale = plan(vec![tx("tx-1", None, false)], vec![], vec![]);
    assert_eq!(m.apply(stale, 19), Changes::default());
    assert_eq!(m.transactions["tx-1"].category_id.as_deref(), Some("cat-1"));
}

#[test]
fn split_lines_follow_their_transaction() {
    let mut m = Mirror::default();
    let split = plan(
        vec![tx("tx-1", None, false)],
        vec![],
        vec![sub("s-1", "tx-1", false), sub("s-2", "tx-1", false)],
    );
    m.apply(split, 5);
    assert_eq!(m.subtransactions["tx-1"].len(), 2);
    // A line deleted in YNAB leaves; one re-sent replaces its old copy.
    m.apply(
        plan(
            vec![],
            vec![],
            vec![sub("s-1", "tx-1", true), sub("s-2", "tx-1", false)],
        ),
        6,
    );
    assert_eq!(
        m.subtransactions["tx-1"]
            .iter()
            .map(|l| l.id.as_str())
            .collect::<Vec<_>>(),
        ["s-2"]
    );
    // A changed transaction comes with its lines: the old ones go.
    m.apply(
        plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
        7,
    );
    assert!(!m.subtransactions.contains_key("tx-1"));
    // Lines of a deleted transaction go with it.
    m.apply(
        plan(
            vec![tx("tx-1", None, false)],
            vec![],
            vec![sub("s-3", "tx-1", false)],
        ),
        8,
    );
    m.apply(plan(vec![tx("tx-1", None, true)], vec![], vec![]), 9);
    assert!(m.subtransactions.is_empty() && m.transactions.is_empty());
}

#[test]
fn a_transaction_waits_for_a_category_only_where_ynab_gives_one() {
    let mut m = Mirror::default();
    let mut offbudget = tx("tx-tracking", None, false);
    offbudget["account_id"] = json!("acc-tracking");
    let mut transfer = tx("tx-transfer", None, false);
    transfer["transfer_account_id"] = json!("acc-2");
    m.apply(
        plan(
            vec![
                tx("tx-waiting", None, false),
                tx("tx-done", Some("cat-1"), false),
                tx("tx-split", None, false),
                offbudget,
                transfer,
            ],
            vec![],
            vec![sub("s-1", "tx-split", false)],
        ),
        5,
    );
    m.accounts.insert(
        "acc-tracking".into(),
        serde_json::from_value(json!({"id": "acc-tracking", "name": "Assurance Vie",
            "type": "otherAsset", "on_budget": false, "closed": false, "balance": 0,
            "cleared_balance": 0, "uncleared_balance": 0, "transfer_payee_id": "p",
            "deleted": false}))
        .unwrap(),
    );
    let mut waiting: Vec<&str> = m
        .transactions
        .values()
        .filter(|t| m.is_uncategorised(t))
        .map(|t| t.id.as_str())
        .collect();
    waiting.sort();
    assert_eq!(waiting, ["tx-waiting"]);
}

#[test]
fn a_full_read_knows_no_history_before_it_and_deltas_record_when_records_changed() {
    let mut m = Mirror::default();
    assert_eq!(
        m.changed_since("tx-1", 0),
        None,
        "an empty mirror knows nothing"
    );
    let both = vec![tx("tx-1", None, false), tx("tx-2", None, false)];
    m.apply(plan(both, vec![], vec![]), 10);
    assert_eq!(m.changed_since("tx-1", 9), None, "before the full read");
    assert_eq!(m.changed_since("tx-1", 10), Some(false));
    m.apply(
        plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
        14,
    );
    assert_eq!(m.changed_since("tx-1", 10), Some(true));
    assert_eq!(m.changed_since("tx-1", 14), Some(false));
    assert_eq!(m.changed_since("tx-2", 10), Some(false));
}

#[test]
fn a_deleted_transaction_stays_changed_since_before_its_deletion() {
    // Its record is gone from the mirror; when it last changed is not: a write decided before
    // the deletion must not be settled as if nothing happened to the transaction since.
    let mut m = Mirror::default();
    m.apply(plan(vec![tx("tx-1", None, false)], vec![], vec![]), 10);
    m.apply(plan(vec![tx("tx-1", None, true)], vec![], vec![]), 12);
    assert!(!m.transactions.contains_key("tx-1"));
    assert_eq!(m.changed_since("tx-1", 10), Some(true));
    assert_eq!(m.changed_since("tx-1", 12), Some(false));
}

#[test]
fn a_written_record_counts_as_changed_until_a_delta_says_when() {
    let mut m = Mirror::default();
    m.apply(plan(vec![tx("tx-1", None, false)], vec![], vec![]), 10);
    let mut written = tx("tx-1", Some("cat-1"), false);
    written["subtransactions"] = json!([]);
    written["account_name"] = json!("Checking");
    let detail: TransactionDetail = serde_json::from_value(written).expect("a detail");
    m.record_written(vec![detail]);
    assert_eq!(m.changed_since("tx-1", 10), Some(true));
    m.apply(
        plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
        12,
    );
    assert_eq!(m.changed_since("tx-1", 12), Some(false));
    assert_eq!(m.changed_since("tx-1", 11), Some(true));
}

#[test]
fn a_read_back_to_an_older_knowledge_extends_the_history() {
    let mut m = Mirror::default();
    let both = vec![tx("tx-1", None, false), tx("tx-2", None, false)];
    m.apply(plan(both, vec![], vec![]), 10);
    // tx-2 changed after 6; tx-1 did not. The answer comes at 11, with tx-3 new since 10.
    let back = plan(
        vec![tx("tx-2", Some("cat-1"), false), tx("tx-3", None, false)],
        vec![],
        vec![],
    );
    let changed: HashSet<String> = ["tx-2".to_owned(), "tx-3".to_owned()].into();
    m.learn_unchanged_since(6, &changed, 11);
    m.apply(back, 11);
    assert_eq!(m.history_from, 6);
    assert_eq!(m.changed_since("tx-1", 6), Some(false));
    assert_eq!(m.changed_since("tx-2", 6), Some(true));
    assert_eq!(m.changed_since("tx-3", 6), Some(true));
    assert_eq!(
        m.changed_since("tx-1", 5),
        None,
        "still older than what was read"
    );
}

#[test]
fn a_read_back_answered_before_the_mirror_teaches_nothing() {
    let mut m = Mirror::default();
    m.apply(plan(vec![tx("tx-1", None, false)], vec![], vec![]), 10);
    m.learn_unchanged_since(6, &HashSet::new(), 9);
    assert_eq!(m.history_from, 10);
    assert_eq!(m.changed_since("tx-1", 6), None);
}

#[test]
fn a_read_back_leaves_what_a_newer_write_brought() {
    let mut m = Mirror::default();
    m.apply(plan(vec![tx("tx-1", None, false)], vec![], vec![]), 10);
    m.changed_at.insert("tx-1".into(), i64::MAX);
    m.learn_unchanged_since(6, &HashSet::new(), 11);
    assert_eq!(m.changed_since("tx-1", 6), Some(true));
}
