//! What the admission policies of `crds/` refuse alice, who holds an editor's rights and more:
//! creating ApprovalRequests and AgentJobs, writing any status, deciding a finished request,
//! deleting a decided one, touching the journal and the `/agent` sequence ConfigMaps, a
//! Budget whose requests expire before anyone can read them, and blessing a CategorizationRule
//! in someone else's name or changing one someone blessed. Each runs next to a plan waiting for
//! approval, with `ledgerops run` watching: YNAB sees no write.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use ledgerops::api::agent_job::AgentJob;
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::config_repo::ConfigRepo;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops::api::transaction::Transaction;
use ledgerops_e2e::attacker::{approver, attacker};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, bakery_and_train_plan, category};
use ledgerops_e2e::world::World;
use ledgerops_e2e::{example_documents, wait};
use ledgerops_testenv::ControlPlane;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use ynab_sim::demo;

/// A world with a Budget that asks a person for every write, [`bakery_and_train_plan`] waiting
/// for approval as `september`, alice as the attacker and admin as the controller's user.
async fn world(prefix: &str) -> World {
    World::build(prefix)
        .household(json!({"writes": {"enabled": true}}))
        .plan_awaiting_approval()
        .alice()
        .build()
        .await
}

/// YNAB saw no PATCH, PUT or POST, and the plan still waits for a person.
async fn assert_nothing_written(w: &World) {
    let counters = w.sc.sim.control().counters().await.unwrap();
    let writes: u64 = counters
        .by_endpoint
        .iter()
        .filter(|(endpoint, _)| {
            ["PATCH ", "PUT ", "POST "]
                .iter()
                .any(|m| endpoint.starts_with(m))
        })
        .map(|(_, n)| n)
        .sum();
    assert_eq!(writes, 0, "YNAB saw writes: {:?}", counters.by_endpoint);
    let plan =
        w.sc.api::<CategorizationPlan>()
            .get("september")
            .await
            .unwrap();
    assert_eq!(
        plan.status.and_then(|s| s.phase),
        Some(PlanPhase::AwaitingApproval)
    );
}

/// Creates, as the controller's user, a copy of `examples/approval-request.yaml` about the plan,
/// expiring at `expires_at`.
async fn request_by_controller(w: &World, name: &str, expires_at: &str) {
    let mut doc = example_documents("approval-request.yaml").remove(0);
    doc["metadata"] = json!({"name": name});
    doc["spec"]["subject"]["name"] = json!("september");
    doc["spec"]["expiresAt"] = json!(expires_at);
    let request: ApprovalRequest = serde_json::from_value(doc).unwrap();
    w.sc.api::<ApprovalRequest>()
        .create(&PostParams::default(), &request)
        .await
        .unwrap_or_else(|e| panic!("the controller's user creating {name}: {e}"));
}

/// Sets the request's phase as the controller would, and waits until it holds.
async fn set_phase(w: &World, name: &str, phase: ApprovalPhase) {
    w.sc.api::<ApprovalRequest>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": phase}})),
        )
        .await
        .unwrap_or_else(|e| panic!("the controller's user setting {name} {phase:?}: {e}"));
    wait::until(
        &w.sc.api::<ApprovalRequest>(),
        name,
        Duration::from_secs(30),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(phase),
    )
    .await;
}

/// The message of a request refused with `code`; panics when it was accepted.
fn refused<T: std::fmt::Debug>(code: u16, what: &str, result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(e)) if e.code == code => e.message,
        other => panic!("{what}: expected {code}, got {other:?}"),
    }
}

fn assert_contains(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "expected {part:?} in the message: {message}"
        );
    }
}

fn object<K: DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).expect("a valid object")
}

#[tokio::test]
async fn alice_cannot_create_approval_requests_or_agent_jobs() {
    let w = world("attack-create").await;
    let plan =
        w.sc.api::<CategorizationPlan>()
            .get("september")
            .await
            .unwrap();
    let hash = plan.status.unwrap().preview.unwrap().hash;

    // The request the controller would open next, already approved in her own name and in bob's.
    for by in ["alice", "bob"] {
        let mut doc = example_documents("approval-request.yaml").remove(0);
        let name = format!("september-{}", &hash[..10]);
        doc["metadata"] = json!({"name": name});
        doc["spec"]["subject"]["name"] = json!("september");
        doc["spec"]["previewHash"] = json!(hash);
        doc["spec"]["decision"] = json!({"verdict": "Approve", "by": by});
        let message = refused(
            403,
            "alice creating an approved ApprovalRequest",
            w.as_alice::<ApprovalRequest>()
                .create(&PostParams::default(), &object(doc))
                .await,
        );
        assert_contains(
            &message,
            &[
                &format!(
                    "user alice may not create ApprovalRequest september-{}",
                    &hash[..10]
                ),
                "only the ledgerops controller (admin) creates ApprovalRequests",
                "Apply the CategorizationPlan or Transaction instead",
            ],
        );
    }

    // A Gitea admin's `/agent approve`, made up.
    let mut doc = example_documents("agent-job.yaml").remove(0);
    doc["spec"]["author"] = json!("gitea-admin");
    doc["spec"]["command"] = json!(format!("/agent approve september-{}", &hash[..10]));
    let message = refused(
        403,
        "alice creating an AgentJob",
        w.as_alice::<AgentJob>()
            .create(&PostParams::default(), &object(doc))
            .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not create AgentJob 0b7e4a52-5c1f-5d3e-9a8b-2f6c4d1e7a90",
            "only the ledgerops controller (admin) creates and changes AgentJobs",
            "Comment /agent approve <request>",
        ],
    );

    // A job the controller received: alice may neither relabel nor delete it.
    w.sc.api::<AgentJob>()
        .create(
            &PostParams::default(),
            &object(example_documents("agent-job.yaml").remove(0)),
        )
        .await
        .expect("the controller's user creates an AgentJob");
    let job = "0b7e4a52-5c1f-5d3e-9a8b-2f6c4d1e7a90";
    let message = refused(
        403,
        "alice labelling an AgentJob",
        w.as_alice::<AgentJob>()
            .patch(
                job,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"mine": "yes"}}})),
            )
            .await,
    );
    assert_contains(
        &message,
        &[&format!("user alice may not change AgentJob {job}")],
    );
    let message = refused(
        403,
        "alice deleting an AgentJob",
        w.as_alice::<AgentJob>()
            .delete(job, &DeleteParams::default())
            .await,
    );
    assert_contains(
        &message,
        &[&format!("user alice may not delete AgentJob {job}")],
    );
    assert_nothing_written(&w).await;
}

#[tokio::test]
async fn alice_cannot_write_the_status_of_any_kind() {
    let w = world("attack-status").await;
    let ns = w.sc.ns.clone();
    // Objects of the other kinds, made as she may (her own) or as the controller would.
    w.as_alice::<Transaction>()
        .create(
            &PostParams::default(),
            &object(json!({
                "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
                "metadata": {"name": "bakery", "annotations": {PROPOSED_BY: "alice"}},
                "spec": {"budgetRef": {"name": "household"}, "transactionId": "tx-050",
                         "categoryId": category("Groceries")},
            })),
        )
        .await
        .expect("alice declares a Transaction");
    let mut repo = example_documents("config-repo.yaml").remove(0);
    repo["metadata"]["namespace"] = json!(ns);
    repo["metadata"]["annotations"] = json!({PROPOSED_BY: "alice"});
    // One that proposes only: governing is an owner's.
    repo["spec"]["authority"] = json!("Propose");
    w.as_alice::<ConfigRepo>()
        .create(&PostParams::default(), &object(repo))
        .await
        .expect("alice declares a ConfigRepo");
    request_by_controller(&w, "rent", "2099-01-01T00:00:00Z").await;
    w.sc.api::<AgentJob>()
        .create(
            &PostParams::default(),
            &object(example_documents("agent-job.yaml").remove(0)),
        )
        .await
        .expect("the controller's user creates an AgentJob");

    // A plan that says it was applied, under an operation id she chose.
    let forged_plan = json!({"status": {"phase": "Applied", "operationId": "alice-op"}});
    let phase = |p: &str| json!({"status": {"phase": p}});
    let attempts: Vec<(&str, &str, Result<Value, kube::Error>)> = vec![
        (
            "CategorizationPlan",
            "september",
            patch_status::<CategorizationPlan>(&w, "september", forged_plan).await,
        ),
        (
            "Transaction",
            "bakery",
            patch_status::<Transaction>(&w, "bakery", phase("Converged")).await,
        ),
        (
            "Budget",
            "household",
            patch_status::<Budget>(&w, "household", phase("Ready")).await,
        ),
        // The autopilot's circuit breaker reset, to let it propose past the day's limits.
        (
            "Budget",
            "household",
            patch_status::<Budget>(
                &w,
                "household",
                json!({"status": {"autopilot": {"day": "2026-12-02", "transactions": 0, "amount": "0"}}}),
            )
            .await,
        ),
        (
            "ApprovalRequest",
            "rent",
            patch_status::<ApprovalRequest>(&w, "rent", phase("Approved")).await,
        ),
        (
            "AgentJob",
            "0b7e4a52-5c1f-5d3e-9a8b-2f6c4d1e7a90",
            patch_status::<AgentJob>(
                &w,
                "0b7e4a52-5c1f-5d3e-9a8b-2f6c4d1e7a90",
                json!({"status": {"phase": "Succeeded"}}),
            )
            .await,
        ),
        (
            "ConfigRepo",
            "ledger-config",
            patch_status::<ConfigRepo>(&w, "ledger-config", phase("Ready")).await,
        ),
    ];
    for (kind, name, result) in attempts {
        let message = refused(403, &format!("alice writing the status of {kind}"), result);
        let hint = if kind == "ApprovalRequest" {
            "To answer the request, set spec.decision with \"by\": \"alice\" instead."
        } else {
            "Change its spec instead; ledgerops reports what it did in the status."
        };
        assert_contains(
            &message,
            &[
                &format!("user alice may not write the status of {kind} {name}"),
                "only the ledgerops controller (admin) records it",
                hint,
            ],
        );
    }
    assert_nothing_written(&w).await;
}

/// `examples/categorization-rule.yaml` as `name`, leading to `category`, blessed by `by`.
fn rule(name: &str, category: &str, by: Option<&str>) -> CategorizationRule {
    let mut doc = example_documents("categorization-rule.yaml").remove(0);
    // Alice writes every rule of these tests, in her own name.
    doc["metadata"] = json!({"name": name, "annotations": {PROPOSED_BY: "alice"}});
    doc["spec"]["categoryId"] = json!(category);
    if let Some(by) = by {
        doc["spec"]["blessing"] = json!({"by": by, "at": "2026-09-20T10:00:00Z"});
    }
    object(doc)
}

#[tokio::test]
async fn a_rule_is_blessed_only_in_ones_own_name_and_changed_only_with_a_new_blessing() {
    let w = world("attack-rules").await;
    // Both hold the approver role beside an editor's: what is checked here is in whose name.
    approver(ControlPlane::shared(), &w.sc.ns, "alice").await;
    let bob = attacker(ControlPlane::shared(), &w.sc.ns, "bob").await;
    approver(ControlPlane::shared(), &w.sc.ns, "bob").await;
    let as_bob: Api<CategorizationRule> = Api::namespaced(bob, &w.sc.ns);
    let rules = w.as_alice::<CategorizationRule>();
    let (transport, groceries) = (category("Transport"), category("Groceries"));
    let post = PostParams::default();

    // Blessed in bob's name, or as if merged through a config repo: refused.
    let cases = [
        (
            "bob",
            "user alice may not bless CategorizationRule forged in the name of \"bob\"",
        ),
        (
            "configrepo:ledger-config",
            "only the ledgerops controller (admin) records blessings of rules merged into a config repo",
        ),
    ];
    for (by, says) in cases {
        let message = refused(
            403,
            &format!("alice blessing a rule as {by}"),
            rules
                .create(&post, &rule("forged", &transport, Some(by)))
                .await,
        );
        assert_contains(&message, &[says]);
    }
    assert!(rules.get_opt("forged").await.unwrap().is_none());

    // A candidate, then her own blessing: both hers to make, and the controller says so.
    rules
        .create(&post, &rule("rail", &transport, None))
        .await
        .expect("alice writes a candidate rule");
    let blessing = json!({"spec": {"blessing": {"by": "alice", "at": "2026-09-21T08:00:00Z"}}});
    rules
        .patch("rail", &PatchParams::default(), &Patch::Merge(&blessing))
        .await
        .expect("alice blesses the rule in her own name");
    // Hers to give (the suites' household has four eyes off: tests/attacks/authority.rs plays
    // them), and the controller says so.
    let blessed = wait::until(&rules, "rail", Duration::from_secs(30), |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(RulePhase::Blessed)
    })
    .await;
    let ready = blessed.status.unwrap().conditions;
    assert!(
        ready
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True" && c.message.contains("alice")),
        "{ready:?}"
    );

    // Bob leads the rule elsewhere under alice's blessing, or re-blesses it in her name: refused.
    let moved = json!({"spec": {"categoryId": groceries}});
    let moved_as_alice = json!({"spec": {"categoryId": groceries,
        "blessing": {"by": "alice", "at": "2026-09-22T08:00:00Z"}}});
    let cases = [
        (
            moved,
            "user bob may not change the match or category of CategorizationRule rail under the blessing of alice",
        ),
        (
            moved_as_alice,
            "user bob may not bless CategorizationRule rail in the name of \"alice\"",
        ),
    ];
    for (patch, says) in cases {
        let message = refused(
            403,
            "bob moving alice's rule",
            as_bob
                .patch("rail", &PatchParams::default(), &Patch::Merge(&patch))
                .await,
        );
        assert_contains(&message, &[says]);
    }
    let kept = rules.get("rail").await.unwrap();
    assert_eq!(kept.spec.category_id, transport);
    assert_eq!(kept.spec.blessing.unwrap().by, "alice");

    // With a blessing of his own, the change is his to make.
    let his = json!({"metadata": {"annotations": {PROPOSED_BY: "alice,bob"}},
        "spec": {"categoryId": groceries,
        "blessing": {"by": "bob", "at": "2026-09-22T08:00:00Z"}}});
    as_bob
        .patch("rail", &PatchParams::default(), &Patch::Merge(&his))
        .await
        .expect("bob changes the rule and blesses it himself");

    // A candidate that says it is Blessed, counts inflated to look well confirmed, a demotion
    // lifted: the status, learning's part included, is the controller's.
    rules
        .create(&post, &rule("unblessed", &transport, None))
        .await
        .expect("alice writes a candidate rule");
    let forged = [
        ("unblessed", json!({"status": {"phase": "Blessed"}})),
        (
            "unblessed",
            json!({"status": {"learning": {"confirmations": 99, "corrections": 0}}}),
        ),
        (
            "rail",
            json!({"status": {"phase": "Blessed", "demotion": null}}),
        ),
    ];
    for (name, body) in forged {
        let message = refused(
            403,
            &format!("alice writing the status of rule {name}: {body}"),
            patch_status::<CategorizationRule>(&w, name, body).await,
        );
        assert_contains(
            &message,
            &[&format!(
                "user alice may not write the status of CategorizationRule {name}"
            )],
        );
    }
    assert_nothing_written(&w).await;
}

async fn patch_status<K>(w: &World, name: &str, body: Value) -> Result<Value, kube::Error>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + serde::Serialize,
{
    w.as_alice::<K>()
        .patch_status(name, &PatchParams::default(), &Patch::Merge(body))
        .await
        .map(|o| serde_json::to_value(o).unwrap())
}

#[tokio::test]
async fn nobody_decides_an_expired_or_stale_request() {
    let w = world("attack-late").await;
    request_by_controller(&w, "late", "2026-09-25T09:00:00Z").await;
    set_phase(&w, "late", ApprovalPhase::Expired).await;
    request_by_controller(&w, "outdated", "2099-01-01T00:00:00Z").await;
    // The controller first sees it Pending; then the preview changes and it marks it Stale.
    wait::until(
        &w.sc.api::<ApprovalRequest>(),
        "outdated",
        Duration::from_secs(30),
        |r| r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Pending),
    )
    .await;
    set_phase(&w, "outdated", ApprovalPhase::Stale).await;

    for (name, phase) in [("late", "Expired"), ("outdated", "Stale")] {
        let message = refused(
            403,
            &format!("alice approving the {phase} request"),
            w.as_alice::<ApprovalRequest>()
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(
                        json!({"spec": {"decision": {"verdict": "Approve", "by": "alice"}}}),
                    ),
                )
                .await,
        );
        assert_contains(
            &message,
            &[
                &format!("user alice may not decide ApprovalRequest {name}: it is {phase}"),
                "a decision is taken only while a request is Pending",
                "answer the newer request ledgerops opens",
            ],
        );
    }
    // Not even the controller records a Gitea approval on it.
    let message = refused(
        403,
        "the controller recording a Gitea approval on an Expired request",
        w.sc.api::<ApprovalRequest>()
            .patch(
                "late",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"spec": {"decision": {"verdict": "Approve", "by": "gitea:carol"}}}),
                ),
            )
            .await,
    );
    assert_contains(
        &message,
        &["user admin may not decide ApprovalRequest late: it is Expired"],
    );
    for name in ["late", "outdated"] {
        let stored = w.sc.api::<ApprovalRequest>().get(name).await.unwrap();
        assert_eq!(stored.spec.decision, None, "{name} must stay undecided");
    }
    assert_nothing_written(&w).await;
}

#[tokio::test]
async fn alice_cannot_delete_a_decided_request() {
    let w = world("attack-delete").await;
    // An editor who also approves: deciding is hers, erasing the decision is nobody's.
    approver(ControlPlane::shared(), &w.sc.ns, "alice").await;
    request_by_controller(&w, "gift", "2099-01-01T00:00:00Z").await;
    request_by_controller(&w, "waiting", "2099-01-01T00:00:00Z").await;
    // She rejects, then would like the rejection gone.
    w.as_alice::<ApprovalRequest>()
        .patch(
            "gift",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"decision": {"verdict": "Reject", "by": "alice", "comment": "not now"}}})),
        )
        .await
        .expect("alice rejects in her own name");
    let message = refused(
        403,
        "alice deleting a decided request",
        w.as_alice::<ApprovalRequest>()
            .delete("gift", &DeleteParams::default())
            .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not delete ApprovalRequest gift: it records the Reject decision by alice",
            "only the ledgerops controller (admin) deletes decided requests",
            "edit or delete CategorizationPlan september instead",
        ],
    );
    let kept = w.sc.api::<ApprovalRequest>().get("gift").await.unwrap();
    assert_eq!(kept.spec.decision.unwrap().by, "alice");
    // A request nobody answered yet may go: ledgerops asks again.
    w.as_alice::<ApprovalRequest>()
        .delete("waiting", &DeleteParams::default())
        .await
        .expect("deleting an undecided request is allowed");
    assert_nothing_written(&w).await;
}

#[tokio::test]
async fn alice_cannot_forge_or_touch_the_journal_or_the_agent_sequence() {
    let w = world("attack-configmaps").await;
    let configmaps = w.as_alice::<ConfigMap>();
    let entry = json!({"operationId": "op-1", "plan": "september", "budget": "household",
        "appliedAt": "2026-09-20T10:00:00Z", "changes": []})
    .to_string();
    let forged = |name: &str| -> ConfigMap {
        object(json!({"metadata": {"name": name, "labels": {
            "ledgerops.dev/journal": "true", "ledgerops.dev/plan": "september"}},
            "data": {"entry.json": entry}}))
    };
    let message = refused(
        403,
        "alice creating a journal entry",
        configmaps
            .create(&PostParams::default(), &forged("ledgerops-journal-op-1"))
            .await,
    );
    assert_contains(
        &message,
        &[
            // The API server lists the labels in no fixed order.
            "user alice may not create ConfigMap ledgerops-journal-op-1 (labelled ledgerops.dev/",
            "ledgerops.dev/journal",
            "ledgerops.dev/plan",
            "only the ledgerops controller (admin) writes them",
            "Keep your own data in a ConfigMap without ledgerops.dev/ labels",
        ],
    );

    // An entry the controller recorded: she may not edit, unlabel or delete it.
    w.sc.api::<ConfigMap>()
        .create(&PostParams::default(), &forged("ledgerops-journal-op-2"))
        .await
        .expect("the controller's user records a journal entry");
    for (what, body) in [
        ("editing", json!({"data": {"entry.json": "{}"}})),
        (
            "unlabelling",
            json!({"metadata": {"labels": {"ledgerops.dev/journal": null}}}),
        ),
    ] {
        let message = refused(
            403,
            &format!("alice {what} a journal entry"),
            configmaps
                .patch(
                    "ledgerops-journal-op-2",
                    &PatchParams::default(),
                    &Patch::Merge(body),
                )
                .await,
        );
        assert_contains(
            &message,
            &[
                "user alice may not change ConfigMap ledgerops-journal-op-2 (labelled ledgerops.dev/",
            ],
        );
    }
    let message = refused(
        403,
        "alice deleting a journal entry",
        configmaps
            .delete("ledgerops-journal-op-2", &DeleteParams::default())
            .await,
    );
    assert_contains(
        &message,
        &["user alice may not delete ConfigMap ledgerops-journal-op-2"],
    );

    // Her own ConfigMap is hers, until she labels it as journal.
    configmaps
        .create(
            &PostParams::default(),
            &object(json!({"metadata": {"name": "notes"}, "data": {"entry.json": entry}})),
        )
        .await
        .expect("alice keeps her own ConfigMap");
    let message = refused(
        403,
        "alice labelling her ConfigMap as journal",
        configmaps
            .patch(
                "notes",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"ledgerops.dev/journal": "true"}}})),
            )
            .await,
    );
    assert_contains(
        &message,
        &["user alice may not change ConfigMap notes (labelled ledgerops.dev/journal)"],
    );

    // The `/agent` receive sequence: not hers to create, bump or delete.
    let sequence = |next: &str| -> ConfigMap {
        object(json!({"metadata": {"name": "ledgerops-agentjob-sequence"}, "data": {"next": next}}))
    };
    let message = refused(
        403,
        "alice creating the sequence",
        configmaps
            .create(&PostParams::default(), &sequence("1"))
            .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not create ConfigMap ledgerops-agentjob-sequence (the /agent receive sequence)",
        ],
    );
    w.sc.api::<ConfigMap>()
        .create(&PostParams::default(), &sequence("7"))
        .await
        .expect("the controller's user creates the sequence");
    let message = refused(
        403,
        "alice rewinding the sequence",
        configmaps
            .patch(
                "ledgerops-agentjob-sequence",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"next": "1"}})),
            )
            .await,
    );
    assert_contains(
        &message,
        &["user alice may not change ConfigMap ledgerops-agentjob-sequence"],
    );
    let message = refused(
        403,
        "alice deleting the sequence",
        configmaps
            .delete("ledgerops-agentjob-sequence", &DeleteParams::default())
            .await,
    );
    assert_contains(
        &message,
        &["user alice may not delete ConfigMap ledgerops-agentjob-sequence"],
    );

    // The record of YNAB requests: emptying it would let a restarted controller send past the
    // hour's budget, so it is not hers to make, change or delete either.
    let record = object(json!({"metadata": {"name": "ledgerops-request-window"}, "data": {}}));
    let message = refused(
        403,
        "alice making the request record",
        configmaps.create(&PostParams::default(), &record).await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not create ConfigMap ledgerops-request-window (the record of YNAB requests)",
        ],
    );
    let recorded = object(
        json!({"metadata": {"name": "ledgerops-request-window"}, "data": {"k": "{\"29833333\":7}"}}),
    );
    w.sc.api::<ConfigMap>()
        .create(&PostParams::default(), &recorded)
        .await
        .expect("the controller's user creates the record");
    for (what, answer) in [
        (
            "change",
            configmaps
                .patch(
                    "ledgerops-request-window",
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": null})),
                )
                .await
                .map(|_| ()),
        ),
        (
            "delete",
            configmaps
                .delete("ledgerops-request-window", &DeleteParams::default())
                .await
                .map(|_| ()),
        ),
    ] {
        let message = refused(403, "alice emptying the request record", answer);
        assert_contains(
            &message,
            &[&format!(
                "user alice may not {what} ConfigMap ledgerops-request-window"
            )],
        );
    }
    assert_nothing_written(&w).await;
}

#[tokio::test]
async fn a_budget_whose_requests_expire_within_a_minute_is_refused() {
    let w = world("attack-expiry").await;
    for expiry in ["0s", "1ms", "59s"] {
        let budget: Budget = object(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
            "metadata": {"name": "hasty"},
            "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "household-token"},
                     "apiUrl": w.sc.sim.api_url(), "writes": {"enabled": true},
                     "approval": {"expiry": expiry}},
        }));
        let message = refused(
            422,
            &format!("alice creating a Budget with expiry {expiry}"),
            w.as_alice::<Budget>()
                .create(&PostParams::default(), &budget)
                .await,
        );
        assert_contains(
            &message,
            &[
                "spec.approval.expiry: Invalid value",
                "approval.expiry must be at least 1m",
            ],
        );
    }
    let message = refused(
        422,
        "alice shortening the Budget's expiry",
        w.as_alice::<Budget>()
            .patch(
                "household",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"approval": {"expiry": "0s"}}})),
            )
            .await,
    );
    assert_contains(&message, &["approval.expiry must be at least 1m"]);
    assert_nothing_written(&w).await;
}

/// The demo attack: a cluster without the policies, where alice records an approval in
/// bob's name. The controller checks at start-up that the policies are in force, names them in
/// the plan's status and writes nothing; once they are installed, a fresh request approved by bob
/// goes through.
#[tokio::test]
async fn without_the_policies_no_approval_is_followed() {
    let plane = ControlPlane::start().await.expect("a control plane");
    let s = Scenario::without_admission(&plane, "no-policy", demo::generate()).await;
    let ledgerops = Ledgerops::start(&plane).await;
    // Budgets sync without the policies.
    s.create_budget(
        "household",
        demo::TOKEN,
        json!({"writes": {"enabled": true}}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let missing = "ValidatingAdmissionPolicy ledgerops-approvalrequests is not installed";
    let blocked = wait::until(
        &s.api::<CategorizationPlan>(),
        "september",
        Duration::from_secs(60),
        |p| {
            p.status.as_ref().and_then(|s| s.phase) == Some(PlanPhase::Blocked)
                && serde_json::to_string(&p.status).unwrap().contains(missing)
        },
    )
    .await;
    let hash = blocked.status.unwrap().preview.unwrap().hash;
    let uid = blocked.metadata.uid.unwrap();

    // Nothing stops alice here: she opens the request the controller would open, approved by bob.
    let alice = attacker(&plane, &s.ns, "alice").await;
    let name = format!("september-{}", &hash[..10]);
    let mut doc = example_documents("approval-request.yaml").remove(0);
    doc["metadata"] = json!({
        "name": name,
        "labels": {"ledgerops.dev/subject-uid": uid},
        "ownerReferences": [{"apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
            "name": "september", "uid": uid, "controller": true}],
    });
    doc["spec"]["subject"]["name"] = json!("september");
    doc["spec"]["previewHash"] = json!(hash);
    doc["spec"]["expiresAt"] = json!("2099-01-01T00:00:00Z");
    doc["spec"]["decision"] = json!({"verdict": "Approve", "by": "bob"});
    Api::<ApprovalRequest>::namespaced(alice, &s.ns)
        .create(&PostParams::default(), &object(doc))
        .await
        .expect("without the policies the API server accepts alice's forgery");
    s.annotate::<CategorizationPlan>("september", "example.com/nudge", "1")
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let plan = s
        .api::<CategorizationPlan>()
        .get("september")
        .await
        .unwrap();
    assert_eq!(
        plan.status.as_ref().and_then(|s| s.phase),
        Some(PlanPhase::Blocked)
    );
    let status = serde_json::to_string(&plan.status).unwrap();
    assert!(
        status.contains(missing) && status.contains("ledgerops applies no approval until then"),
        "{status}"
    );
    let counters = s.sim.control().counters().await.unwrap();
    assert!(
        !counters
            .by_endpoint
            .keys()
            .any(|e| ["PATCH ", "PUT ", "POST "].iter().any(|m| e.starts_with(m))),
        "YNAB saw writes: {:?}",
        counters.by_endpoint
    );
    assert!(
        ledgerops
            .log()
            .contains("admission policies NOT in force, ledgerops applies no approval"),
        "{}",
        ledgerops.log()
    );

    // The operator removes the forgery and installs the policies; bob may approve.
    s.api::<ApprovalRequest>()
        .delete(&name, &DeleteParams::default())
        .await
        .expect("deleting alice's request");
    let admin = plane.client().await.unwrap();
    ledgerops_e2e::admission::install_admission(&admin, ledgerops_e2e::CONTROLLER_USER).await;
    ledgerops_e2e::attacker::install_people_roles(&admin).await;
    let binding: k8s_openapi::api::rbac::v1::RoleBinding = object(json!({
        "metadata": {"name": "bob-approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ledgerops-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}],
    }));
    s.api::<k8s_openapi::api::rbac::v1::RoleBinding>()
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    assert!(
        ledgerops
            .log()
            .contains("admission policies in force: ledgerops follows approvals"),
        "{}",
        ledgerops.log()
    );
    let fresh = s
        .api::<ApprovalRequest>()
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(fresh.len(), 1, "one fresh request: {fresh:#?}");
    assert_eq!(fresh[0].spec.decision, None);
    let request = fresh[0].metadata.name.clone().unwrap();
    let bob = plane.client_as("bob").await.unwrap();
    Api::<ApprovalRequest>::namespaced(bob, &s.ns)
        .patch(
            &request,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"decision": {"verdict": "Approve", "by": "bob"}}})),
        )
        .await
        .expect("bob approves in his own name");
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(
        s.requests(ledgerops_e2e::scenario::PATCH).await,
        1,
        "one bulk write"
    );
}
