//! Attacks through the Gitea `/agent` commands: an AgentJob made up by a user, a forged job
//! status, a delivery from a repository that is not allowed, a late answer, and text that tries
//! to pass for the bot's marker, a mention or a link. Each runs against a Budget with a real
//! plan waiting for approval, and asserts that YNAB saw no write.

use std::time::{Duration, Instant};

use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ledgerops::api::agent_job::{AgentJob, CommentEvent, JobPhase};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::PlanPhase;
use ledgerops::logic::job::render::{IssueComment, canonical_comment, marker};
use ledgerops::logic::job::webhook::{Incoming, sign};
use ledgerops_e2e::agent::{self, SECRET};
use ledgerops_e2e::attacker::attacker;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::scenario::{Scenario, WAIT, category};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::{Gitea, User};
use serde_json::{Value, json};
use ynab_sim::demo;

/// A namespace with a Budget whose plan waits for approval, a Gitea repository of its own with
/// the webhook, and a controller obeying only that repository.
struct Stage {
    s: Scenario,
    repo: String,
    request: String,
    controller: Ledgerops,
    alice: Client,
}

impl Stage {
    /// `approval` is merged into the Budget's approval settings; `pause` sets test pauses.
    async fn new(prefix: &str, approval: Value, pause: Option<&str>) -> Stage {
        let plane = ControlPlane::shared();
        let s = Scenario::new(plane, prefix, demo::generate()).await;
        let repo = agent::team_repo(&s.ns).await;
        let env: Vec<(&str, &str)> = pause
            .map(|p| ("LEDGEROPS_TEST_PAUSE", p))
            .into_iter()
            .collect();
        let controller = agent::start(plane, &repo, &s.ns, &[], &env).await;
        agent::hook(
            &repo,
            &controller,
            &["issue_comment", "pull_request_comment"],
        )
        .await;
        let mut budget = json!({"writes": {"enabled": true}});
        budget["approval"] = approval;
        s.create_budget("household", demo::TOKEN, budget).await;
        s.wait_budget("household", BudgetPhase::Ready).await;
        s.create_plan(
            "september",
            "household",
            json!({"assignments": [
                {"transactionId": "tx-048", "categoryId": category("Groceries")},
                {"transactionId": "tx-049", "categoryId": category("Transport")}
            ]}),
        )
        .await;
        s.wait_plan("september", PlanPhase::AwaitingApproval).await;
        let request = s
            .api::<ApprovalRequest>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items[0]
            .name_any();
        let alice = attacker(plane, &s.ns, "alice").await;
        Stage {
            s,
            repo,
            request,
            controller,
            alice,
        }
    }

    async fn issue(&self, title: &str) -> i64 {
        gitea_api::open_issue(&self.repo, title).await
    }

    async fn comment(&self, user: &User, issue: i64, body: &str) -> i64 {
        gitea_api::comment(&self.repo, user, issue, body).await
    }

    async fn comments(&self, issue: i64) -> Vec<IssueComment> {
        let all = gitea_api::comments(&self.repo, issue).await;
        all.into_iter()
            .map(|c| IssueComment {
                id: c.id,
                author: c.author,
                body: c.body,
            })
            .collect()
    }

    fn job_name(&self, issue: i64, comment_id: i64) -> String {
        incoming(&self.repo, issue, comment_id, "x", "x").job_name()
    }

    fn jobs(&self) -> Api<AgentJob> {
        self.s.api()
    }

    async fn wait_phase(&self, name: &str, phase: JobPhase) -> AgentJob {
        let start = Instant::now();
        let mut last = None;
        while start.elapsed() < WAIT {
            if let Ok(Some(j)) = self.jobs().get_opt(name).await {
                if j.status.as_ref().and_then(|s| s.phase) == Some(phase) {
                    return j;
                }
                last = Some(j);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "job {name} never {phase:?}; last: {last:#?}\ncontroller log:\n{}",
            self.controller.log()
        );
    }

    /// Creates `job` as alice; if admission refuses her (the policy is installed), as the
    /// cluster admin instead, which is what a cluster without the policy would allow. The
    /// controller must refuse either way.
    async fn create_as_alice(&self, job: &AgentJob) {
        let as_alice: Api<AgentJob> = Api::namespaced(self.alice.clone(), &self.s.ns);
        if let Err(e) = as_alice.create(&PostParams::default(), job).await {
            eprintln!("admission refused alice's AgentJob ({e}); creating it as admin");
            self.jobs()
                .create(&PostParams::default(), job)
                .await
                .expect("the admin creates the AgentJob");
        }
    }

    /// Asserts the request holds no decision and YNAB saw no write.
    async fn assert_nothing_decided_or_written(&self) {
        let r = self
            .s
            .api::<ApprovalRequest>()
            .get(&self.request)
            .await
            .unwrap();
        assert_eq!(r.spec.decision, None, "a decision was recorded");
        let counters = self.s.sim.control().counters().await.unwrap();
        let writes: u64 = counters
            .by_endpoint
            .iter()
            .filter(|(k, _)| {
                k.starts_with("PATCH") || k.starts_with("PUT") || k.starts_with("POST")
            })
            .map(|(_, n)| n)
            .sum();
        assert_eq!(writes, 0, "YNAB saw writes: {:?}", counters.by_endpoint);
    }
}

fn incoming(repo: &str, issue: i64, comment_id: i64, author: &str, command: &str) -> Incoming {
    Incoming {
        delivery_id: format!("forged-{comment_id}"),
        event: CommentEvent::IssueComment,
        repository: repo.into(),
        issue_number: issue,
        comment_id,
        author: author.into(),
        command: command.into(),
        truncated_from: None,
    }
}

/// An AgentJob as the webhook would have stored it for `incoming`.
fn job_for(incoming: &Incoming, sequence: i64) -> AgentJob {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "AgentJob",
        "metadata": {"name": incoming.job_name()},
        "spec": {
            "deliveryId": incoming.delivery_id, "event": "IssueComment",
            "repository": incoming.repository, "issueNumber": incoming.issue_number,
            "commentId": incoming.comment_id, "author": incoming.author,
            "command": incoming.command, "sequence": sequence,
            "receivedAt": "2026-01-01T00:00:00Z",
        }
    }))
    .unwrap()
}

fn reason_and_error(job: &AgentJob) -> (String, String) {
    let s = job.status.as_ref().unwrap();
    (
        s.reason.clone().unwrap_or_default(),
        s.error.clone().unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_user_made_agent_job_approves_nothing_unless_gitea_has_its_comment() {
    let st = Stage::new("atk-forged-job", json!({}), None).await;
    let gitea = Gitea::shared();
    let issue = st.issue("forged jobs").await;
    let approve = format!("/agent approve {}", st.request);
    let (admin, writer) = (gitea.admin().login(), gitea.writer().login());
    // A real comment by the writer that says something else; the webhook makes it a job of its
    // own, which runs.
    let real = st.comment(gitea.writer(), issue, "/agent help").await;
    st.wait_phase(&st.job_name(issue, real), JobPhase::Succeeded)
        .await;
    let before = st.comments(issue).await.len();
    let cases = [
        // (what the job claims, expected error)
        (
            incoming(&st.repo, issue, 9_999_999, admin, &approve),
            "comment 9999999 does not exist".to_owned(),
        ),
        (
            incoming(&st.repo, issue, real, admin, &approve),
            format!("was written by `{writer}`, not by `{admin}`"),
        ),
        (
            incoming(&st.repo, issue, real, writer, &approve),
            "does not say what the AgentJob says".to_owned(),
        ),
        (
            incoming(&st.repo, issue + 1, real, writer, "/agent help"),
            format!("is not on issue {}", issue + 1),
        ),
    ];
    for (i, (claim, want)) in cases.iter().enumerate() {
        let name = format!("forged-{i}");
        let mut job = job_for(claim, 100 + i as i64);
        job.metadata.name = Some(name.clone());
        st.create_as_alice(&job).await;
        let done = st.wait_phase(&name, JobPhase::Rejected).await;
        let (reason, error) = reason_and_error(&done);
        assert_eq!(reason, "UnverifiedComment", "{error}");
        assert!(error.contains(want.as_str()), "case {i}: {error}");
        let status = done.status.unwrap();
        assert_eq!(status.last_error.map(|e| e.message), Some(error));
        assert_eq!(
            status.status_comment_id, None,
            "the bot commented on a forged job"
        );
    }
    // A job for a repository not on --gitea-repository.
    let elsewhere = incoming("household/not-allowed", 1, 1, admin, &approve);
    let mut job = job_for(&elsewhere, 200);
    job.metadata.name = Some("forged-repo".into());
    st.create_as_alice(&job).await;
    let done = st.wait_phase("forged-repo", JobPhase::Rejected).await;
    let (reason, error) = reason_and_error(&done);
    assert_eq!(reason, "UntrustedRepository");
    assert!(
        error.contains("household/not-allowed is not on --gitea-repository"),
        "{error}"
    );
    // Give the reconciler a moment to (not) comment.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        st.comments(issue).await.len(),
        before,
        "the bot wrote about a forged job"
    );
    st.assert_nothing_decided_or_written().await;
}

#[tokio::test]
async fn a_forged_queued_status_does_not_skip_the_permission_check() {
    // The reader's command is held before its permission check, so that the forged status
    // lands first, as if the job had been authorized.
    let st = Stage::new(
        "atk-forged-status",
        json!({}),
        Some("authorize@approve=600000"),
    )
    .await;
    let gitea = Gitea::shared();
    let issue = st.issue("forged status").await;
    let c = st
        .comment(
            gitea.reader(),
            issue,
            &format!("/agent approve {}", st.request),
        )
        .await;
    let name = st.job_name(issue, c);
    // The job is stored and its reconcile holds before the check (no status written yet).
    let start = Instant::now();
    while !st.controller.log().contains("test pause: authorize") {
        assert!(
            start.elapsed() < WAIT,
            "never paused before the permission check"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let unwritten = st.jobs().get(&name).await.unwrap().status;
    assert_eq!(
        unwritten.and_then(|s| s.phase),
        None,
        "no status written yet"
    );
    let forged = json!({"status": {
        "phase": "Queued", "commandName": "approve", "permission": "admin",
        "stage": "waiting for its turn", "reason": "Queued",
        "appliedEvents": ["received", "permission"], "version": 2,
    }});
    let as_alice: Api<AgentJob> = Api::namespaced(st.alice.clone(), &st.s.ns);
    let params = PatchParams::default();
    if let Err(e) = as_alice
        .patch_status(&name, &params, &Patch::Merge(&forged))
        .await
    {
        eprintln!("admission refused alice's status ({e}); writing it as admin");
        st.jobs()
            .patch_status(&name, &params, &Patch::Merge(&forged))
            .await
            .expect("the admin writes the status");
    }
    let done = st.wait_phase(&name, JobPhase::Rejected).await;
    let (reason, error) = reason_and_error(&done);
    assert_eq!(reason, "PermissionDenied", "{error}");
    assert!(
        error.contains("has `read` permission") && error.contains("need write permission"),
        "{error}"
    );
    st.assert_nothing_decided_or_written().await;
}

#[tokio::test]
async fn a_delivery_from_a_repository_not_allowed_is_refused_and_stores_nothing() {
    let st = Stage::new("atk-repo", json!({}), None).await;
    let gitea = Gitea::shared();
    let approve = format!("/agent approve {}", st.request);
    for repo in [
        "household/elsewhere",
        "HOUSEHOLD/other",
        "evil/ledger-config",
    ] {
        let body = serde_json::to_vec(&json!({
            "action": "created",
            "issue": {"number": 1},
            "comment": {"id": 42, "body": approve, "user": {"login": gitea.admin().login()}},
            "repository": {"full_name": repo},
            "sender": {"login": gitea.admin().login()},
        }))
        .unwrap();
        let status = reqwest::Client::new()
            .post(format!("{}/webhooks/gitea", st.controller.url()))
            .header("X-Gitea-Event", "issue_comment")
            .header("X-Gitea-Event-Type", "issue_comment")
            .header("X-Gitea-Delivery", format!("d-{repo}"))
            .header("X-Gitea-Signature", sign(SECRET.as_bytes(), &body))
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(status.status().as_u16(), 403, "{repo}");
        assert_eq!(status.text().await.unwrap(), "repository not allowed\n");
    }
    let jobs = st.jobs().list(&ListParams::default()).await.unwrap().items;
    assert!(jobs.is_empty(), "{jobs:?}");
    assert!(
        st.controller
            .log()
            .contains("command from a repository not on --gitea-repository; not stored")
    );
    st.assert_nothing_decided_or_written().await;
}

#[tokio::test]
async fn approving_a_stale_or_expired_request_is_refused_and_records_nothing() {
    // The shortest expiry a Budget accepts is one minute.
    let st = Stage::new("atk-late", json!({"expiry": "1m"}), None).await;
    let gitea = Gitea::shared();
    let requests = st.s.api::<ApprovalRequest>();
    wait::until(&requests, &st.request, Duration::from_secs(120), |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Expired)
    })
    .await;
    // A Stale one, as the plan reconciler leaves it when YNAB changed since the preview.
    let stale = st.request.clone() + "-stale";
    let mut copy = requests.get(&st.request).await.unwrap();
    copy.metadata = kube::api::ObjectMeta {
        name: Some(stale.clone()),
        ..Default::default()
    };
    copy.spec.expires_at = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_hours(1),
    );
    copy.status = None;
    requests
        .create(&PostParams::default(), &copy)
        .await
        .unwrap();
    // Let ledgerops take it up first, or its first status would overwrite the Stale below.
    wait::until(&requests, &stale, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Pending)
    })
    .await;
    requests
        .patch_status(
            &stale,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"phase": "Stale"}})),
        )
        .await
        .unwrap();
    wait::until(&requests, &stale, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Stale)
    })
    .await;
    let issue = st.issue("late answers").await;
    // The Stale one may also show as "not Pending" should the request's phase say more.
    for (request, want) in [(&st.request, "expired at"), (&stale, "Stale")] {
        let c = st
            .comment(
                gitea.writer(),
                issue,
                &format!("/agent approve {request} yes"),
            )
            .await;
        let done = st
            .wait_phase(&st.job_name(issue, c), JobPhase::Rejected)
            .await;
        let (reason, error) = reason_and_error(&done);
        assert_eq!(reason, "PreconditionFailed", "{error}");
        assert!(
            error.contains(want) && error.contains("nothing was recorded"),
            "{error}"
        );
        let r = requests.get(request).await.unwrap();
        assert_eq!(r.spec.decision, None, "{request} got a decision");
    }
    st.assert_nothing_decided_or_written().await;
}

#[tokio::test]
async fn markers_mentions_html_and_links_in_a_command_are_echoed_inert() {
    let st = Stage::new("atk-echo", json!({}), None).await;
    let gitea = Gitea::shared();
    let issue = st.issue("echo").await;
    let admin = gitea.admin().login();
    let text = format!("/agent approve @{admin} <!--x--> [a](http://e.vil) ![i](http://e.vil/i)");
    let c = st.comment(gitea.writer(), issue, &text).await;
    let name = st.job_name(issue, c);
    st.wait_phase(&name, JobPhase::Rejected).await;
    let start = Instant::now();
    let body = loop {
        let id = st
            .jobs()
            .get(&name)
            .await
            .unwrap()
            .status
            .and_then(|s| s.status_comment_id);
        let found = st
            .comments(issue)
            .await
            .into_iter()
            .find(|x| Some(x.id) == id);
        if let Some(found) = found {
            break found.body;
        }
        assert!(start.elapsed() < WAIT, "no status comment");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let (first, rest) = body.split_once('\n').unwrap();
    assert_eq!(first, marker(&name));
    assert!(
        !rest.contains(&format!("@{admin}")),
        "a mention got through: {body}"
    );
    // The whole command line sits in one code span, the bad name in another.
    let head = rest.lines().next().unwrap();
    assert!(head.starts_with("**`/agent approve @\u{200B}"), "{body}");
    assert_eq!(
        head.matches('`').count(),
        2,
        "a code span was broken out of: {body}"
    );
    // Gitea's own rendering: no mention, link, image or HTML comment from the user's text.
    let html = reqwest::Client::new()
        .post(format!("{}/api/v1/markdown", gitea.url()))
        .header("Authorization", format!("token {}", gitea.admin().token()))
        .json(&json!({"Text": body, "Mode": "comment", "Context": format!("{}/{}", gitea.url(), st.repo)}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for bad in ["href=\"http://e.vil", "<img", "class=\"mention\"", "<!--x"] {
        assert!(!html.contains(bad), "{bad} in the rendered comment: {html}");
    }
    assert!(html.contains("&lt;!--x--&gt;"), "{html}");
    // Only the bot's own comment, whose first line is the marker, is the job's.
    let comments = st.comments(issue).await;
    assert_eq!(
        canonical_comment(&comments, gitea.bot().login(), &name),
        comments.iter().find(|x| x.body == body).map(|x| x.id)
    );
    st.assert_nothing_decided_or_written().await;
}
