//! What a Flux, Argo CD or kpt user reads of ledgerops' objects: kstatus, computed by the real
//! library (sigs.k8s.io/cli-utils, `tests/tools/kstatus`) on each kind as the API server holds it,
//! in the states that matter — done (Current), under way or waiting on a person who was asked
//! (InProgress), stuck until a person or a fix (Failed), and never looked at (InProgress, not
//! Current). The ConfigRepo, CategorizationRule and AgentJob states are asserted in their own
//! suites (config_repo.rs, rules.rs, agent_job.rs), which have the Git server and Gitea.

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, WAIT, bakery_and_train_plan, category, household};
use ledgerops_e2e::{KIND_EXAMPLES, example_documents, kstatus, wait};
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::{RequestMatch, StatusFault, demo};

/// Every kind, as its example in `examples/` declares it, right as it is created: no reconcile
/// can have written its status, and kstatus must not call it Current.
#[tokio::test]
async fn an_object_nobody_has_looked_at_is_in_progress_for_every_kind() {
    let s = Scenario::new(ControlPlane::shared(), "kstatus-new", demo::generate()).await;
    let mut kinds = Vec::new();
    for file in KIND_EXAMPLES {
        for mut doc in example_documents(file) {
            let api_version = doc["apiVersion"].as_str().unwrap_or_default().to_owned();
            let Some(version) = api_version.strip_prefix("ledgerops.dev/") else {
                continue;
            };
            let kind = doc["kind"].as_str().expect("a kind").to_owned();
            doc["metadata"]["namespace"] = json!(s.ns);
            let resource =
                ApiResource::from_gvk(&GroupVersionKind::gvk("ledgerops.dev", version, &kind));
            let api: Api<DynamicObject> = Api::namespaced_with(s.client.clone(), &s.ns, &resource);
            let object: DynamicObject = serde_json::from_value(doc).expect("an object");
            let created = api
                .create(&PostParams::default(), &object)
                .await
                .unwrap_or_else(|e| panic!("creating the {kind} of examples/{file}: {e}"));
            let name = created.metadata.name.clone().expect("a name");
            // Defaulted by the CRD on the way out of storage, like Flux's kinds.
            assert_eq!(
                created.data["status"]["observedGeneration"],
                json!(-1),
                "{kind}"
            );
            let verdict = kstatus::compute(&serde_json::to_vec(&created).unwrap());
            assert_eq!(verdict.status, "InProgress", "{kind}: {verdict:?}");
            assert!(
                verdict.message.contains("observed generation is -1"),
                "{kind}: {verdict:?}"
            );
            api.delete(&name, &DeleteParams::default()).await.unwrap();
            kinds.push(kind);
        }
    }
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "AgentJob",
            "ApprovalRequest",
            "Budget",
            "CategorizationPlan",
            "CategorizationRule",
            "ConfigRepo",
            "Transaction"
        ]
    );
}

#[tokio::test]
async fn a_budget_reads_current_when_synced_failed_when_it_needs_a_fix_in_progress_when_ynab_will_answer()
 {
    let s = household("kstatus-budget", json!({})).await;
    let verdict = kstatus::expect::<Budget>(&s.client, &s.ns, "household", "Current").await;
    assert_eq!(verdict.message, "Resource is Ready");

    // A token YNAB refuses: nothing gets better until someone replaces it.
    s.create_budget("refused", "not-a-token", json!({})).await;
    s.wait_budget("refused", BudgetPhase::Unauthorized).await;
    let verdict = kstatus::expect::<Budget>(&s.client, &s.ns, "refused", "Failed").await;
    assert!(
        verdict.message.contains("spec.tokenSecretRef"),
        "{verdict:?}"
    );
    // ...and where to read what to do: its row of the README's troubleshooting table.
    assert!(
        verdict
            .message
            .contains("README.md#stalled-budget-unauthorized"),
        "{verdict:?}"
    );

    // YNAB asks to wait: it will answer again on its own.
    let fault = StatusFault {
        status: 429,
        count: 1,
        detail: None,
        only: RequestMatch::default(),
    };
    s.sim.control().inject_status(&fault).await.unwrap();
    s.create_budget("limited", demo::TOKEN, json!({})).await;
    s.wait_budget("limited", BudgetPhase::RateLimited).await;
    kstatus::expect::<Budget>(&s.client, &s.ns, "limited", "InProgress").await;

    // Suspended by a person: it stays as it is until a person resumes it.
    let budgets = s.api::<Budget>();
    let suspend = |on: bool| {
        let budgets = s.api::<Budget>();
        async move {
            let patch = json!({"spec": {"suspend": on}});
            budgets
                .patch("household", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
    };
    suspend(true).await;
    s.wait_budget("household", BudgetPhase::Suspended).await;
    let verdict = kstatus::expect::<Budget>(&s.client, &s.ns, "household", "Failed").await;
    assert!(verdict.message.contains("spec.suspend"), "{verdict:?}");
    suspend(false).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let ready = kstatus::expect::<Budget>(&s.client, &s.ns, "household", "Current").await;
    assert_eq!(ready.message, "Resource is Ready");
    let status = budgets.get("household").await.unwrap().status.unwrap();
    for gone in ["Stalled", "Reconciling"] {
        assert!(
            conditions::get(&status.conditions, gone).is_none(),
            "{gone}"
        );
    }
}

#[tokio::test]
async fn a_plan_and_its_request_read_in_progress_while_a_person_is_asked_and_current_once_applied()
{
    let s = household("kstatus-plan", json!({"writes": {"enabled": true}})).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = s.plan_request("september").await;
    let verdict =
        kstatus::expect::<CategorizationPlan>(&s.client, &s.ns, "september", "InProgress").await;
    assert!(verdict.message.contains(&request), "{verdict:?}");
    wait::until(&s.api::<ApprovalRequest>(), &request, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Pending)
    })
    .await;
    kstatus::expect::<ApprovalRequest>(&s.client, &s.ns, &request, "InProgress").await;

    s.decide(&request, "Approve", "yes").await;
    s.wait_plan("september", PlanPhase::Applied).await;
    kstatus::expect::<CategorizationPlan>(&s.client, &s.ns, "september", "Current").await;
    kstatus::expect::<ApprovalRequest>(&s.client, &s.ns, &request, "Current").await;

    // A plan that names a category YNAB does not have cannot be applied as written.
    let unknown = "00000000-0000-4000-8000-000000000000";
    s.create_plan(
        "typo",
        "household",
        json!({"assignments": [{"transactionId": "tx-049", "categoryId": unknown}]}),
    )
    .await;
    s.wait_plan("typo", PlanPhase::Invalid).await;
    let verdict = kstatus::expect::<CategorizationPlan>(&s.client, &s.ns, "typo", "Failed").await;
    assert!(verdict.message.contains(unknown), "{verdict:?}");

    // Rejected by a person: it will not be applied.
    s.create_plan(
        "october",
        "household",
        json!({"assignments": [{"transactionId": "tx-048", "categoryId": category("Restaurants")}]}),
    )
    .await;
    let request = s.plan_request("october").await;
    s.decide(&request, "Reject", "not this one").await;
    s.wait_plan("october", PlanPhase::Rejected).await;
    kstatus::expect::<CategorizationPlan>(&s.client, &s.ns, "october", "Failed").await;
    // The request did its work: a person decided.
    kstatus::expect::<ApprovalRequest>(&s.client, &s.ns, &request, "Current").await;
}

#[tokio::test]
async fn a_transaction_reads_failed_when_it_waits_for_a_person_to_settle_it() {
    let s = Scenario::new(ControlPlane::shared(), "kstatus-tx", demo::generate()).await;
    Ledgerops::shared().await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    kstatus::expect::<Transaction>(&s.client, &s.ns, "bakery", "Current").await;

    // Someone recategorises it in the YNAB app: ledgerops does not overwrite it, a person says
    // which side wins.
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    s.wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let verdict = kstatus::expect::<Transaction>(&s.client, &s.ns, "bakery", "Failed").await;
    assert!(verdict.message.contains("Restaurants"), "{verdict:?}");

    // A Transaction of a Budget that writes nothing shows what it would do, and stays there.
    s.create_budget("readonly", demo::TOKEN, json!({})).await;
    s.wait_budget("readonly", BudgetPhase::Ready).await;
    let spec = json!({"categoryId": category("Transport")});
    s.create_transaction("train", "readonly", "tx-049", spec)
        .await;
    s.wait_transaction("train", TransactionPhase::WouldWrite)
        .await;
    kstatus::expect::<Transaction>(&s.client, &s.ns, "train", "Failed").await;
}
