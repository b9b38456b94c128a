//! The inbox, on a real API server, simulator and Gitea: a request that waits for a person is
//! one Gitea issue in the household's config repository, assigned to the approver's login and
//! carrying the review and the words to answer with; it follows a newer request in place,
//! survives a restart without a word more, is answered there with `/agent approve`, and closes
//! with what was written. An expired request closes its issue and tells its `escalateTo`
//! logins once, also across a restart.

use kube::ResourceExt;
use kube::api::{Patch, PatchParams, PostParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::Budget;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops_e2e::attacker::approver;
use ledgerops_e2e::gitea_api::{self, call as gitea_call};
use ledgerops_e2e::inbox::{
    a_restart_changes_nothing, assignees, body, inbox_issues, mailed, the_issue,
};
use ledgerops_e2e::scenario::{PATCH, WAIT, bakery_and_train_plan};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use reqwest::Method;
use serde_json::{Value, json};

/// The newest request the controller issued for plan `september` other than `not`.
async fn request_after(w: &World, not: Option<&str>) -> ApprovalRequest {
    let api = w.sc.api::<ApprovalRequest>();
    let mut found = None;
    wait::eventually("the controller issues a request", WAIT, async || {
        let list = api.list(&Default::default()).await.unwrap();
        found = list.items.into_iter().find(|r| {
            Some(r.name_any().as_str()) != not
                && r.spec.subject.name == "september"
                && r.status.as_ref().is_some_and(|s| {
                    s.issued_for.is_some() && s.phase == Some(ApprovalPhase::Pending)
                })
        });
        found.is_some()
    })
    .await;
    found.unwrap()
}

#[tokio::test]
async fn a_waiting_request_is_one_issue_assigned_to_its_approver_answered_there_and_closed_with_the_result()
 {
    let gitea = Gitea::shared();
    let (writer, reader) = (gitea.writer(), gitea.reader());
    // The writer's login is bob, who approves; the reader's is alice, who proposes.
    let household = json!({
        "writes": {"enabled": true},
        "approval": {"giteaUsers": [{"login": writer.login(), "user": "bob"},
                                    {"login": reader.login(), "user": "alice"}]},
    });
    let mut w = World::build("inbox")
        .agent(&["issue_comment"])
        .household(household)
        .alice()
        .build()
        .await;
    let repo = w.repo().to_owned();
    let ns = w.sc.ns.clone();
    approver(ControlPlane::shared(), &ns, "bob").await;
    w.follow_repo(json!({})).await;
    let mut plan: CategorizationPlan = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "september", "annotations": {PROPOSED_BY: "alice"}},
        "spec": {"budgetRef": {"name": "household"}, "assignments": bakery_and_train_plan()["assignments"]},
    }))
    .unwrap();
    let plans = w.as_alice::<CategorizationPlan>();
    plans.create(&PostParams::default(), &plan).await.unwrap();
    let first = request_after(&w, None).await;
    let first_name = first.name_any();

    // The issue: bob assigned (alice proposed it), the review and the words to answer with.
    let issue = the_issue(&repo, "the request becomes an issue assigned to bob", |i| {
        body(i).contains(&format!("/agent approve {first_name}`"))
    })
    .await;
    let number = issue["number"].as_i64().unwrap();
    assert_eq!(assignees(&issue), [writer.login()], "bob, not alice");
    assert_eq!(issue["state"], "open");
    let title = issue["title"].as_str().unwrap();
    assert!(
        title.starts_with("Decide: CategorizationPlan september: "),
        "{title}"
    );
    let text = body(&issue);
    for part in [
        &format!("Asked: @{}.", writer.login()),
        "### By category",
        "Proposed by: `alice`",
        &format!("`/agent reject {first_name} <why>`"),
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }

    // Gitea itself tells bob, by mail, with the review and the words to answer with.
    mailed(
        writer.email(),
        &repo,
        number,
        &format!("/agent approve {first_name}"),
    )
    .await;

    // alice changes the plan: the newer request is shown in the same issue, in place.
    plan.spec.assignments.as_mut().unwrap().pop();
    plan.metadata = plans.get("september").await.unwrap().metadata;
    plans
        .replace("september", &PostParams::default(), &plan)
        .await
        .unwrap();
    let second = request_after(&w, Some(&first_name)).await;
    let name = second.name_any();
    let issue = the_issue(&repo, "the issue shows the newer request", |i| {
        body(i).contains(&format!("/agent approve {name}`"))
    })
    .await;
    assert_eq!(issue["number"].as_i64(), Some(number), "edited in place");
    assert!(!body(&issue).contains(&first_name), "{}", body(&issue));
    assert!(w.comments(number).await.is_empty(), "edits, not comments");

    // A restart finds the issue and changes nothing.
    a_restart_changes_nothing(&mut w, &repo).await;

    // bob answers on the issue, as his Gitea login: written in one operation.
    w.comment(writer, number, &format!("/agent approve {name}"))
        .await;
    w.sc.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(w.sc.requests(PATCH).await, 1, "one bulk update");
    let issue = the_issue(&repo, "the issue closes with what was written", |i| {
        i["state"] == "closed"
            && i["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Approved and written: "))
            && body(i).contains("is now **Applied**")
    })
    .await;
    assert!(
        body(&issue).contains(&format!("**Approved** by `gitea:{}`", writer.login())),
        "{}",
        body(&issue)
    );
    assert!(assignees(&issue).is_empty());
}

#[tokio::test]
async fn an_expired_request_closes_its_issue_and_tells_whom_to_escalate_to_once() {
    let gitea = Gitea::shared();
    let writer = gitea.writer().login().to_owned();
    let household = json!({
        "writes": {"enabled": true},
        "approval": {"expiry": "1m", "escalateTo": [writer, "treasurer@example.com"]},
    });
    let mut w = World::build("escalate")
        .agent(&[])
        .household(household)
        .build()
        .await;
    let repo = w.repo().to_owned();
    w.follow_repo(json!({})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = w.sc.plan_request("september").await;
    let issue = the_issue(&repo, "the waiting request becomes an issue", |i| {
        i["state"] == "open"
    })
    .await;
    assert!(
        body(&issue).contains("Nobody mapped in the Budget's `approval.giteaUsers` may decide it"),
        "{}",
        body(&issue)
    );
    let number = issue["number"].as_i64().unwrap();
    let expired = wait::until(&w.sc.api::<ApprovalRequest>(), &request, WAIT, |r| {
        r.status.as_ref().and_then(|st| st.phase) == Some(ApprovalPhase::Expired)
    })
    .await;
    let marker = format!(
        "<!-- ledgerops:escalation request={} -->",
        expired.uid().unwrap()
    );
    let told = async || {
        gitea_api::comments(&repo, number)
            .await
            .into_iter()
            .filter(|c| c.body.starts_with(&marker))
            .collect::<Vec<_>>()
    };
    wait::eventually("the bot tells whom to escalate to", WAIT, async || {
        told().await.len() == 1
    })
    .await;
    mailed(gitea.writer().email(), &repo, number, "without a decision").await;
    let comment = &told().await[0];
    assert_eq!(comment.author, gitea.bot().login());
    assert!(
        comment
            .body
            .contains(&format!("@{writer}, treasurer@\u{200B}example")),
        "{}",
        comment.body
    );
    let issue = the_issue(&repo, "the issue closes", |i| i["state"] == "closed").await;
    let title = issue["title"].as_str().unwrap();
    assert!(title.starts_with("Expired unanswered: "), "{title}");
    // The alert rules still see it once nothing waits any more.
    let labels = format!(r#"{{namespace="{}",budget="household"}}"#, w.sc.ns);
    let text = w.controller().metrics().await;
    for line in [
        format!("ledgerops_approval_requests_expired_unanswered{labels} 1"),
        format!("ledgerops_approval_requests_waiting{labels} 0"),
    ] {
        assert!(text.contains(&line), "{line} in\n{text}");
    }

    // A restart finds its comment and says nothing more.
    let log = w
        .restart_until_logged("expired request already announced in Gitea")
        .await;
    assert!(log.contains("expired request announced in Gitea"), "{log}");
    assert_eq!(told().await.len(), 1);
    assert_eq!(inbox_issues(&repo).await.len(), 1, "one issue");
    assert_eq!(w.sc.requests(PATCH).await, 0, "nothing written to YNAB");
}

#[tokio::test]
async fn the_morning_digest_lists_what_waits_once_a_day_assigned_to_the_approver() {
    let gitea = Gitea::shared();
    let writer = gitea.writer();
    let household = json!({
        "writes": {"enabled": true},
        "approval": {"giteaUsers": [{"login": writer.login(), "user": "bob"}]},
    });
    let mut w = World::build("digest")
        .agent(&[])
        .household(household)
        .build()
        .await;
    let repo = w.repo().to_owned();
    let ns = w.sc.ns.clone();
    approver(ControlPlane::shared(), &ns, "bob").await;
    w.follow_repo(json!({})).await;
    w.sc.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = w.sc.plan_request("september").await;
    let inbox = the_issue(&repo, "the request's inbox issue", |i| i["state"] == "open").await;

    // The owner asks for the digest at this minute (UTC): it is due at once.
    let now = k8s_openapi::jiff::Timestamp::now();
    let at = now.strftime("%H:%M").to_string();
    let digest = json!({"spec": {"approval": {"inbox": {"digestAt": at, "timeZone": "UTC"}}}});
    w.sc.api::<Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&digest))
        .await
        .unwrap();
    let marker = format!(
        "<!-- ledgerops:digest budget={ns}/household day={} -->",
        now.strftime("%Y-%m-%d")
    );
    let digests = async || -> Vec<Value> {
        let all = gitea_call(
            Method::GET,
            &format!("/repos/{repo}/issues?state=all&type=issues&limit=50"),
            gitea.admin(),
            None,
        )
        .await;
        all.as_array()
            .unwrap()
            .iter()
            .filter(|i| i["body"].as_str().is_some_and(|b| b.starts_with(&marker)))
            .cloned()
            .collect()
    };
    let mut found = Vec::new();
    wait::eventually("the digest opens", WAIT, async || {
        found = digests().await;
        !found.is_empty()
    })
    .await;
    let issue = &found[0];
    assert_eq!(issue["user"]["login"], gitea.bot().login());
    assert_eq!(assignees(issue), [writer.login()]);
    let text = body(issue);
    let row = format!("| `{request}` | CategorizationPlan `september` | 2 |");
    assert!(text.contains(&row), "{row} in: {text}");
    assert!(
        text.contains(&format!("| #{} |", inbox["number"])),
        "{text}"
    );

    // A restart opens no second one.
    w.agent_mut().stop().await;
    w.agent_mut().start_controller(None).await;
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert_eq!(digests().await.len(), 1, "one digest a day");
    assert_eq!(w.sc.requests(PATCH).await, 0, "nothing written to YNAB");
}
