//! Approvals: nothing reaches YNAB unless a person approved that exact change, once. Where an
//! attack needs to get past admission (a cluster installed without the policy), the test writes
//! as `admin`, the identity the controller runs as in these suites, and asserts that the
//! controller's own checks still refuse.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::Budget;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::attacker::{approver, attacker};
use ledgerops_e2e::scenario::{PATCH, Scenario, bakery_and_train_plan, category, household};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use ynab_sim::{RecordKind, demo};

/// How long a test watches for a write that must not happen.
const QUIET: Duration = Duration::from_secs(4);

fn name(r: &ApprovalRequest) -> String {
    r.metadata.name.clone().unwrap()
}

/// `bob`, an approver, decides `request` in his own name.
async fn bob_decides(s: &Scenario, request: &str, verdict: &str) {
    let bob = approver(ControlPlane::shared(), &s.ns, "bob").await;
    let patch =
        json!({"spec": {"decision": {"verdict": verdict, "by": "bob", "comment": "checked"}}});
    Api::<ApprovalRequest>::namespaced(bob, &s.ns)
        .patch(request, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("bob deciding {request}: {e}"));
}

async fn wait_request(s: &Scenario, request: &str, phase: ApprovalPhase) -> ApprovalRequest {
    wait::until(
        &s.api::<ApprovalRequest>(),
        request,
        Duration::from_secs(60),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(phase),
    )
    .await
}

/// Waits until the namespace holds `n` ApprovalRequests, and returns them oldest first.
async fn wait_requests(s: &Scenario, n: usize) -> Vec<ApprovalRequest> {
    for _ in 0..300 {
        let all = s.approval_requests().await;
        if all.len() >= n {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the namespace never held {n} ApprovalRequests");
}

async fn nudge<K>(s: &Scenario, name: &str)
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let nonce = format!("{:?}", std::time::Instant::now());
    s.annotate::<K>(name, "tests.ledgerops.dev/nudge", &nonce)
        .await;
}

fn forbidden(result: Result<impl std::fmt::Debug, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(e)) if e.code == 403 => e.message,
        other => panic!("expected a 403 refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_forged_plan_status_writes_nothing() {
    let s = household("forged-status", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let waiting = s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let real_hash = waiting.status.unwrap().preview.unwrap().hash;
    // The review's attack: intent and preview agree, and the preview moves a transaction that
    // is in no plan (Insurance → Hobbies) under an operation id the attacker chose.
    let forged = json!({"status": {
        "phase": "Applying",
        "intent": {"attemptId": "alice-op", "targetHash": "f".repeat(64), "startedAt": "2026-01-01T00:00:00Z"},
        "preview": {"hash": "f".repeat(64), "serverKnowledge": 1, "changeCount": 1, "unchangedCount": 0,
            "changes": [{"transactionId": "tx-044", "date": "2026-09-01", "amount": "-50.00",
                "fromCategoryId": category("Insurance"), "toCategoryId": category("Hobbies")}]},
    }});
    let alice = attacker(ControlPlane::shared(), &s.ns, "alice").await;
    let message = forbidden(
        Api::<CategorizationPlan>::namespaced(alice, &s.ns)
            .patch_status("september", &PatchParams::default(), &Patch::Merge(&forged))
            .await,
    );
    assert!(message.contains("alice"), "{message}");

    // Past admission, the controller still writes only what the spec and YNAB say.
    let before = s.ynab_category("tx-044").await;
    s.api::<CategorizationPlan>()
        .patch_status("september", &PatchParams::default(), &Patch::Merge(&forged))
        .await
        .unwrap();
    nudge::<CategorizationPlan>(&s, "september").await;
    let plan = wait::until(
        &s.api::<CategorizationPlan>(),
        "september",
        Duration::from_secs(30),
        |p| {
            p.status.as_ref().is_some_and(|st| {
                st.phase == Some(PlanPhase::AwaitingApproval)
                    && st.preview.as_ref().is_some_and(|pr| pr.hash == real_hash)
            })
        },
    )
    .await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.writes().await, 0, "YNAB saw a write");
    assert_eq!(s.ynab_category("tx-044").await, before);
    assert_ne!(
        plan.status.unwrap().operation_id.as_deref(),
        Some("alice-op")
    );
}

#[tokio::test]
async fn a_plan_edited_after_its_approval_needs_a_new_one() {
    // Read-only first, so the approval cannot be spent before the edit.
    let s = household("edited", json!({})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let first = name(&wait_requests(&s, 1).await[0]);
    bob_decides(&s, &first, "Approve").await;
    s.wait_plan("september", PlanPhase::ReadOnly).await;

    s.add_assignment("september", "tx-044", "Hobbies").await;
    let enable = json!({"spec": {"writes": {"enabled": true}}});
    s.api::<Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&enable))
        .await
        .unwrap();
    let stale = wait_request(&s, &first, ApprovalPhase::Stale).await;
    assert_eq!(stale.spec.changes.len(), 2);
    let all = wait_requests(&s, 2).await;
    let second = all.iter().find(|r| name(r) != first).unwrap();
    assert_eq!(
        second.spec.changes.len(),
        3,
        "the new preview shows the edit"
    );
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(
        s.writes().await,
        0,
        "the old approval wrote the edited plan"
    );

    bob_decides(&s, &name(second), "Approve").await;
    let applied = s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(s.writes().await, 1);
    assert_eq!(s.ynab_category("tx-044").await, Some(category("Hobbies")));
    let status = applied.status.unwrap();
    let decision = status.decision.expect("the decision is kept by the plan");
    assert_eq!(
        (decision.verdict.as_str(), decision.by.as_str()),
        ("Approve", "bob")
    );
    let spent = wait_request(&s, &name(second), ApprovalPhase::Applied).await;
    assert!(spent.status.unwrap().used.unwrap().completed_at.is_some());
    // The journal keeps who approved, and cannot be edited.
    let journal = s
        .api::<ConfigMap>()
        .get(&format!(
            "ledgerops-journal-{}-0",
            status.operation_id.unwrap()
        ))
        .await
        .unwrap();
    assert_eq!(journal.immutable, Some(true));
    let entry: Value = serde_json::from_str(&journal.data.unwrap()["entry.json"]).unwrap();
    assert_eq!(entry["decision"]["by"], "bob");
}

#[tokio::test]
async fn an_approval_is_never_carried_over_to_a_recreated_transaction() {
    let s = household("orphan", json!({"writes": {"enabled": true}})).await;
    let spec = json!({"categoryId": category("Groceries")});
    s.create_transaction("bakery", "household", "tx-048", spec.clone())
        .await;
    s.wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    let first = name(&wait_requests(&s, 1).await[0]);
    bob_decides(&s, &first, "Approve").await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);

    // Delete the Transaction but keep its (spent) request, then declare the same move for a
    // bigger transaction under the same name.
    ControlPlane::shared()
        .kubectl_ok(&[
            "-n",
            &s.ns,
            "delete",
            "transaction",
            "bakery",
            "--cascade=orphan",
            "--timeout=60s",
        ])
        .expect("an orphaning delete completes");
    s.create_transaction("bakery", "household", "tx-049", spec)
        .await;
    let waiting = s
        .wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    // Kubernetes' garbage collector may or may not have collected the orphaned request by now
    // (it learns of new kinds periodically); either way, a new request asks about tx-049.
    let about_049 = s
        .approval_requests()
        .await
        .into_iter()
        .filter(|r| r.spec.changes.first().map(|c| c.transaction_id.as_str()) == Some("tx-049"))
        .count();
    assert_eq!(about_049, 1, "a new request asks about tx-049");
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.requests(PATCH).await, 1, "the old approval wrote tx-049");
    assert_eq!(s.ynab_category("tx-049").await, None);
    assert!(waiting.status.unwrap().decision.is_none());
}

#[tokio::test]
async fn a_request_made_before_the_plan_authorizes_nothing() {
    let s = household("pre-made", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let real = wait_requests(&s, 1).await.remove(0);
    let taken = name(&real);
    s.api::<CategorizationPlan>()
        .delete("september", &DeleteParams::default())
        .await
        .unwrap();
    s.api::<ApprovalRequest>()
        .delete(&taken, &DeleteParams::default())
        .await
        .unwrap();
    wait::gone(&s.api::<ApprovalRequest>(), &taken).await;

    // The request the controller will ask under, made in advance with its own approval, a
    // made-up summary and a wrong hash.
    let mut forged: Value = json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
        "metadata": {"name": taken},
        "spec": {
            "budgetRef": {"name": "household"},
            "subject": {"kind": "CategorizationPlan", "name": "september"},
            "previewHash": "0".repeat(64),
            "summary": "2 transactions to recategorise, 53.40 in total",
            "reason": "policy",
            "expiresAt": "2099-01-01T00:00:00Z",
            "decision": {"verdict": "Approve", "by": "alice"}
        }
    });
    let alice = attacker(ControlPlane::shared(), &s.ns, "alice").await;
    let as_alice: ApprovalRequest = serde_json::from_value(forged.clone()).unwrap();
    let message = forbidden(
        Api::<ApprovalRequest>::namespaced(alice, &s.ns)
            .create(&PostParams::default(), &as_alice)
            .await,
    );
    assert!(message.contains("alice"), "{message}");
    // Past admission: the same object, with the real hash even.
    forged["spec"]["previewHash"] = json!(real.spec.preview_hash);
    forged["spec"]["decision"]["by"] = json!("admin");
    let past_admission: ApprovalRequest = serde_json::from_value(forged).unwrap();
    s.api::<ApprovalRequest>()
        .create(&PostParams::default(), &past_admission)
        .await
        .unwrap();

    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let plan = s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let asked = plan.status.unwrap().approval_request.unwrap();
    assert_ne!(asked, taken, "ledgerops asks under a name of its own");
    wait_request(&s, &taken, ApprovalPhase::Ignored).await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.writes().await, 0);
}

#[tokio::test]
async fn an_amount_changed_after_the_preview_makes_the_approval_stale() {
    // A long sync interval: the preview is computed on a mirror that does not see the edit.
    let s = household(
        "amount",
        json!({"writes": {"enabled": true}, "syncInterval": "1h"}),
    )
    .await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let first = name(&wait_requests(&s, 1).await[0]);
    let bigger = json!({"amount": -840_000});
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, "tx-048", &bigger)
        .await
        .unwrap();
    bob_decides(&s, &first, "Approve").await;
    let all = wait_requests(&s, 2).await;
    let second = all.iter().find(|r| name(r) != first).unwrap();
    let change = second
        .spec
        .changes
        .iter()
        .find(|c| c.transaction_id == "tx-048")
        .unwrap();
    assert_eq!(change.amount.0, "-840.00");
    assert_eq!(s.writes().await, 0, "the approved preview showed -8.40");
    assert_eq!(s.ynab_category("tx-048").await, None);
}

#[tokio::test]
async fn an_approval_is_spent_on_one_write() {
    let s = household("single-use", json!({"writes": {"enabled": true}})).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    let first = name(&wait_requests(&s, 1).await[0]);
    bob_decides(&s, &first, "Approve").await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    wait_request(&s, &first, ApprovalPhase::Applied).await;

    // Someone takes the category off in the app (no divergence: nothing else to protect), so
    // ledgerops wants the same change again, from the same state: the same hash. The spent
    // approval does not cover it.
    let edit = json!({"category_id": null});
    s.sim
        .control()
        .edit(demo::PLAN_ID, RecordKind::Transaction, "tx-048", &edit)
        .await
        .unwrap();
    s.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", "again")
        .await;
    let all = wait_requests(&s, 2).await;
    assert_eq!(all[0].spec.preview_hash, all[1].spec.preview_hash);
    s.wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.requests(PATCH).await, 1, "a spent approval wrote again");
    bob_decides(&s, &name(&all[1]), "Approve").await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 2);
}

#[tokio::test]
async fn a_rejection_outlives_its_request() {
    let s = household("rejected", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    let first = name(&wait_requests(&s, 1).await[0]);
    bob_decides(&s, &first, "Reject").await;
    let rejected = s.wait_plan("september", PlanPhase::Rejected).await;
    let record = rejected.status.unwrap().decision.unwrap();
    assert_eq!(
        (record.verdict.as_str(), record.by.as_str()),
        ("Reject", "bob")
    );

    let alice = attacker(ControlPlane::shared(), &s.ns, "alice").await;
    let message = forbidden(
        Api::<ApprovalRequest>::namespaced(alice, &s.ns)
            .delete(&first, &DeleteParams::default())
            .await,
    );
    assert!(message.contains("alice"), "{message}");
    // Past admission, deleting it resets nothing.
    s.api::<ApprovalRequest>()
        .delete(&first, &DeleteParams::default())
        .await
        .unwrap();
    wait::gone(&s.api::<ApprovalRequest>(), &first).await;
    nudge::<CategorizationPlan>(&s, "september").await;
    tokio::time::sleep(QUIET).await;
    let plan = s.wait_plan("september", PlanPhase::Rejected).await;
    assert_eq!(plan.status.unwrap().decision.unwrap().by, "bob");
    assert!(
        s.approval_requests().await.is_empty(),
        "nobody is asked again"
    );
    assert_eq!(s.writes().await, 0);
}
