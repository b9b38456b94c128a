//! Splits with `ledgerops run`, a real API server and the YNAB simulator: a declared split is
//! written once and stays Converged through delta syncs and the full read of a restart; a person
//! who splits what ledgerops categorised, or recategorises one line of its split, makes the
//! Transaction Diverged and nothing is written; a blocked category on a split line, or a split
//! YNAB's API cannot rewrite, is Blocked before any write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use ynab_sim::{RecordKind, demo};

const SYNC: &str = "ledgerops.dev/sync-requested-at";

/// On the shared plane and controller, a Budget that writes category and split changes
/// without asking, synced.
async fn splitting(prefix: &str, approval: Value) -> Scenario {
    let s = Scenario::new(ControlPlane::shared(), prefix, demo::generate()).await;
    Ledgerops::shared().await;
    let mut policy = json!({"autoApproveFields": ["split"]});
    merge(&mut policy, approval);
    s.create_writing_budget("household", json!({"approval": policy}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s
}

fn merge(base: &mut Value, over: Value) {
    if let (Value::Object(b), Value::Object(o)) = (base, over) {
        b.extend(o);
    }
}

/// The bakery's -8.40 (tx-048) as 5.00 of groceries and 3.40 of household goods.
fn bakery_split() -> Value {
    json!({"split": [
        {"amount": "-5.00", "categoryId": category("Groceries")},
        {"amount": "-3.40", "categoryId": category("Household")}
    ]})
}

/// YNAB's lines of `id` (category, milliunits), sorted, read through the controls (uncounted).
async fn ynab_lines(s: &Scenario, id: &str) -> Vec<(Option<String>, i64)> {
    let tx = s
        .sim
        .control()
        .transaction(demo::PLAN_ID, id)
        .await
        .expect("transaction in the simulator");
    let mut lines: Vec<_> = tx
        .subtransactions
        .iter()
        .filter(|l| !l.deleted)
        .map(|l| (l.category_id.clone(), l.amount))
        .collect();
    lines.sort();
    lines
}

/// Someone edits transaction `id` in the YNAB app (`fields` as the app would save them), and
/// the Budget is asked to sync.
async fn edit_in_ynab(s: &Scenario, id: &str, fields: Value, nonce: &str) {
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, id, &fields)
        .await
        .unwrap();
    s.annotate::<Budget>("household", SYNC, nonce).await;
}

/// Split lines as YNAB holds them, for an edit made in the app.
fn lines(parent: &str, parts: &[(&str, i64)]) -> Value {
    let lines: Vec<Value> = parts
        .iter()
        .enumerate()
        .map(|(n, (name, amount))| {
            json!({"id": format!("{parent}-app-{n}"), "transaction_id": parent, "amount": amount,
                   "memo": null, "payee_id": null, "payee_name": null,
                   "category_id": category(name), "category_name": null,
                   "transfer_account_id": null, "transfer_transaction_id": null, "deleted": false})
        })
        .collect();
    json!({"category_id": null, "subtransactions": lines})
}

fn condition(tx: &Transaction, type_: &str) -> (String, String, String, Option<Time>) {
    let c = conditions::get(&tx.status.as_ref().unwrap().conditions, type_)
        .unwrap_or_else(|| panic!("no {type_} condition: {tx:#?}"));
    (
        c.status.clone(),
        c.reason.clone(),
        c.message.clone(),
        Some(c.last_transition_time.clone()),
    )
}

/// Waits until the Transaction's status shows YNAB's memo of `id` as `memo`: proof that a
/// reconcile read the mirror after the edit that set it.
async fn seen_memo(s: &Scenario, name: &str, memo: &str) -> Transaction {
    wait::until(&s.api::<Transaction>(), name, WAIT * 2, |t| {
        t.status
            .as_ref()
            .and_then(|st| st.current.as_ref())
            .and_then(|c| c.memo.as_deref())
            == Some(memo)
    })
    .await
}

#[tokio::test]
async fn a_declared_split_converges_and_stays_converged_through_a_full_resync() {
    // A plane of its own: the controller is restarted, and a restart reads the whole plan.
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "splitresync", demo::generate()).await;
    let ledgerops = Ledgerops::start(&plane).await;
    let policy = json!({"approval": {"autoApproveFields": ["split"]}});
    s.create_writing_budget("household", policy).await;
    s.wait_budget("household", BudgetPhase::Ready).await;

    s.create_transaction("basket", "household", "tx-048", bakery_split())
        .await;
    let written = s
        .wait_transaction("basket", TransactionPhase::Converged)
        .await;
    assert_eq!(condition(&written, "Ready").1, "Written");
    assert_eq!(s.requests(PATCH).await, 1);
    let mut want = vec![
        (Some(category("Groceries")), -5000),
        (Some(category("Household")), -3400),
    ];
    want.sort();
    assert_eq!(ynab_lines(&s, "tx-048").await, want);
    let converged_since = condition(&written, "Converged").3;
    s.sim.control().reset_counters().await.unwrap();

    // A delta sync brings the split back (with a memo the spec does not manage): still ours.
    edit_in_ynab(&s, "tx-048", json!({"memo": "after delta"}), "delta").await;
    let after_delta = seen_memo(&s, "basket", "after delta").await;
    assert_eq!(
        after_delta.status.as_ref().unwrap().phase,
        Some(TransactionPhase::Converged),
        "{after_delta:#?}"
    );
    assert_eq!(condition(&after_delta, "Converged").3, converged_since);
    assert_eq!(condition(&after_delta, "Valid").0, "True");

    // A restart starts from an empty mirror: the whole plan is read again.
    drop(ledgerops);
    s.sim
        .control()
        .edit(
            demo::PLAN_ID,
            RecordKind::Transaction,
            "tx-048",
            &json!({"memo": "after restart"}),
        )
        .await
        .unwrap();
    let _restarted = Ledgerops::start(&plane).await;
    let after_full = seen_memo(&s, "basket", "after restart").await;
    let status = after_full.status.as_ref().unwrap();
    assert_eq!(
        status.phase,
        Some(TransactionPhase::Converged),
        "{after_full:#?}"
    );
    assert_eq!(
        condition(&after_full, "Converged").3,
        converged_since,
        "Converged never went False: not through the delta, not through the restart"
    );
    assert!(
        s.requests("GET /v1/plans/{plan_id}").await >= 2,
        "the delta sync and the restart's full read"
    );
    assert_eq!(s.writes().await, 0, "a landed split is never written again");
    assert_eq!(ynab_lines(&s, "tx-048").await, want);
}

#[tokio::test]
async fn someone_splitting_what_ledgerops_categorised_is_reported_not_overwritten() {
    let s = splitting("splitdiverge", json!({})).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    s.sim.control().reset_counters().await.unwrap();

    let theirs = lines("tx-048", &[("Groceries", -5000), ("Restaurants", -3400)]);
    edit_in_ynab(&s, "tx-048", theirs, "split-by-spouse").await;
    let diverged = s
        .wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let (status, reason, message, _) = condition(&diverged, "Diverged");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "EditedInYnab"));
    assert!(
        message.contains("Split (Groceries -5.00, Restaurants -3.40)")
            && message.contains("last applied Groceries"),
        "{message}"
    );
    assert_eq!(condition(&diverged, "Valid").0, "True", "not Invalid");
    assert_eq!(s.writes().await, 0, "someone's split is never overwritten");
    assert_eq!(ynab_lines(&s, "tx-048").await.len(), 2);
}

#[tokio::test]
async fn recategorising_one_line_of_our_split_is_reported_and_theirs_can_be_kept() {
    let s = splitting("splitline", json!({})).await;
    s.create_transaction("basket", "household", "tx-048", bakery_split())
        .await;
    s.wait_transaction("basket", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    s.sim.control().reset_counters().await.unwrap();

    // The spouse moves the household line to Restaurants in the app.
    let held = s
        .sim
        .control()
        .transaction(demo::PLAN_ID, "tx-048")
        .await
        .unwrap();
    let mut edited = serde_json::to_value(&held.subtransactions).unwrap();
    for line in edited.as_array_mut().unwrap() {
        if line["category_id"] == json!(category("Household")) {
            line["category_id"] = json!(category("Restaurants"));
        }
    }
    edit_in_ynab(&s, "tx-048", json!({"subtransactions": edited}), "line").await;
    let diverged = s
        .wait_transaction("basket", TransactionPhase::Diverged)
        .await;
    let message = condition(&diverged, "Diverged").2;
    assert!(message.contains("Restaurants -3.40"), "{message}");
    assert_eq!(s.writes().await, 0);

    s.annotate::<Transaction>("basket", "ledgerops.dev/resolve", "theirs")
        .await;
    let kept = s
        .wait_transaction("basket", TransactionPhase::Converged)
        .await;
    assert_eq!(condition(&kept, "Ready").1, "AcceptedTheirs");
    assert_eq!(s.writes().await, 0);
    assert!(
        ynab_lines(&s, "tx-048")
            .await
            .contains(&(Some(category("Restaurants")), -3400))
    );
}

#[tokio::test]
async fn a_blocked_category_on_a_split_line_or_a_split_in_ynab_is_blocked_before_any_write() {
    let gifts = category("Gifts");
    let s = splitting("splitblocked", json!({"blockedCategoryIds": [gifts]})).await;
    let into_gifts = json!({"split": [
        {"amount": "-5.00", "categoryId": category("Groceries")},
        {"amount": "-3.40", "categoryId": gifts}
    ]});
    s.create_transaction("present", "household", "tx-048", into_gifts)
        .await;
    let blocked = s
        .wait_transaction("present", TransactionPhase::Blocked)
        .await;
    let (status, reason, message, _) = condition(&blocked, "Blocked");
    assert_eq!((status.as_str(), reason.as_str()), ("True", "Policy"));
    assert!(
        message.contains("tx-048 moves a split line into \"Gifts\"") && message.contains(&gifts),
        "{message}"
    );

    // A split YNAB already holds cannot be rewritten through its API: refused, not tried.
    let amazon = demo::generate().plans[0]
        .transactions
        .iter()
        .find(|t| t.subtransactions.len() == 3)
        .expect("the demo's three-line split")
        .summary
        .id
        .clone();
    s.create_transaction(
        "parcel",
        "household",
        &amazon,
        json!({"categoryId": category("Household")}),
    )
    .await;
    let refused = s
        .wait_transaction("parcel", TransactionPhase::Blocked)
        .await;
    let (_, reason, message, _) = condition(&refused, "Blocked");
    assert_eq!(reason, "SplitInYnab");
    assert!(message.contains(&amazon), "{message}");

    assert_eq!(s.writes().await, 0, "nothing blocked is written");
    assert!(
        s.approval_requests().await.is_empty(),
        "and nobody is asked"
    );
}
