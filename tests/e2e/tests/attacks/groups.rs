//! Roles bound to a group: `dana` holds `ledgerops-approver` only through her group
//! `household-approvers`. A decision counts her groups only as the API server authenticated
//! them (admission compares `spec.decision.groups` with the sender's own), so nobody borrows a
//! group's power by naming it, and a group-bound approver is not shut out either.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops_e2e::attacker::{attacker, group_approver};
use ledgerops_e2e::scenario::{PATCH, household};
use ledgerops_testenv::ControlPlane;
use serde_json::json;

use crate::proposals::{asking, assert_says, forbidden, not_authorized, request_of, september_by};

/// `dana`'s approval, recording `groups` when given.
fn approval(groups: Option<&[String]>) -> serde_json::Value {
    let mut decision = json!({"verdict": "Approve", "by": "dana", "comment": "fine"});
    if let Some(groups) = groups {
        decision["groups"] = json!(groups);
    }
    json!({"spec": {"decision": decision}})
}

#[tokio::test]
async fn a_group_bound_approver_decides_with_the_groups_she_was_authenticated_with() {
    let s = household("groups", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    let dana = group_approver(plane, &s.ns, "dana", "household-approvers").await;
    let plans = Api::<CategorizationPlan>::namespaced(alice, &s.ns);
    plans
        .create(&PostParams::default(), &september_by("alice"))
        .await
        .expect("alice proposes");
    let request = request_of(&s, "september").await;
    let as_dana = Api::<ApprovalRequest>::namespaced(dana.clone(), &s.ns);

    // Naming a group she is not in is refused by admission, with the groups she has.
    let claimed = ["system:masters".to_owned()];
    let message = forbidden(
        "dana claiming system:masters",
        as_dana
            .patch(
                &request,
                &PatchParams::default(),
                &Patch::Merge(&approval(Some(&claimed))),
            )
            .await,
    );
    assert_says(
        &message,
        &[
            &format!(
                "user dana may not record the groups [system:masters] with a decision on ApprovalRequest {request}"
            ),
            "household-approvers",
            "kubectl auth whoami",
        ],
    );

    // Without her groups, the controller asks for her name alone: not followed, and it says
    // how to record them.
    as_dana
        .patch(
            &request,
            &PatchParams::default(),
            &Patch::Merge(&approval(None)),
        )
        .await
        .expect("admission lets dana decide: her group holds approve");
    let message = not_authorized(&s, "september").await;
    assert_says(
        &message,
        &[
            "user dana does not hold the verb approve",
            "spec.decision.groups",
        ],
    );
    assert_eq!(s.writes().await, 0);

    // The allowed path: the proposal again, approved with exactly the groups the API server
    // says she has (what kubectl ledgerops approve records); written once.
    plans
        .delete("september", &DeleteParams::default())
        .await
        .expect("alice withdraws the plan");
    ledgerops_e2e::wait::gone(&s.api::<CategorizationPlan>(), "september").await;
    let mut again = september_by("alice");
    again.metadata.name = Some("october".into());
    plans
        .create(&PostParams::default(), &again)
        .await
        .expect("alice proposes again");
    let request = request_of(&s, "october").await;
    let me = Api::<SelfSubjectReview>::all(dana)
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("dana asks who she is");
    let groups = me
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.groups)
        .expect("dana's groups");
    assert!(
        groups.contains(&"household-approvers".to_owned()),
        "{groups:?}"
    );
    as_dana
        .patch(
            &request,
            &PatchParams::default(),
            &Patch::Merge(&approval(Some(&groups))),
        )
        .await
        .expect("dana approves with her groups");
    s.wait_plan("october", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}
