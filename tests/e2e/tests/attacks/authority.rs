//! Separate powers: proposing is an editor's, deciding an approver's (the verb `approve`),
//! governing an owner's (`govern`). Played by `alice` (an editor with over-broad RBAC besides),
//! an automation holding only the built-in `edit` role, `bob` (approver) and `carol` (owner), on
//! the real API server against `ledgerops run` and the simulator. Every refusal is asserted with
//! its message, and YNAB sees no write until the person who may decides.

use std::time::Duration;

use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::Budget;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::config_repo::ConfigRepo;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops_e2e::attacker::{approver, attacker, automation, owner, unbind};
use ledgerops_e2e::scenario::{PATCH, bakery_and_train_plan, category, household};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;

use crate::proposals::{
    asking, assert_says, forbidden, not_authorized, request_of, send_approval, september_by,
};

#[tokio::test]
async fn a_proposer_with_editing_rights_never_approves() {
    let s = household("auth-approve", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    let robot = automation(plane, &s.ns, "ci").await;
    // Alice proposes, as an editor may.
    let plan = september_by("alice");
    Api::<CategorizationPlan>::namespaced(alice.clone(), &s.ns)
        .create(&PostParams::default(), &plan)
        .await
        .expect("alice proposes a plan");
    let request = request_of(&s, "september").await;

    // She cannot approve it in her own name: admission asks the authorizer for approve, which
    // her over-broad patch rights do not carry.
    let message = forbidden(
        "alice approving",
        send_approval(&Api::namespaced(alice, &s.ns), &request, "alice").await,
    );
    assert_says(
        &message,
        &[
            &format!("user alice may not decide ApprovalRequest {request}"),
            "the verb approve on approvalrequests",
            "ClusterRole ledgerops-approver",
        ],
    );
    // An automation holding the namespace's built-in edit role cannot even patch the request:
    // edit aggregates ledgerops-edit, which proposes and never decides.
    let robot_user = format!("system:serviceaccount:{}:ci", s.ns);
    let message = forbidden(
        "the automation approving",
        send_approval(&Api::namespaced(robot, &s.ns), &request, &robot_user).await,
    );
    assert_says(
        &message,
        &[&robot_user, "cannot patch resource \"approvalrequests\""],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.writes().await, 0);
    let stored = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    assert_eq!(stored.spec.decision, None);

    // The control: bob, an approver, decides, and the plan is written once.
    let bob = approver(plane, &s.ns, "bob").await;
    send_approval(&Api::namespaced(bob, &s.ns), &request, "bob")
        .await
        .expect("bob approves");
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn only_an_owner_governs_a_budget_or_a_governing_config_repo() {
    let s = household("auth-govern", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    let budgets = Api::<Budget>::namespaced(alice.clone(), &s.ns);
    // In her own name, as admission requires of any change: what refuses her is governing.
    let loosen = json!({"metadata": {"annotations": {PROPOSED_BY: "admin,alice"}},
        "spec": {"approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}}});
    let govern = [
        "verb govern on budgets",
        "ClusterRole ledgerops-owner",
        "Ask an owner",
    ];
    let message = forbidden(
        "alice loosening the policy",
        budgets
            .patch("household", &PatchParams::default(), &Patch::Merge(&loosen))
            .await,
    );
    assert_says(
        &message,
        &[&["user alice may not change Budget household"], &govern[..]].concat(),
    );
    let mut other = s.api::<Budget>().get("household").await.unwrap();
    other.metadata = kube::api::ObjectMeta {
        name: Some("second".into()),
        annotations: Some([(PROPOSED_BY.to_owned(), "alice".to_owned())].into()),
        ..Default::default()
    };
    other.status = None;
    let message = forbidden(
        "alice creating a Budget",
        budgets.create(&PostParams::default(), &other).await,
    );
    assert_says(
        &message,
        &[&["user alice may not create Budget second"], &govern[..]].concat(),
    );
    // Nor can she have the garbage collector delete it for her.
    let missing = json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "gone", "uid": "00000000-0000-0000-0000-000000000000"}]}});
    let message = forbidden(
        "alice pointing the Budget at a missing owner",
        budgets
            .patch(
                "household",
                &PatchParams::default(),
                &Patch::Merge(&missing),
            )
            .await,
    );
    assert_says(
        &message,
        &[&["user alice may not change Budget household"], &govern[..]].concat(),
    );
    let message = forbidden(
        "alice deleting the Budget",
        budgets.delete("household", &DeleteParams::default()).await,
    );
    assert_says(&message, &["user alice may not delete Budget household"]);

    // A ConfigRepo that would declare Budgets and bless rules is an owner's; one that proposes
    // is hers to make.
    let repo = |authority: &str| -> ConfigRepo {
        serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
            "metadata": {"name": format!("hers-{}", authority.to_lowercase()),
                         "annotations": {PROPOSED_BY: "alice"}},
            "spec": {"url": "https://git.example.com/alice/ledger.git", "suspend": true,
                     "authority": authority},
        }))
        .unwrap()
    };
    let repos = Api::<ConfigRepo>::namespaced(alice.clone(), &s.ns);
    let message = forbidden(
        "alice making a governing ConfigRepo",
        repos.create(&PostParams::default(), &repo("Govern")).await,
    );
    assert_says(
        &message,
        &[
            "user alice may not create ConfigRepo hers-govern",
            "verb govern on configrepos",
        ],
    );
    repos
        .create(&PostParams::default(), &repo("Propose"))
        .await
        .expect("alice makes a ConfigRepo that proposes");
    let message = forbidden(
        "alice promoting her ConfigRepo",
        repos
            .patch(
                "hers-propose",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {PROPOSED_BY: "alice"}},
                                     "spec": {"authority": "Govern"}})),
            )
            .await,
    );
    assert_says(&message, &["verb govern on configrepos"]);

    // Nothing loosened: a plan still asks, and nothing is written.
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    assert_eq!(s.writes().await, 0);

    // The control: carol, an owner, changes the policy.
    let carol = owner(plane, &s.ns, "carol").await;
    Api::<Budget>::namespaced(carol, &s.ns)
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"annotations": {PROPOSED_BY: "admin,carol"}},
                                 "spec": {"syncInterval": "10m"}}),
            ),
        )
        .await
        .expect("carol governs the Budget");
}

#[tokio::test]
async fn a_decided_request_outlives_its_plan_and_nobody_repoints_it() {
    let s = household("auth-record", asking()).await;
    let plane = ControlPlane::shared();
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;
    let bob = approver(plane, &s.ns, "bob").await;
    let as_bob = Api::<ApprovalRequest>::namespaced(bob, &s.ns);
    let reject = json!({"spec": {"decision": {"verdict": "Reject", "by": "bob", "comment": "not this month"}}});
    as_bob
        .patch(&request, &PatchParams::default(), &Patch::Merge(&reject))
        .await
        .expect("bob rejects");
    // ledgerops releases the decided request from its plan.
    wait::until(
        &s.api::<ApprovalRequest>(),
        &request,
        Duration::from_secs(30),
        |r| {
            r.metadata
                .owner_references
                .as_ref()
                .is_none_or(Vec::is_empty)
        },
    )
    .await;

    // Bob points it at an owner that does not exist, for the garbage collector to delete it.
    let missing = json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "gone", "uid": "00000000-0000-0000-0000-000000000000"}]}});
    let message = forbidden(
        "bob adding an owner reference",
        as_bob
            .patch(&request, &PatchParams::default(), &Patch::Merge(&missing))
            .await,
    );
    assert_says(
        &message,
        &[
            &format!(
                "user bob may not change the owner references or finalizers of ApprovalRequest {request}"
            ),
            "records who decided",
        ],
    );
    let finalizer = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    forbidden(
        "bob adding a finalizer",
        as_bob
            .patch(&request, &PatchParams::default(), &Patch::Merge(&finalizer))
            .await,
    );

    // The plan goes; the record of who decided stays.
    s.api::<CategorizationPlan>()
        .delete("september", &DeleteParams::background())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let kept = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    assert_eq!(kept.spec.decision.unwrap().by, "bob");
    assert_eq!(s.writes().await, 0);
}

#[tokio::test]
async fn a_decision_whose_author_lost_approve_is_not_followed() {
    let s = household("auth-revoked", asking()).await;
    let plane = ControlPlane::shared();
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;
    // The Budget is paused while bob decides and then leaves the household.
    let pause = |on: bool| json!({"spec": {"suspend": on}});
    s.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&pause(true)),
        )
        .await
        .unwrap();
    let bob = approver(plane, &s.ns, "bob").await;
    send_approval(&Api::namespaced(bob, &s.ns), &request, "bob")
        .await
        .expect("bob approves while he may");
    unbind(plane, &s.ns, "bob", "ledgerops-approver").await;
    s.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&pause(false)),
        )
        .await
        .unwrap();

    // Right before the write, the controller asks the authorizer: bob no longer holds approve.
    let message = not_authorized(&s, "september").await;
    assert_says(
        &message,
        &[
            &format!("The approval of ApprovalRequest {request} cannot be followed"),
            "user bob does not hold the verb approve",
            "ledgerops-approver",
        ],
    );
    assert_eq!(s.writes().await, 0);

    // Bound again, his decision is followed, once.
    approver(plane, &s.ns, "bob").await;
    s.annotate::<CategorizationPlan>("september", "tests.ledgerops.dev/nudge", "1")
        .await;
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn nobody_approves_their_own_proposal() {
    let s = household("auth-four-eyes", asking()).await;
    let plane = ControlPlane::shared();
    // Bob both proposes and approves (an editor and an approver); carol approves too.
    let bob = attacker(plane, &s.ns, "bob").await;
    approver(plane, &s.ns, "bob").await;
    let carol = approver(plane, &s.ns, "carol").await;
    let plans = Api::<CategorizationPlan>::namespaced(bob.clone(), &s.ns);
    // He cannot propose in someone else's name, to approve it afterwards.
    let message = forbidden(
        "bob proposing as carol",
        plans
            .create(&PostParams::default(), &september_by("carol"))
            .await,
    );
    assert_says(
        &message,
        &[
            "user bob may not create CategorizationPlan september with ledgerops.dev/proposed-by \"carol\"",
            "Set metadata.annotations[\"ledgerops.dev/proposed-by\"] to \"bob\"",
        ],
    );
    let message = forbidden(
        "bob proposing as nobody",
        plans
            .create(&PostParams::default(), &{
                let mut p = september_by("bob");
                p.metadata.annotations = None;
                p
            })
            .await,
    );
    assert_says(
        &message,
        &["user bob may not create CategorizationPlan september"],
    );
    plans
        .create(&PostParams::default(), &september_by("bob"))
        .await
        .expect("bob proposes in his own name");
    let request = request_of(&s, "september").await;
    let stored = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    assert_eq!(stored.spec.proposed_by, ["bob"]);
    assert!(stored.spec.four_eyes);
    let as_bob = Api::<ApprovalRequest>::namespaced(bob.clone(), &s.ns);
    let message = forbidden(
        "bob approving his own proposal",
        send_approval(&as_bob, &request, "bob").await,
    );
    assert_says(
        &message,
        &[
            &format!("user bob may not decide ApprovalRequest {request}"),
            "bob is in the lineage of the change",
            "four eyes",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.writes().await, 0);

    // The control: carol approves it, and it is written once.
    send_approval(&Api::namespaced(carol, &s.ns), &request, "carol")
        .await
        .expect("carol approves bob's proposal");
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn whoever_changed_a_proposal_cannot_approve_it() {
    let s = household("auth-last-change", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    let bob = attacker(plane, &s.ns, "bob").await;
    approver(plane, &s.ns, "bob").await;
    let plan = september_by("alice");
    Api::<CategorizationPlan>::namespaced(alice, &s.ns)
        .create(&PostParams::default(), &plan)
        .await
        .expect("alice proposes");
    let request = request_of(&s, "september").await;
    let plans = Api::<CategorizationPlan>::namespaced(bob.clone(), &s.ns);
    // Bob cannot take alice's name off the plan's lineage, with a change or without one.
    for spec in [json!({"description": "reviewed"}), json!({})] {
        let replaced = json!({"metadata": {"annotations": {PROPOSED_BY: "bob"}}, "spec": spec});
        let message = forbidden(
            "bob replacing alice as the proposer",
            plans
                .patch(
                    "september",
                    &PatchParams::default(),
                    &Patch::Merge(&replaced),
                )
                .await,
        );
        assert_says(
            &message,
            &[
                "user bob may not change CategorizationPlan september",
                "keep every name it had",
                "to \"alice,bob\"",
            ],
        );
    }
    // He changes the plan (a new description: the preview, and so the request, stay), adding
    // himself to its lineage; then he approves the request alice's proposal opened.
    let described = json!({"metadata": {"annotations": {PROPOSED_BY: "alice,bob"}},
                           "spec": {"description": "reviewed"}});
    plans
        .patch(
            "september",
            &PatchParams::default(),
            &Patch::Merge(&described),
        )
        .await
        .expect("bob changes the plan in his own name");
    send_approval(&Api::namespaced(bob, &s.ns), &request, "bob")
        .await
        .expect("admission sees only alice in the request's lineage");
    // Right before the write, the controller sees that bob shaped the plan since.
    let message = not_authorized(&s, "september").await;
    assert_says(
        &message,
        &[
            "bob shaped the change",
            "its lineage: alice, bob",
            &format!("ApprovalRequest {request}"),
            "four eyes",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.writes().await, 0);
}

#[tokio::test]
async fn a_rule_is_blessed_by_an_approver_who_did_not_write_it() {
    let s = household("auth-bless", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    let bob = attacker(plane, &s.ns, "bob").await;
    approver(plane, &s.ns, "bob").await;
    let carol = approver(plane, &s.ns, "carol").await;
    let rule = |name: &str, by: &str| -> CategorizationRule {
        serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationRule",
            "metadata": {"name": name, "annotations": {PROPOSED_BY: by}},
            "spec": {"budgetRef": {"name": "household"}, "match": {"payeeNormalised": "RAIL CO"},
                     "categoryId": category("Transport")},
        }))
        .unwrap()
    };
    let blessing =
        |by: &str| json!({"spec": {"blessing": {"by": by, "at": "2026-09-21T08:00:00Z"}}});
    let as_alice = Api::<CategorizationRule>::namespaced(alice, &s.ns);
    as_alice
        .create(&PostParams::default(), &rule("rail", "alice"))
        .await
        .expect("alice writes a rule");
    // An editor never blesses, not even her own rule in her own name.
    let message = forbidden(
        "alice blessing",
        as_alice
            .patch(
                "rail",
                &PatchParams::default(),
                &Patch::Merge(&blessing("alice")),
            )
            .await,
    );
    assert_says(
        &message,
        &[
            "user alice may not bless CategorizationRule rail",
            "the verb bless on categorizationrules",
            "ClusterRole ledgerops-approver",
        ],
    );
    // Bob writes and blesses a rule of his own: the blessing does not count (four eyes).
    let as_bob = Api::<CategorizationRule>::namespaced(bob, &s.ns);
    as_bob
        .create(&PostParams::default(), &rule("bobs", "bob"))
        .await
        .expect("bob writes a rule");
    as_bob
        .patch(
            "bobs",
            &PatchParams::default(),
            &Patch::Merge(&blessing("bob")),
        )
        .await
        .expect("admission lets an approver bless in his own name");
    let bobs = wait::until(
        &s.api::<CategorizationRule>(),
        "bobs",
        Duration::from_secs(30),
        |r| {
            r.status
                .as_ref()
                .is_some_and(|st| st.conditions.iter().any(|c| c.reason == "NotAuthorized"))
        },
    )
    .await;
    let status = bobs.status.unwrap();
    assert_eq!(status.phase, Some(RulePhase::Candidate));
    let message = &status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap()
        .message;
    assert_says(
        message,
        &["bob shaped CategorizationRule bobs", "cannot also bless it"],
    );
    // Carol blesses alice's rule: it is Blessed, and acts.
    Api::<CategorizationRule>::namespaced(carol, &s.ns)
        .patch(
            "rail",
            &PatchParams::default(),
            &Patch::Merge(&blessing("carol")),
        )
        .await
        .expect("carol blesses alice's rule");
    let rail = wait::until(
        &s.api::<CategorizationRule>(),
        "rail",
        Duration::from_secs(30),
        |r| r.status.as_ref().and_then(|st| st.phase) == Some(RulePhase::Blessed),
    )
    .await;
    // A blessing alone keeps the rule's author.
    assert_eq!(rail.metadata.annotations.unwrap()[PROPOSED_BY], "alice");
    assert_eq!(s.writes().await, 0);
}
