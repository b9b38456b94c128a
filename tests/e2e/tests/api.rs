//! The API types on a real kube-apiserver: CRDs install, examples apply, status is a
//! subresource, CEL and schema rules refuse bad input at admission, printer columns show.

use std::fmt::Debug;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::core::object::HasSpec;
use kube::{Client, Resource};
use ledgerops::api::agent_job::AgentJob;
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, BudgetStatus};
use ledgerops::api::config_repo::ConfigRepo;
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::api::rule::CategorizationRule;
use ledgerops::api::transaction::Transaction;
use ledgerops_e2e::{KIND_EXAMPLES as EXAMPLES, example, example_documents, install_crds};
use ledgerops_testenv::ControlPlane;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

async fn setup(prefix: &str) -> (Client, String) {
    let plane = ControlPlane::shared();
    let client = plane.client().await.expect("admin client");
    install_crds(&client).await;
    let ns = plane.namespace(prefix).await.expect("namespace");
    (client, ns)
}

fn kubectl(args: &[&str]) -> String {
    ControlPlane::shared()
        .kubectl_ok(args)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The spec the server stored must equal the spec the example declares once both sides apply
/// their defaults: this also proves the serde defaults and the schema defaults agree.
async fn assert_round_trip<K>(client: &Client, ns: &str, doc: &Value)
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + HasSpec
        + DeserializeOwned
        + Clone
        + Debug,
    K::Spec: PartialEq + Debug,
{
    let local: K = serde_json::from_value(doc.clone()).expect("example deserializes into its type");
    let name = doc["metadata"]["name"]
        .as_str()
        .expect("examples are named");
    let stored = Api::<K>::namespaced(client.clone(), ns)
        .get(name)
        .await
        .expect("read back");
    assert_eq!(
        stored.spec(),
        local.spec(),
        "{} {name} changed on the way through the API server",
        K::kind(&())
    );
}

#[tokio::test]
async fn every_example_applies_and_reads_back() {
    let (client, ns) = setup("examples").await;
    for file in EXAMPLES {
        let path = example(file);
        kubectl(&["apply", "-n", &ns, "-f", path.to_str().unwrap()]);
        for doc in example_documents(file) {
            match doc["kind"].as_str().unwrap() {
                "Budget" => assert_round_trip::<Budget>(&client, &ns, &doc).await,
                "Transaction" => assert_round_trip::<Transaction>(&client, &ns, &doc).await,
                "CategorizationPlan" => {
                    assert_round_trip::<CategorizationPlan>(&client, &ns, &doc).await
                }
                "ApprovalRequest" => assert_round_trip::<ApprovalRequest>(&client, &ns, &doc).await,
                "AgentJob" => assert_round_trip::<AgentJob>(&client, &ns, &doc).await,
                "ConfigRepo" => assert_round_trip::<ConfigRepo>(&client, &ns, &doc).await,
                "CategorizationRule" => {
                    assert_round_trip::<CategorizationRule>(&client, &ns, &doc).await
                }
                "Secret" => {}
                other => panic!("examples/{file} has an unexpected kind {other}"),
            }
        }
    }
    // Every kind is in the `ledgerops` category, so one get lists them all.
    let all = kubectl(&["get", "ledgerops", "-n", &ns, "-o", "name"]);
    for kind in [
        "budget",
        "transaction",
        "categorizationplan",
        "approvalrequest",
        "agentjob",
        "configrepo",
        "categorizationrule",
    ] {
        assert!(
            all.contains(&format!("{kind}.ledgerops.dev/")),
            "`kubectl get ledgerops` lacks {kind}: {all}"
        );
    }
}

#[tokio::test]
async fn status_is_a_subresource_and_ready_works_with_kubectl_wait() {
    let (client, ns) = setup("status").await;
    kubectl(&[
        "apply",
        "-n",
        &ns,
        "-f",
        example("budget.yaml").to_str().unwrap(),
    ]);
    let budgets: Api<Budget> = Api::namespaced(client, &ns);
    let generation = budgets
        .get("household")
        .await
        .unwrap()
        .metadata
        .generation
        .unwrap();

    // A status sent to the main resource is ignored.
    let ignored = json!({"status": {"phase": "Ready"}});
    budgets
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&ignored),
        )
        .await
        .unwrap();
    // What it reads is the CRD's default: observed generation -1, nothing else.
    let defaulted = budgets.get("household").await.unwrap().status.unwrap();
    assert_eq!(
        defaulted,
        BudgetStatus {
            observed_generation: Some(-1),
            ..BudgetStatus::default()
        }
    );

    let status = json!({
        "apiVersion": "ledgerops.dev/v1alpha1",
        "kind": "Budget",
        "status": {
            "observedGeneration": generation,
            "phase": "Ready",
            "planName": "Household",
            "serverKnowledge": 4821,
            "counts": {"accounts": 4, "categories": 24, "payees": 61, "transactions": 312},
            "requests": {"usedLastHour": 3, "limitPerHour": 180},
            "conditions": [{
                "type": "Ready", "status": "True", "reason": "Synced",
                "message": "Mirror is current at server knowledge 4821",
                "lastTransitionTime": "2026-09-24T08:00:00Z", "observedGeneration": generation
            }]
        }
    });
    let ssa = PatchParams::apply("ledgerops").force();
    budgets
        .patch_status("household", &ssa, &Patch::Apply(&status))
        .await
        .expect("status patch");
    let stored = budgets
        .get("household")
        .await
        .unwrap()
        .status
        .expect("status stored");
    assert_eq!(stored.server_knowledge, Some(4821));
    assert_eq!(stored.counts.unwrap().transactions, 312);

    kubectl(&[
        "wait",
        "-n",
        &ns,
        "--for=condition=Ready",
        "budget/household",
        "--timeout=20s",
    ]);
    let row = kubectl(&["get", "-n", &ns, "budget", "household", "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cells[..6],
        [
            "household",
            "6a1f0c2e-3b7d-4c59-9e21-5d8a7f4b2c10",
            "false",
            "Ready",
            "312",
            "3"
        ]
    );
}

#[tokio::test]
async fn printer_columns_show_in_kubectl_get() {
    let (_, ns) = setup("columns").await;
    for file in EXAMPLES {
        kubectl(&["apply", "-n", &ns, "-f", example(file).to_str().unwrap()]);
    }
    let expected: &[(&str, &[&str])] = &[
        (
            "budgets",
            &[
                "NAME",
                "PLAN",
                "WRITES",
                "PHASE",
                "TRANSACTIONS",
                "REQUESTS/H",
                "AGE",
            ],
        ),
        (
            "transactions.ledgerops.dev",
            &["NAME", "TRANSACTION", "CATEGORY", "AMOUNT", "PHASE", "AGE"],
        ),
        (
            "categorizationplans",
            &["NAME", "BUDGET", "PHASE", "CHANGES", "UNCHANGED", "AGE"],
        ),
        (
            "approvalrequests",
            &[
                "NAME", "PHASE", "SUBJECT", "SUMMARY", "CHANGES", "AGE", "EXPIRES",
            ],
        ),
        (
            "agentjobs",
            &[
                "NAME",
                "SEQ",
                "REPOSITORY",
                "ISSUE",
                "AUTHOR",
                "PHASE",
                "AGE",
            ],
        ),
        (
            "configrepos",
            &["NAME", "URL", "BRANCH", "REVISION", "PHASE", "AGE"],
        ),
        (
            "categorizationrules",
            &[
                "NAME",
                "BUDGET",
                "PHASE",
                "PAYEE",
                "CATEGORY",
                "CONFIRMED",
                "CORRECTED",
                "AGE",
            ],
        ),
    ];
    for (resource, columns) in expected {
        let out = kubectl(&["get", resource, "-n", &ns]);
        let header: Vec<&str> = out
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        // Every kind ends with Flux's READY and STATUS, from the Ready condition.
        assert_eq!(
            header,
            [*columns, &["READY", "STATUS"]].concat(),
            "kubectl get {resource}"
        );
    }
    // Short names resolve.
    let out = kubectl(&["get", "apr", "-n", &ns, "-o", "name"]);
    assert_eq!(
        out.trim(),
        "approvalrequest.ledgerops.dev/september-cleanup-1"
    );
    let row = kubectl(&["get", "apr", "-n", &ns, "--no-headers"]);
    assert!(row.contains("2 transactions to recategorise"), "{row}");
}

/// Creating `object` must fail, and the API server's message must contain `message`.
async fn assert_refused<K>(api: &Api<K>, object: Value, message: &str)
where
    K: Resource<DynamicType = ()> + DeserializeOwned + serde::Serialize + Clone + Debug,
{
    let object: K = serde_json::from_value(object).expect("the refused object still deserializes");
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => panic!(
            "the API server accepted an invalid {}; expected: {message}",
            K::kind(&())
        ),
        Err(e) => assert!(
            e.to_string().contains(message),
            "expected {message:?} in {e}"
        ),
    }
}

fn with_spec(file: &str, kind: &str, patch: impl FnOnce(&mut Value)) -> Value {
    let mut doc = example_documents(file)
        .into_iter()
        .find(|d| d["kind"] == kind)
        .expect("example of kind");
    patch(&mut doc["spec"]);
    doc
}

#[tokio::test]
async fn invalid_resources_are_refused_at_admission() {
    let (client, ns) = setup("invalid").await;
    let txs: Api<Transaction> = Api::namespaced(client.clone(), &ns);
    let plans: Api<CategorizationPlan> = Api::namespaced(client.clone(), &ns);
    let budgets: Api<Budget> = Api::namespaced(client.clone(), &ns);
    let approvals: Api<ApprovalRequest> = Api::namespaced(client.clone(), &ns);

    let both = with_spec("transaction.yaml", "Transaction", |s| {
        s["split"] = json!([
            {"amount": "-4.00", "categoryId": "cat-groceries"},
            {"amount": "-4.40", "categoryId": "cat-dining"}
        ]);
    });
    assert_refused(&txs, both, "set categoryId or split, not both").await;

    let one_line_split = with_spec("transaction.yaml", "Transaction", |s| {
        s.as_object_mut().unwrap().remove("categoryId");
        s["split"] = json!([{"amount": "-8.40", "categoryId": "cat-groceries"}]);
    });
    assert_refused(&txs, one_line_split, "should have at least 2 items").await;

    let nothing = with_spec("transaction.yaml", "Transaction", |s| {
        *s = json!({"budgetRef": {"name": "household"}, "transactionId": "tx-048"});
    });
    assert_refused(
        &txs,
        nothing,
        "declare at least one of categoryId, split, memo, approved or flagColor",
    )
    .await;

    let both_kinds = with_spec("categorization-plan.yaml", "CategorizationPlan", |s| {
        s["undoOf"] = json!("august-cleanup");
    });
    assert_refused(
        &plans,
        both_kinds,
        "set either assignments or undoOf, not both",
    )
    .await;

    let twice = with_spec("categorization-plan.yaml", "CategorizationPlan", |s| {
        s["assignments"] = json!([
            {"transactionId": "tx-048", "categoryId": "cat-groceries"},
            {"transactionId": "tx-048", "categoryId": "cat-dining"}
        ]);
    });
    assert_refused(&plans, twice, "Duplicate value").await;

    let float_money = with_spec("budget.yaml", "Budget", |s| {
        s["approval"]["autoApproveBelow"] = json!("12.3456")
    });
    assert_refused(&budgets, float_money, "spec.approval.autoApproveBelow").await;

    let too_many = with_spec("budget.yaml", "Budget", |s| {
        s["requestsPerHour"] = json!(500)
    });
    assert_refused(&budgets, too_many, "should be less than or equal to 200").await;

    let silent_reject = with_spec("approval-request.yaml", "ApprovalRequest", |s| {
        s["decision"] = json!({"verdict": "Reject", "by": "alice"});
    });
    assert_refused(
        &approvals,
        silent_reject,
        "a rejection needs a comment that says why",
    )
    .await;

    let rules: Api<CategorizationRule> = Api::namespaced(client.clone(), &ns);
    let two_payee_tests = with_spec("categorization-rule.yaml", "CategorizationRule", |s| {
        s["match"]["payeePattern"] = json!("rail*");
    });
    assert_refused(
        &rules,
        two_payee_tests,
        "give exactly one of payee, payeeNormalised and payeePattern",
    )
    .await;
    let wild = with_spec("categorization-rule.yaml", "CategorizationRule", |s| {
        s["match"] = json!({"payeePattern": "a*b*c*d*e*f"});
    });
    assert_refused(&rules, wild, "payeePattern may hold at most 4 * wildcards").await;
    let only_wildcards = with_spec("categorization-rule.yaml", "CategorizationRule", |s| {
        s["match"] = json!({"payeePattern": "* *"});
    });
    assert_refused(&rules, only_wildcards, "and some text besides them").await;
    let float = with_spec("categorization-rule.yaml", "CategorizationRule", |s| {
        s["match"]["amount"] = json!({"min": "-1e3"});
    });
    assert_refused(&rules, float, "should match").await;
}

fn refused<T: Debug>(result: Result<T, kube::Error>, message: &str) {
    match result {
        Ok(_) => panic!("the API server accepted a change that must be refused: {message}"),
        Err(e) => assert!(
            e.to_string().contains(message),
            "expected {message:?} in {e}"
        ),
    }
}

/// Changes refused on update: a decision is final, received commands and ids are immutable.
#[tokio::test]
async fn immutable_fields_are_refused_on_update() {
    let (client, ns) = setup("immutable").await;
    for file in [
        "transaction.yaml",
        "approval-request.yaml",
        "agent-job.yaml",
    ] {
        kubectl(&["apply", "-n", &ns, "-f", example(file).to_str().unwrap()]);
    }
    let merge = PatchParams::default();

    let txs: Api<Transaction> = Api::namespaced(client.clone(), &ns);
    let retarget = json!({"spec": {"transactionId": "tx-999"}});
    refused(
        txs.patch("bakery-2026-09-16", &merge, &Patch::Merge(&retarget))
            .await,
        "transactionId cannot change: create a new Transaction",
    );
    // What a person may change is the target itself.
    let recategorise = json!({"spec": {"categoryId": "cat-dining"}});
    txs.patch("bakery-2026-09-16", &merge, &Patch::Merge(&recategorise))
        .await
        .expect("category is editable");

    let approvals: Api<ApprovalRequest> = Api::namespaced(client.clone(), &ns);
    // In the client's own name (admin): the admission policy refuses any other.
    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    approvals
        .patch("september-cleanup-1", &merge, &Patch::Merge(&approve))
        .await
        .expect("first decision");
    let flip = json!({"spec": {"decision": {"verdict": "Reject", "by": "bob", "comment": "no"}}});
    refused(
        approvals
            .patch("september-cleanup-1", &merge, &Patch::Merge(&flip))
            .await,
        "a decision, once made, cannot be changed or withdrawn",
    );
    let withdraw = json!({"spec": {"decision": null}});
    refused(
        approvals
            .patch("september-cleanup-1", &merge, &Patch::Merge(&withdraw))
            .await,
        "a decision, once made, cannot be changed or withdrawn",
    );
    let rehash = json!({"spec": {"previewHash": "0000"}});
    refused(
        approvals
            .patch("september-cleanup-1", &merge, &Patch::Merge(&rehash))
            .await,
        "previewHash is set by ledgerops and cannot change",
    );

    let jobs: Api<AgentJob> = Api::namespaced(client, &ns);
    let rewrite = json!({"spec": {"command": "/agent approve september-cleanup-1"}});
    refused(
        jobs.patch(
            "0b7e4a52-5c1f-5d3e-9a8b-2f6c4d1e7a90",
            &merge,
            &Patch::Merge(&rewrite),
        )
        .await,
        "an AgentJob records a received command and cannot be edited",
    );
}
