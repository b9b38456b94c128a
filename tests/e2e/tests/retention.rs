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
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use ledgerops::agent::store::SEQUENCE_CONFIGMAP;
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::logic::job::retired::{self, Retired};
use ledgerops::logic::job::webhook::{MAX_COMMAND, sign};
use ledgerops_e2e::agent::{self, SECRET};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, bakery_and_train_plan, category};
use ledgerops_e2e::{install_crds, wait};
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::{Gitea, User};
use serde_json::json;
use tokio::sync::OnceCell;
use ynab_sim::demo;

/// Long enough to see a finished job before it goes, on a loaded machine.
const JOB_RETENTION: Duration = Duration::from_secs(8);
const REQUEST_RETENTION: Duration = Duration::from_secs(3);

/// The suite's controller, its `/agent` namespace and Gitea repository.
struct Suite {
    controller: Ledgerops,
    ns: String,
    repo: String,
    gitea: &'static Gitea,
}

async fn suite() -> &'static Suite {
    static SUITE: OnceCell<Suite> = OnceCell::const_new();
    SUITE.get_or_init(start).await
}

async fn start() -> Suite {
    let plane = ControlPlane::shared();
    let client = plane.client().await.expect("admin client");
    install_crds(&client).await;
    let ns = plane.namespace("retention-agent").await.expect("namespace");
    let repo = agent::team_repo(&ns).await;
    let job_retention = format!("{}s", JOB_RETENTION.as_secs());
    let request_retention = format!("{}s", REQUEST_RETENTION.as_secs());
    let more = [
        "--agent-job-retention",
        &job_retention,
        "--approval-request-retention",
        &request_retention,
    ];
    let controller = agent::start(plane, &repo, &ns, &more, &[]).await;
    agent::hook(&repo, &controller, &["issue_comment"]).await;
    Suite {
        controller,
        ns,
        repo,
        gitea: Gitea::shared(),
    }
}

impl Suite {
    /// A client of the calling test's own: each test has its runtime, and a client made in
    /// another test's runtime stops working when that test ends.
    async fn client(&self) -> Client {
        ControlPlane::shared().client().await.expect("admin client")
    }

    async fn jobs(&self) -> Api<AgentJob> {
        Api::namespaced(self.client().await, &self.ns)
    }

    async fn issue(&self, title: &str) -> i64 {
        gitea_api::open_issue(&self.repo, title).await
    }

    async fn comment(&self, user: &User, issue: i64, body: &str) -> i64 {
        gitea_api::comment(&self.repo, user, issue, body).await
    }

    async fn bot_comments(&self, issue: i64) -> Vec<String> {
        let all = gitea_api::comments(&self.repo, issue).await;
        all.into_iter()
            .filter(|c| c.author == self.gitea.bot().login())
            .map(|c| c.body)
            .collect()
    }

    /// The job of comment `comment_id`, by its deterministic name.
    fn job_name(&self, issue: i64, comment_id: i64) -> String {
        gitea_api::job_name(&self.repo, issue, comment_id)
    }

    /// Sends comment `comment_id` again, signed as Gitea signs it, under a new delivery id (as a
    /// manual redelivery in Gitea does). Returns the HTTP status.
    async fn redeliver(&self, issue: i64, comment_id: i64, text: &str) -> u16 {
        let login = self.gitea.writer().login();
        let body = serde_json::to_vec(&json!({
            "action": "created",
            "issue": {"number": issue, "pull_request": null},
            "comment": {"id": comment_id, "body": text, "user": {"login": login}},
            "repository": {"full_name": self.repo},
            "sender": {"login": login},
            "is_pull": false,
        }))
        .unwrap();
        reqwest::Client::new()
            .post(format!("{}/webhooks/gitea", self.controller.url()))
            .header("Content-Type", "application/json")
            .header("X-Gitea-Event", "issue_comment")
            .header("X-Gitea-Event-Type", "issue_comment")
            .header("X-Gitea-Delivery", format!("redelivery-{comment_id}"))
            .header("X-Gitea-Signature", sign(SECRET.as_bytes(), &body))
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    async fn wait_finished(&self, name: &str) -> AgentJob {
        wait::until(&self.jobs().await, name, WAIT, |j| {
            let s = j.status.as_ref();
            s.and_then(|s| s.phase)
                .is_some_and(|p| matches!(p, JobPhase::Succeeded | JobPhase::Rejected))
                && s.and_then(|s| s.status_comment_id).is_some()
        })
        .await
    }
}

#[tokio::test]
async fn a_job_deleted_by_retention_is_not_run_again_when_its_comment_is_redelivered() {
    let s = suite().await;
    let issue = s.issue("help, twice").await;
    let comment = s.comment(s.gitea.writer(), issue, "/agent help").await;
    let name = s.job_name(issue, comment);
    let done = s.wait_finished(&name).await;
    assert_eq!(done.status.unwrap().phase, Some(JobPhase::Succeeded));
    wait::gone(&s.jobs().await, &name).await;

    // The compact record holds the comment, so a redelivery is a duplicate: nothing is stored,
    // nothing runs, nothing is commented.
    let sequence: Api<ConfigMap> = Api::namespaced(s.client().await, &s.ns);
    let stored = sequence
        .get(SEQUENCE_CONFIGMAP)
        .await
        .unwrap()
        .data
        .unwrap();
    let record = Retired::parse(stored.get(retired::KEY).map(String::as_str)).unwrap();
    assert!(record.covers(&s.repo, comment), "{stored:?}");
    assert_eq!(s.redeliver(issue, comment, "/agent help").await, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        s.jobs().await.get_opt(&name).await.unwrap().is_none(),
        "no job again"
    );
    assert_eq!(s.bot_comments(issue).await.len(), 1, "no second reply");

    // A new comment still runs.
    let again = s.comment(s.gitea.writer(), issue, "/agent help").await;
    let fresh = s.wait_finished(&s.job_name(issue, again)).await;
    assert_eq!(fresh.status.unwrap().phase, Some(JobPhase::Succeeded));
}

#[tokio::test]
async fn an_over_long_command_is_kept_cut_and_refused_and_nothing_runs() {
    let s = suite().await;
    let issue = s.issue("a long one").await;
    let text = format!("/agent status {}", "x".repeat(2 * MAX_COMMAND));
    let comment = s.comment(s.gitea.writer(), issue, &text).await;
    let name = s.job_name(issue, comment);
    let job = s.wait_finished(&name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Rejected));
    assert_eq!(status.reason.as_deref(), Some("CommandTooLong"));
    assert_eq!(status.command_name, None, "never parsed");
    assert_eq!(status.started_at, None, "never run");
    assert!(job.spec.command.len() <= MAX_COMMAND);
    assert_eq!(job.spec.truncated_from, Some(text.len() as i64));
    let replies = s.bot_comments(issue).await;
    assert_eq!(replies.len(), 1);
    assert!(
        replies[0].contains(&format!("at most {MAX_COMMAND} bytes")),
        "{}",
        replies[0]
    );
}

#[tokio::test]
async fn a_replaced_request_goes_after_its_retention_and_the_plan_keeps_its_decision() {
    let s = suite().await;
    let world = Scenario::new(ControlPlane::shared(), "retention-apr", demo::generate()).await;
    world
        .create_budget(
            "household",
            demo::TOKEN,
            json!({"writes": {"enabled": true}}),
        )
        .await;
    world.wait_budget("household", BudgetPhase::Ready).await;
    world
        .create_plan("september", "household", bakery_and_train_plan())
        .await;
    world
        .wait_plan("september", PlanPhase::AwaitingApproval)
        .await;
    let first = world.approval_requests().await;
    assert_eq!(first.len(), 1);
    let old = first[0].metadata.name.clone().unwrap();

    // The plan changes: the request goes Stale and a new one asks about the new preview.
    let edited = json!({"spec": {"assignments": [
        {"transactionId": "tx-048", "categoryId": category("Groceries")},
        {"transactionId": "tx-049", "categoryId": category("Groceries")}
    ]}});
    world
        .api::<CategorizationPlan>()
        .patch("september", &PatchParams::default(), &Patch::Merge(edited))
        .await
        .unwrap();
    let requests = world.api::<ApprovalRequest>();
    let start = std::time::Instant::now();
    while requests.get_opt(&old).await.unwrap().is_some() {
        assert!(
            start.elapsed() < WAIT,
            "{old} was not deleted: {:#?}\n{}",
            world.approval_requests().await,
            s.controller.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let left = world.approval_requests().await;
    assert_eq!(left.len(), 1, "only the replaced request went");
    let newest = left[0].metadata.name.clone().unwrap();
    assert_eq!(
        left[0].status.as_ref().and_then(|st| st.phase),
        Some(ApprovalPhase::Pending)
    );

    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    world
        .api::<ApprovalRequest>()
        .patch(&newest, &PatchParams::default(), &Patch::Merge(approve))
        .await
        .unwrap();
    let applied = world.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(world.requests(PATCH).await, 1);
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
        world
            .api::<ApprovalRequest>()
            .get_opt(&newest)
            .await
            .unwrap()
            .is_some(),
        "{}",
        s.controller.log()
    );
}
