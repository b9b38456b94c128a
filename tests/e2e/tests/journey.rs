//! The month-end journey, on the real parts (API server, simulator, Gitea whose mailer points at
//! Mailpit): the autopilot's plan for 300 purchases becomes one issue in the household's
//! repository, assigned to bob, who is mailed it; a restart in the middle changes nothing; bob
//! answers on the issue with `/agent approve … except …`; the plan is written in one operation,
//! less what he held back, and the issue closes with the result.

use ledgerops::api::plan::PlanPhase;
use ledgerops_e2e::attacker::approver;
use ledgerops_e2e::inbox::{a_restart_changes_nothing, assignees, body, mailed, the_issue};
use ledgerops_e2e::month_end::{self, DISPUTED};
use ledgerops_e2e::scenario::{PATCH, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use serde_json::json;

#[tokio::test]
async fn the_autopilots_month_end_is_bobs_issue_and_mail_answered_there_and_closed_written() {
    let gitea = Gitea::shared();
    let writer = gitea.writer();
    let mut w = World::build("journey")
        .agent(&["issue_comment"])
        .fixture(month_end::fixture())
        .build()
        .await;
    let repo = w.repo().to_owned();
    let ns = w.sc.ns.clone();
    let approval = json!({"giteaUsers": [{"login": writer.login(), "user": "bob"}]});
    month_end::prepare(&w.sc, approval).await;
    approver(ControlPlane::shared(), &ns, "bob").await;
    w.follow_repo(json!({})).await;

    // Month end: the autopilot proposes the 300 covered purchases, and a person is asked.
    month_end::autopilot_on(&w.sc).await;
    let mut plans = Vec::new();
    wait::eventually("the autopilot's plan", WAIT, async || {
        plans = w.sc.autopilot_plans().await;
        plans.len() == 1
    })
    .await;
    let plan = plans[0].metadata.name.clone().unwrap();
    let request = w.sc.plan_request(&plan).await;

    // One issue, assigned to bob, carrying the one-screen review and the words to answer with.
    let issue = the_issue(&repo, "the month-end plan becomes bob's issue", |i| {
        body(i).contains(&format!("/agent approve {request}`"))
    })
    .await;
    let number = issue["number"].as_i64().unwrap();
    assert_eq!(assignees(&issue), [writer.login()]);
    let text = body(&issue);
    let outlier = month_end::outlier();
    let disputed = month_end::purchase_id(DISPUTED.0, 0);
    for part in [
        "### Look at these first",
        outlier.as_str(),
        "### The rules disagree on",
        disputed.as_str(),
        "### By category",
        "Proposed by: `ledgerops:autopilot`",
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    mailed(
        writer.email(),
        &repo,
        number,
        &format!("/agent approve {request}"),
    )
    .await;

    // A restart in the middle: the issue is found, and nothing is sent again.
    a_restart_changes_nothing(&mut w, &repo).await;
    assert!(w.comments(number).await.is_empty(), "no comment either");

    // bob answers on the issue: all but the outlier, and the first disputed one to Groceries.
    let answer = format!("/agent approve {request} except {outlier}, {disputed}=Groceries");
    w.comment(writer, number, &answer).await;
    w.sc.wait_plan(&plan, PlanPhase::Applied).await;
    assert_eq!(
        w.sc.requests(PATCH).await,
        3,
        "one operation: three bulk updates of 100"
    );
    assert_eq!(w.sc.ynab_category(&outlier).await, None, "held back");
    assert_eq!(
        w.sc.ynab_category(&disputed).await,
        Some(category("Groceries"))
    );
    // The issue closes once the request is spent, and follows the plan until it is Applied.
    let issue = the_issue(&repo, "the issue closes with what was written", |i| {
        i["state"] == "closed"
            && i["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Approved and written: "))
            && body(i).contains("is now **Applied**")
    })
    .await;
    let text = body(&issue);
    assert!(
        text.contains(&format!("**Approved** by `gitea:{}`", writer.login()))
            && text.contains("is now **Applied**"),
        "{text}"
    );
}
