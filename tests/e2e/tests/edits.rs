//! Approve with edits, on the real API server with `ledgerops run` and the YNAB simulator: an
//! approver drops and changes lines of a plan in the same act (`kubectl ledgerops approve
//! --drop --set`), and exactly the edited set is written, once, recorded on the request, the
//! plan, the journal and in an Event. Refused, with 0 YNAB writes: an editor's edits, an
//! approver's edits in someone else's name, categories chosen under four eyes, edits on a
//! Transaction's request, a rejection with edits, and edits naming lines the plan lacks.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::Budget;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::attacker::{approver, automation, editor};
use ledgerops_e2e::controller::plugin_as;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, bakery_and_train_plan, category, household};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};

/// How long a test watches for a write that must not happen.
const QUIET: Duration = Duration::from_secs(3);

async fn plugin(user: &str, args: &[&str]) -> (i32, String) {
    plugin_as(ControlPlane::shared(), user, args).await
}

/// The lines of [`bakery_and_train_plan`], and tx-044 to Hobbies.
fn three_lines() -> Value {
    let mut spec = bakery_and_train_plan();
    spec["assignments"]
        .as_array_mut()
        .unwrap()
        .push(json!({"transactionId": "tx-044", "categoryId": category("Hobbies")}));
    spec
}

async fn pending_request(s: &Scenario, plan: &str) -> String {
    let name = s.plan_request(plan).await;
    wait::until(&s.api::<ApprovalRequest>(), &name, WAIT, |r| {
        r.status.as_ref().and_then(|st| st.phase) == Some(ApprovalPhase::Pending)
    })
    .await;
    name
}

/// Sets `decision` on `request` as the user behind `client`: the API server's answer.
async fn decide_as(
    client: &Client,
    ns: &str,
    request: &str,
    decision: Value,
) -> Result<(), kube::Error> {
    let api: Api<ApprovalRequest> = Api::namespaced(client.clone(), ns);
    let patch = json!({"spec": {"decision": decision}});
    api.patch(request, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
}

fn refused(result: Result<(), kube::Error>, code: u16, text: &str) {
    match result {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, code, "{}", s.message);
            assert!(s.message.contains(text), "{text:?} in {}", s.message);
        }
        other => panic!("expected a refusal ({text}), got {other:?}"),
    }
}

#[tokio::test]
async fn an_approver_edits_a_plan_in_the_same_act_and_exactly_the_edited_set_is_written_once() {
    let s = household("edits-plugin", json!({"writes": {"enabled": true}})).await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    editor(ControlPlane::shared(), &s.ns, "alice").await;
    let before_044 = s.ynab_category("tx-044").await;
    s.create_plan("september", "household", three_lines()).await;
    let request = pending_request(&s, "september").await;
    s.sim.control().reset_counters().await.unwrap();

    // An editor cannot approve, with or without edits: refused by the API server.
    let edit_args = [
        "approve",
        request.as_str(),
        "-n",
        &s.ns,
        "--drop",
        "tx-044",
        "--set",
        "tx-049=Groceries",
        "--yes",
        "-m",
        "tx-049 was the market, not the train",
    ];
    let (code, out) = plugin("alice", &edit_args).await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("you are not allowed to"), "{out}");
    let r = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    assert!(r.spec.decision.is_none());

    // The approver edits and approves in one act, after the edited preview.
    let (code, out) = plugin("bob", &edit_args).await;
    println!(
        "$ kubectl ledgerops approve {request} --drop tx-044 --set tx-049=Groceries --yes\n{out}"
    );
    assert_eq!(code, 0, "{out}");
    for want in [
        "Your edits".to_owned(),
        "dropped: left as it is".into(),
        "→ Groceries".into(),
        "3 proposed; you drop 1 and set 1".into(),
        format!("Approved ApprovalRequest {request} with your edits as bob."),
        "Applied: operation".into(),
    ] {
        assert!(out.contains(&want), "{want:?} in {out}");
    }
    let applied = s.wait_plan("september", PlanPhase::Applied).await;

    // Exactly the edited set, in one bulk update.
    assert_eq!(s.ynab_category("tx-048").await, Some(category("Groceries")));
    assert_eq!(s.ynab_category("tx-049").await, Some(category("Groceries")));
    assert_eq!(s.ynab_category("tx-044").await, before_044, "dropped");
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(s.writes().await, 1);

    // Recorded: the request (who, what, and the edited preview it was spent on), the plan's
    // decision, the journal, and an Event for the proposer.
    let r = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    let decision = r.spec.decision.clone().unwrap();
    assert_eq!(decision.by, "bob");
    let edits = decision.edits.unwrap();
    assert_eq!(edits.drop, ["tx-044"]);
    assert_eq!(edits.set[0].transaction_id, "tx-049");
    assert_eq!(edits.set[0].category_id, category("Groceries"));
    let used = r.status.unwrap().used.unwrap();
    let written_hash = used.preview_hash.expect("the edited preview's hash");
    assert_ne!(written_hash, r.spec.preview_hash, "bound to its own hash");
    let status = applied.status.unwrap();
    let record = status.decision.unwrap();
    assert_eq!(
        record.edits.as_ref().map(|e| e.drop.clone()),
        Some(vec!["tx-044".to_owned()])
    );
    assert_eq!(record.edited_hash.as_deref(), Some(written_hash.as_str()));
    assert_eq!(status.progress.unwrap().total, 2);
    let operation = status.operation_id.unwrap();
    let journal = s
        .api::<ConfigMap>()
        .get(&format!("ledgerops-journal-{operation}-0"))
        .await
        .unwrap();
    let text = serde_json::to_string(&journal.data).unwrap();
    assert!(
        text.contains(&written_hash) && text.contains("tx-044"),
        "{text}"
    );
    let event = s.wait_event("ApprovedWithEdits", Some("september")).await;
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains("bob approved ApprovalRequest")
            && note.contains("dropped tx-044")
            && note.contains("set tx-049 to Groceries"),
        "{note}"
    );

    // Undone as one operation: only what was written is reverted.
    s.create_plan("undo", "household", json!({"undoOf": "september"}))
        .await;
    let undo = s.approve_plan("undo").await;
    assert_eq!(undo.status.unwrap().progress.unwrap().total, 2);
    assert_eq!(s.ynab_category("tx-044").await, before_044);
}

#[tokio::test]
async fn edits_nobody_may_make_are_refused_and_write_nothing() {
    let s = household(
        "edits-refused",
        json!({"writes": {"enabled": true}, "approval": {"fourEyes": true}}),
    )
    .await;
    let bob = approver(ControlPlane::shared(), &s.ns, "bob").await;
    let ci = automation(ControlPlane::shared(), &s.ns, "ci").await;
    s.create_plan("september", "household", three_lines()).await;
    let request = pending_request(&s, "september").await;
    s.sim.control().reset_counters().await.unwrap();
    let set = json!({"set": [{"transactionId": "tx-049", "categoryId": category("Groceries")}]});

    // An automation holding the edit role, and an approver's edits in someone else's name.
    let as_bob = json!({"verdict": "Approve", "by": "bob", "edits": {"drop": ["tx-044"]}});
    refused(
        decide_as(&ci, &s.ns, &request, as_bob.clone()).await,
        403,
        "",
    );
    let as_carol = json!({"verdict": "Approve", "by": "carol", "edits": {"drop": ["tx-044"]}});
    refused(
        decide_as(&bob, &s.ns, &request, as_carol).await,
        403,
        "must be your own user name",
    );
    // Under four eyes, a category the approver chooses is their own proposal.
    let setting = json!({"verdict": "Approve", "by": "bob", "edits": set});
    refused(
        decide_as(&bob, &s.ns, &request, setting).await,
        403,
        "four eyes",
    );
    let (code, out) = plugin(
        "bob",
        &[
            "approve",
            &request,
            "-n",
            &s.ns,
            "--set",
            "tx-049=Groceries",
            "--yes",
        ],
    )
    .await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("four eyes"), "{out}");
    // A rejection rejects the whole proposal; empty edits say nothing.
    let rejecting =
        json!({"verdict": "Reject", "by": "bob", "comment": "no", "edits": {"drop": ["tx-044"]}});
    refused(
        decide_as(&bob, &s.ns, &request, rejecting).await,
        422,
        "only an approval carries edits",
    );
    let empty = json!({"verdict": "Approve", "by": "bob", "edits": {}});
    refused(
        decide_as(&bob, &s.ns, &request, empty).await,
        422,
        "edits must drop or set at least one transaction",
    );
    // Admitted, but naming a line the plan does not hold: ledgerops writes nothing under it.
    let stray = json!({"verdict": "Approve", "by": "bob", "edits": {"drop": ["tx-065"]}});
    decide_as(&bob, &s.ns, &request, stray).await.unwrap();
    let blocked = wait::until(&s.api::<CategorizationPlan>(), "september", WAIT, |p| {
        p.status.as_ref().and_then(|st| st.phase) == Some(PlanPhase::Blocked)
    })
    .await;
    let ready = blocked
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(ready.reason, "EditsRefused");
    assert!(
        ready.message.contains("tx-065 is not in the proposal"),
        "{}",
        ready.message
    );
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.writes().await, 0);
    assert_eq!(s.requests(PATCH).await, 0);
}

#[tokio::test]
async fn a_transactions_approval_carries_no_edits() {
    let s = household("edits-tx", json!({"writes": {"enabled": true}})).await;
    let bob = approver(ControlPlane::shared(), &s.ns, "bob").await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    let request = s
        .approval_requests()
        .await
        .into_iter()
        .find_map(|r| r.metadata.name)
        .unwrap();
    wait::until(&s.api::<ApprovalRequest>(), &request, WAIT, |r| {
        r.status.as_ref().and_then(|st| st.phase) == Some(ApprovalPhase::Pending)
    })
    .await;
    s.sim.control().reset_counters().await.unwrap();
    let edits = json!({"verdict": "Approve", "by": "bob", "edits": {"drop": ["tx-048"]}});
    refused(
        decide_as(&bob, &s.ns, &request, edits).await,
        403,
        "only the approval of a CategorizationPlan carries edits",
    );
    let (code, out) = plugin(
        "bob",
        &[
            "approve", &request, "-n", &s.ns, "--drop", "tx-048", "--yes",
        ],
    )
    .await;
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("only a plan's approval carries edits"),
        "{out}"
    );
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.writes().await, 0);
    let budget = s.api::<Budget>().get("household").await.unwrap();
    let listed = budget.status.unwrap().categories;
    assert!(
        listed.iter().any(|c| c.name == "Groceries"),
        "the Budget lists the categories an approver may name"
    );
}
