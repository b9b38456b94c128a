//! Retention with `ledgerops run`, a real API server, the YNAB simulator and a real Gitea:
//! finished AgentJobs are deleted after `--agent-job-retention` while a redelivery of their
//! comment still runs nothing; an over-long command is refused and nothing runs; an
//! ApprovalRequest replaced by a newer one is deleted after `--approval-request-retention` while
//! the plan keeps its decision record and the newest request stays.
//!
//! One controller serves the whole suite (two would both write the suite's Budgets), with
//! retentions of seconds.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use ledgerops::agent::store::SEQUENCE_CONFIGMAP;
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::logic::job::retired::{self, Retired};
use ledgerops::logic::job::webhook::MAX_COMMAND;
use ledgerops_e2e::agent::{Agent, SECRET};
use ledgerops_e2e::scenario::{PATCH, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use serde_json::json;
use tokio::sync::OnceCell;

/// Long enough to see a finished job before it goes, on a loaded machine.
const JOB_RETENTION: Duration = Duration::from_secs(8);
const REQUEST_RETENTION: Duration = Duration::from_secs(3);

/// The suite's `/agent` namespace, Gitea repository and controller, started by the first test
/// that asks.
async fn suite_agent() -> &'static Agent {
    static AGENT: OnceCell<Agent> = OnceCell::const_new();
    AGENT
        .get_or_init(|| async {
            let job_retention = format!("{}s", JOB_RETENTION.as_secs());
            let request_retention = format!("{}s", REQUEST_RETENTION.as_secs());
            let retentions = [
                "--agent-job-retention",
                &job_retention,
                "--approval-request-retention",
                &request_retention,
            ];
            let world = World::build("retention-agent")
                .agent(&["issue_comment"])
                .every_namespace()
                .args(&retentions)
                .build()
                .await;
            world.into_agent()
        })
        .await
}

/// One test's world, on the suite's agent: its jobs are in the agent's namespace.
async fn world(prefix: &str) -> World {
    World::build(prefix)
        .agent_of(suite_agent().await)
        .build()
        .await
}

/// Sends comment `comment_id` again, signed as Gitea signs it, under a new delivery id (as a
/// manual redelivery in Gitea does). Returns the HTTP status.
async fn redeliver(w: &World, issue: i64, comment_id: i64, text: &str) -> u16 {
    let login = w.gitea().writer().login();
    let body = w.payload(issue, comment_id, login, text);
    let delivery = format!("redelivery-{comment_id}");
    w.deliver(Some(&delivery), &body, SECRET).await
}

async fn wait_finished(w: &World, name: &str) -> AgentJob {
    w.wait_job(name, "finished", |j| {
        let s = j.status.as_ref();
        s.and_then(|s| s.phase)
            .is_some_and(|p| matches!(p, JobPhase::Succeeded | JobPhase::Rejected))
            && s.and_then(|s| s.status_comment_id).is_some()
    })
    .await
}

#[tokio::test]
async fn a_job_deleted_by_retention_is_not_run_again_when_its_comment_is_redelivered() {
    let w = world("retention-redelivery").await;
    let issue = w.issue("help, twice").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent help").await;
    let name = w.job_name(issue, comment);
    let done = wait_finished(&w, &name).await;
    assert_eq!(done.status.unwrap().phase, Some(JobPhase::Succeeded));
    wait::gone(&w.jobs(), &name).await;

    // The compact record holds the comment, so a redelivery is a duplicate: nothing is stored,
    // nothing runs, nothing is commented.
    let sequence: Api<ConfigMap> = Api::namespaced(w.sc.client.clone(), &w.agent().ns);
    let stored = sequence
        .get(SEQUENCE_CONFIGMAP)
        .await
        .unwrap()
        .data
        .unwrap();
    let record = Retired::parse(stored.get(retired::KEY).map(String::as_str)).unwrap();
    assert!(record.covers(w.repo(), comment), "{stored:?}");
    assert_eq!(redeliver(&w, issue, comment, "/agent help").await, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        w.jobs().get_opt(&name).await.unwrap().is_none(),
        "no job again"
    );
    assert_eq!(w.bot_comments(issue).await.len(), 1, "no second reply");

    // A new comment still runs.
    let again = w.comment(w.gitea().writer(), issue, "/agent help").await;
    let fresh = wait_finished(&w, &w.job_name(issue, again)).await;
    assert_eq!(fresh.status.unwrap().phase, Some(JobPhase::Succeeded));
}

#[tokio::test]
async fn an_over_long_command_is_kept_cut_and_refused_and_nothing_runs() {
    let w = world("retention-long").await;
    let issue = w.issue("a long one").await;
    let text = format!("/agent status {}", "x".repeat(2 * MAX_COMMAND));
    let comment = w.comment(w.gitea().writer(), issue, &text).await;
    let name = w.job_name(issue, comment);
    let job = wait_finished(&w, &name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Rejected));
    assert_eq!(status.reason.as_deref(), Some("CommandTooLong"));
    assert_eq!(status.command_name, None, "never parsed");
    assert_eq!(status.started_at, None, "never run");
    assert!(job.spec.command.len() <= MAX_COMMAND);
    assert_eq!(job.spec.truncated_from, Some(text.len() as i64));
    let replies = w.bot_comments(issue).await;
    assert_eq!(replies.len(), 1);
    assert!(
        replies[0]
            .body
            .contains(&format!("at most {MAX_COMMAND} bytes")),
        "{}",
        replies[0].body
    );
}

#[tokio::test]
async fn a_replaced_request_goes_after_its_retention_and_the_plan_keeps_its_decision() {
    let w = World::build("retention-apr")
        .agent_of(suite_agent().await)
        .household(json!({"writes": {"enabled": true}}))
        .plan_awaiting_approval()
        .build()
        .await;
    let first = w.sc.approval_requests().await;
    assert_eq!(first.len(), 1);
    let old = first[0].metadata.name.clone().unwrap();

    // The plan changes: the request goes Stale and a new one asks about the new preview.
    let edited = json!({"spec": {"assignments": [
        {"transactionId": "tx-048", "categoryId": category("Groceries")},
        {"transactionId": "tx-049", "categoryId": category("Groceries")}
    ]}});
    w.sc.api::<CategorizationPlan>()
        .patch("september", &PatchParams::default(), &Patch::Merge(edited))
        .await
        .unwrap();
    let requests = w.sc.api::<ApprovalRequest>();
    let start = std::time::Instant::now();
    while requests.get_opt(&old).await.unwrap().is_some() {
        assert!(
            start.elapsed() < WAIT,
            "{old} was not deleted: {:#?}\n{}",
            w.sc.approval_requests().await,
            w.controller().log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let left = w.sc.approval_requests().await;
    assert_eq!(left.len(), 1, "only the replaced request went");
    let newest = left[0].metadata.name.clone().unwrap();
    assert_eq!(
        left[0].status.as_ref().and_then(|st| st.phase),
        Some(ApprovalPhase::Pending)
    );

    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    w.sc.api::<ApprovalRequest>()
        .patch(&newest, &PatchParams::default(), &Patch::Merge(approve))
        .await
        .unwrap();
    let applied = w.sc.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(w.sc.requests(PATCH).await, 1);
    let decision = applied
        .status
        .unwrap()
        .decision
        .expect("the decision record");
    assert_eq!(decision.by, "admin");
    assert_eq!(decision.request.as_deref(), Some(newest.as_str()));

    // The newest request of a subject is never deleted, however old.
    tokio::time::sleep(REQUEST_RETENTION * 3).await;
    assert!(
        w.sc.api::<ApprovalRequest>()
            .get_opt(&newest)
            .await
            .unwrap()
            .is_some(),
        "{}",
        w.controller().log()
    );
}
