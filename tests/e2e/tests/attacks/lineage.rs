//! Four eyes by lineage: side doors around "nobody approves what they helped propose", each tried
//! as the person it protects against, with the refusal's words and no YNAB write, then the
//! allowed path once. `alice` holds an editor's rights and more, and here also `approve`; `carol`
//! is a second editor; `bob` approves.

use std::time::Duration;

use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use ledgerops::api::agent_job::JobPhase;
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::transaction::step::RESOLVE;
use ledgerops_e2e::attacker::{approver, attacker};
use ledgerops_e2e::config_repo;
use ledgerops_e2e::git_work::{Work, bare};
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::scenario::{PATCH, Scenario, household};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use serde_json::json;

use crate::proposals::{asking, assert_says, forbidden, send_approval, september, september_by};

/// The request ledgerops issued for plan `plan`, other than `not`.
async fn issued_request(s: &Scenario, plan: &str, not: Option<&str>) -> ApprovalRequest {
    let requests = s.api::<ApprovalRequest>();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let found = requests
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .find(|r| {
                r.spec.subject.name == plan
                    && r.status.as_ref().is_some_and(|s| s.issued_for.is_some())
                    && Some(r.metadata.uid.as_deref().unwrap_or_default()) != not
            });
        if let Some(request) = found {
            return request;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no request for {plan} within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_no_op_edit_and_a_deleted_request_never_hand_a_proposal_over() {
    let s = household("lin-handover", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    approver(plane, &s.ns, "alice").await;
    let carol = attacker(plane, &s.ns, "carol").await;
    Api::<CategorizationPlan>::namespaced(alice.clone(), &s.ns)
        .create(&PostParams::default(), &september_by("alice"))
        .await
        .expect("alice proposes");
    let first = issued_request(&s, "september", None).await;
    let first_name = first.metadata.name.clone().unwrap();
    assert_eq!(first.spec.proposed_by, ["alice"]);

    // carol, another editor, cannot take alice's name off without changing anything.
    let as_carol = Api::<CategorizationPlan>::namespaced(carol.clone(), &s.ns);
    let message = forbidden(
        "carol naming herself the proposer",
        as_carol
            .patch(
                "september",
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"annotations": {PROPOSED_BY: "carol"}}})),
            )
            .await,
    );
    assert_says(
        &message,
        &[
            "user carol may not change CategorizationPlan september",
            "to \"alice,carol\"",
        ],
    );
    // Adding herself is allowed (it only restricts who may approve).
    as_carol
        .patch(
            "september",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {PROPOSED_BY: "alice,carol"}}})),
        )
        .await
        .expect("carol adds herself");
    // She may not delete the waiting request: she neither shaped it nor decides.
    let requests_as_carol = Api::<ApprovalRequest>::namespaced(carol, &s.ns);
    let message = forbidden(
        "carol deleting the waiting request",
        requests_as_carol
            .delete(&first_name, &DeleteParams::default())
            .await,
    );
    assert_says(
        &message,
        &[
            &format!("user carol may not delete ApprovalRequest {first_name}"),
            "only someone who shaped that change (alice)",
        ],
    );
    // alice, its proposer, may; ledgerops asks again at once, and the new request keeps her.
    Api::<ApprovalRequest>::namespaced(alice.clone(), &s.ns)
        .delete(&first_name, &DeleteParams::default())
        .await
        .expect("alice withdraws her request");
    let asked = std::time::Instant::now();
    let second = issued_request(&s, "september", first.metadata.uid.as_deref()).await;
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "asked again only after {:?}",
        asked.elapsed()
    );
    assert_eq!(second.spec.proposed_by, ["alice", "carol"]);
    let second_name = second.metadata.name.clone().unwrap();
    let message = forbidden(
        "alice approving her own proposal",
        send_approval(&Api::namespaced(alice, &s.ns), &second_name, "alice").await,
    );
    assert_says(
        &message,
        &[
            &format!("user alice may not decide ApprovalRequest {second_name}"),
            "alice is in the lineage of the change",
            "spec.proposedBy: alice, carol",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.writes().await, 0);

    // The control: bob, outside the lineage, approves; it is written once.
    let bob = approver(plane, &s.ns, "bob").await;
    send_approval(&Api::namespaced(bob, &s.ns), &second_name, "bob")
        .await
        .expect("bob approves");
    s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1);
}

#[tokio::test]
async fn a_repository_of_ones_own_does_not_launder_a_proposal() {
    let w = World::build("lin-repo")
        .repositories()
        .alice()
        .household(asking())
        .build()
        .await;
    let plane = ControlPlane::shared();
    let alice = approver(plane, &w.sc.ns, "alice").await;
    w.sc.wait_budget("household", BudgetPhase::Ready).await;
    // alice puts her plan into a repository of her own, and a ConfigRepo (authority Propose,
    // which any editor may make) applies it: the plan is the repository's.
    let (_, url) = bare(w.root(), "mine.git");
    let work = Work::new(w.root().join("mine-work"), &url);
    work.commit(&[("september.yaml", &september().to_string())], false);
    config_repo::create(
        &alice,
        &w.sc.ns,
        "mine",
        json!({"url": url, "interval": "30s"}),
    )
    .await;
    let request = issued_request(&w.sc, "september", None).await;
    let name = request.metadata.name.clone().unwrap();
    assert_eq!(
        request.spec.proposed_by,
        ["configrepo:mine", "alice"],
        "the repository, and whoever made it"
    );
    let message = forbidden(
        "alice approving what her repository proposed",
        send_approval(&Api::namespaced(alice, &w.sc.ns), &name, "alice").await,
    );
    assert_says(
        &message,
        &[
            &format!("user alice may not decide ApprovalRequest {name}"),
            "alice is in the lineage of the change",
            "configrepo:mine",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(w.sc.writes().await, 0);

    // The control: bob approves, and it is written once.
    let bob = approver(plane, &w.sc.ns, "bob").await;
    send_approval(&Api::namespaced(bob, &w.sc.ns), &name, "bob")
        .await
        .expect("bob approves");
    w.sc.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
}

/// The error of the job of `comment` on `issue`, once it is Rejected.
async fn refused(w: &World, issue: i64, comment: i64) -> String {
    let done = w
        .wait_phase(&w.job_name(issue, comment), JobPhase::Rejected)
        .await;
    done.status.unwrap().error.unwrap_or_default()
}

#[tokio::test]
async fn a_gitea_decision_counts_only_as_the_user_an_owner_mapped_it_to() {
    let w = World::build("lin-gitea")
        .agent(&["issue_comment"])
        .household(json!({"writes": {"enabled": true}, "approval": {"fourEyes": true}}))
        .plan_awaiting_approval()
        .build()
        .await;
    let gitea = Gitea::shared();
    let request =
        w.sc.api::<ApprovalRequest>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items[0]
            .clone();
    let name = request.metadata.name.clone().unwrap();
    // The plan is the suites' admin's.
    assert_eq!(request.spec.proposed_by, ["admin"]);
    let issue = w.issue("lineage").await;
    let approve = format!("/agent approve {name}");
    let map = |user: &str| json!({"spec": {"approval": {"giteaUsers": [{"login": gitea.writer().login(), "user": user}]}}});
    let budgets = w.sc.api::<Budget>();

    // A writer of the repository whom no owner mapped: nobody can tell whether they proposed it.
    let c = w.comment(gitea.writer(), issue, &approve).await;
    let error = refused(&w, issue, c).await;
    assert_says(
        &error,
        &[
            "a login the Budget maps to no Kubernetes user",
            "giteaUsers",
        ],
    );
    // Mapped to the plan's proposer: four eyes, as with kubectl.
    budgets
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&map("admin")),
        )
        .await
        .unwrap();
    let c = w.comment(gitea.writer(), issue, &approve).await;
    let error = refused(&w, issue, c).await;
    assert_says(
        &error,
        &[
            &format!(
                "gitea:{} (Kubernetes user admin) shaped the change",
                gitea.writer().login()
            ),
            "four eyes",
        ],
    );
    let now = w.sc.api::<ApprovalRequest>().get(&name).await.unwrap();
    assert_eq!(now.spec.decision, None, "a decision was recorded");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(w.sc.writes().await, 0);

    // The control: mapped to bob, an approver outside the lineage, the comment decides once.
    approver(ControlPlane::shared(), &w.sc.ns, "bob").await;
    budgets
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&map("bob")),
        )
        .await
        .unwrap();
    let c = w.comment(gitea.writer(), issue, &approve).await;
    w.wait_phase(&w.job_name(issue, c), JobPhase::Succeeded)
        .await;
    wait::until(
        &w.sc.api::<CategorizationPlan>(),
        "september",
        Duration::from_secs(60),
        |p| p.status.as_ref().and_then(|s| s.phase) == Some(PlanPhase::Applied),
    )
    .await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
}

#[tokio::test]
async fn a_pull_requests_author_does_not_approve_what_it_brought() {
    let gitea = Gitea::shared();
    let writer = gitea.writer();
    // The writer's Gitea login is bob's, and bob approves.
    let mut household = asking();
    household["approval"]["giteaUsers"] = json!([{"login": writer.login(), "user": "bob"}]);
    let w = World::build("lin-pr")
        .agent(&["issue_comment", "pull_request_comment", "push"])
        .config_repo_cache()
        .household(household)
        .build()
        .await;
    let plane = ControlPlane::shared();
    let ns = w.sc.ns.clone();
    // An owner's ConfigRepo follows the repository; bob's pull request brings a plan, and
    // someone else merges it.
    w.follow_repo(json!({})).await;
    let repo = w.repo();
    let plan = september().to_string();
    gitea_api::push_file(
        repo,
        writer,
        "plans/september.yaml",
        &plan,
        "sept",
        Some("main"),
    )
    .await;
    let pr = gitea_api::open_pull(repo, writer, "sept", "September").await;
    gitea_api::merge(repo, gitea.admin(), pr).await;
    let request = issued_request(&w.sc, "september", None).await;
    let name = request.metadata.name.clone().unwrap();
    let author = format!("gitea:{}", writer.login());
    let lineage = &request.spec.proposed_by;
    assert!(
        lineage.contains(&author) && lineage.contains(&"bob".to_string()),
        "the pull request's author, and the user an owner mapped them to: {lineage:?}"
    );
    assert!(
        !lineage.contains(&format!("gitea:{}", gitea.admin().login())),
        "whoever merged is not an author: {lineage:?}"
    );

    // bob approving with kubectl, and as his Gitea login on the pull request: both refused.
    let bob = approver(plane, &ns, "bob").await;
    let message = forbidden(
        "bob approving the plan his pull request brought",
        send_approval(&Api::namespaced(bob, &ns), &name, "bob").await,
    );
    assert_says(&message, &["bob is in the lineage of the change", &author]);
    let c = w
        .comment(writer, pr, &format!("/agent approve {name}"))
        .await;
    let error = refused(&w, pr, c).await;
    assert_says(
        &error,
        &[&format!("{author} shaped the change"), "four eyes"],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(w.sc.writes().await, 0);

    // The control: carol, who had no part in it, approves, and it is written once.
    let carol = approver(plane, &ns, "carol").await;
    send_approval(&Api::namespaced(carol, &ns), &name, "carol")
        .await
        .expect("carol approves");
    w.sc.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
}

/// `resolve: ours` asks to write the spec over someone's edit in YNAB: whoever sets it shaped
/// that write, so admission puts them on the lineage, and they do not approve it themselves.
#[tokio::test]
async fn whoever_resolves_ours_does_not_approve_the_write_over_the_edit() {
    let s = household("lin-resolve", asking()).await;
    let plane = ControlPlane::shared();
    let alice = attacker(plane, &s.ns, "alice").await;
    approver(plane, &s.ns, "alice").await;
    let bob = approver(plane, &s.ns, "bob").await;
    s.bakery_to_groceries().await;
    let first = issued_request(&s, "bakery", None).await;
    send_approval(
        &Api::namespaced(bob.clone(), &s.ns),
        &first.name_any(),
        "bob",
    )
    .await
    .expect("bob approves the first write");
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    s.wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let written = s.requests(PATCH).await;

    let as_alice = Api::<Transaction>::namespaced(alice.clone(), &s.ns);
    let ours = json!({"metadata": {"annotations": {RESOLVE: "ours"}}});
    let message = forbidden(
        "alice asking for ours without her name",
        as_alice
            .patch("bakery", &PatchParams::default(), &Patch::Merge(&ours))
            .await,
    );
    assert_says(
        &message,
        &[
            "user alice may not change Transaction bakery",
            "to \"admin,alice\"",
        ],
    );
    let named = json!({"metadata": {"annotations": {RESOLVE: "ours", PROPOSED_BY: "admin,alice"}}});
    as_alice
        .patch("bakery", &PatchParams::default(), &Patch::Merge(&named))
        .await
        .expect("alice asks for ours, on the lineage");
    let request = issued_request(&s, "bakery", first.metadata.uid.as_deref()).await;
    assert_eq!(request.spec.proposed_by, ["admin", "alice"]);
    let name = request.name_any();
    let message = forbidden(
        "alice approving the write she asked for",
        send_approval(&Api::namespaced(alice, &s.ns), &name, "alice").await,
    );
    assert_says(
        &message,
        &[
            &format!("user alice may not decide ApprovalRequest {name}"),
            "alice is in the lineage of the change",
        ],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.requests(PATCH).await, written, "nothing written");

    send_approval(&Api::namespaced(bob, &s.ns), &name, "bob")
        .await
        .expect("bob approves");
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, written + 1);
}
