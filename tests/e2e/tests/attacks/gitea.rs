//! Attacks through the Gitea `/agent` commands: an AgentJob made up by a user, a forged job
//! status, a delivery from a repository that is not allowed, a late answer, and text that tries
//! to pass for the bot's marker, a mention or a link. Each runs against a Budget with a real
//! plan waiting for approval, and asserts that YNAB saw no write.

use std::time::{Duration, Instant};

use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use ledgerops::api::agent_job::{AgentJob, CommentEvent, JobPhase};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::logic::job::render::{IssueComment, canonical_comment, marker};
use ledgerops::logic::job::webhook::{Incoming, sign};
use ledgerops_e2e::agent::SECRET;
use ledgerops_e2e::scenario::WAIT;
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use ledgerops_testenv::gitea::Gitea;
use serde_json::{Value, json};

/// A world with a Budget whose plan waits for approval, a Gitea repository of its own with the
/// webhook, a controller obeying only that repository, and alice; and the plan's request.
/// `approval` is merged into the Budget's approval settings; `pause` sets test pauses.
async fn stage(prefix: &str, approval: Value, pause: Option<&str>) -> (World, String) {
    let w = World::build(prefix)
        .agent(&["issue_comment", "pull_request_comment"])
        .pause(pause)
        .household(json!({"writes": {"enabled": true}, "approval": approval}))
        .plan_awaiting_approval()
        .alice()
        .build()
        .await;
    let request =
        w.sc.api::<ApprovalRequest>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items[0]
            .name_any();
    (w, request)
}

/// The comments of `issue`, as ledgerops reads them.
async fn issue_comments(w: &World, issue: i64) -> Vec<IssueComment> {
    let all = w.comments(issue).await;
    all.into_iter()
        .map(|c| IssueComment {
            id: c.id,
            author: c.author,
            body: c.body,
        })
        .collect()
}

/// Creates `job` as alice; if admission refuses her (the policy is installed), as the cluster
/// admin instead, which is what a cluster without the policy would allow. The controller must
/// refuse either way.
async fn create_as_alice(w: &World, job: &AgentJob) {
    let as_alice: Api<AgentJob> = Api::namespaced(w.alice().clone(), &w.sc.ns);
    if let Err(e) = as_alice.create(&PostParams::default(), job).await {
        eprintln!("admission refused alice's AgentJob ({e}); creating it as admin");
        w.jobs()
            .create(&PostParams::default(), job)
            .await
            .expect("the admin creates the AgentJob");
    }
}

/// Asserts `request` holds no decision and YNAB saw no write.
async fn assert_nothing_decided_or_written(w: &World, request: &str) {
    let r = w.sc.api::<ApprovalRequest>().get(request).await.unwrap();
    assert_eq!(r.spec.decision, None, "a decision was recorded");
    let counters = w.sc.sim.control().counters().await.unwrap();
    let writes: u64 = counters
        .by_endpoint
        .iter()
        .filter(|(k, _)| k.starts_with("PATCH") || k.starts_with("PUT") || k.starts_with("POST"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(writes, 0, "YNAB saw writes: {:?}", counters.by_endpoint);
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
    let (w, request) = stage("atk-forged-job", json!({}), None).await;
    let gitea = Gitea::shared();
    let issue = w.issue("forged jobs").await;
    let approve = format!("/agent approve {}", request);
    let (admin, writer) = (gitea.admin().login(), gitea.writer().login());
    // A real comment by the writer that says something else; the webhook makes it a job of its
    // own, which runs.
    let real = w.comment(gitea.writer(), issue, "/agent help").await;
    w.wait_phase(&w.job_name(issue, real), JobPhase::Succeeded)
        .await;
    let before = w.comments(issue).await.len();
    let cases = [
        // (what the job claims, expected error)
        (
            incoming(w.repo(), issue, 9_999_999, admin, &approve),
            "comment 9999999 does not exist".to_owned(),
        ),
        (
            incoming(w.repo(), issue, real, admin, &approve),
            format!("was written by `{writer}`, not by `{admin}`"),
        ),
        (
            incoming(w.repo(), issue, real, writer, &approve),
            "does not say what the AgentJob says".to_owned(),
        ),
        (
            incoming(w.repo(), issue + 1, real, writer, "/agent help"),
            format!("is not on issue {}", issue + 1),
        ),
    ];
    for (i, (claim, want)) in cases.iter().enumerate() {
        let name = format!("forged-{i}");
        let mut job = job_for(claim, 100 + i as i64);
        job.metadata.name = Some(name.clone());
        create_as_alice(&w, &job).await;
        let done = w.wait_phase(&name, JobPhase::Rejected).await;
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
    create_as_alice(&w, &job).await;
    let done = w.wait_phase("forged-repo", JobPhase::Rejected).await;
    let (reason, error) = reason_and_error(&done);
    assert_eq!(reason, "UntrustedRepository");
    assert!(
        error.contains("household/not-allowed is not on --gitea-repository"),
        "{error}"
    );
    // Give the reconciler a moment to (not) comment.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        w.comments(issue).await.len(),
        before,
        "the bot wrote about a forged job"
    );
    assert_nothing_decided_or_written(&w, &request).await;
}

#[tokio::test]
async fn a_forged_queued_status_does_not_skip_the_permission_check() {
    // The reader's command is held before its permission check, so that the forged status
    // lands first, as if the job had been authorized.
    let (w, request) = stage(
        "atk-forged-status",
        json!({}),
        Some("authorize@approve=600000"),
    )
    .await;
    let gitea = Gitea::shared();
    let issue = w.issue("forged status").await;
    let c = w
        .comment(
            gitea.reader(),
            issue,
            &format!("/agent approve {}", request),
        )
        .await;
    let name = w.job_name(issue, c);
    // The job is stored and its reconcile holds before the check (no status written yet).
    w.wait_paused("authorize").await;
    let unwritten = w.jobs().get(&name).await.unwrap().status;
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
    let as_alice: Api<AgentJob> = Api::namespaced(w.alice().clone(), &w.sc.ns);
    let params = PatchParams::default();
    if let Err(e) = as_alice
        .patch_status(&name, &params, &Patch::Merge(&forged))
        .await
    {
        eprintln!("admission refused alice's status ({e}); writing it as admin");
        w.jobs()
            .patch_status(&name, &params, &Patch::Merge(&forged))
            .await
            .expect("the admin writes the status");
    }
    let done = w.wait_phase(&name, JobPhase::Rejected).await;
    let (reason, error) = reason_and_error(&done);
    assert_eq!(reason, "PermissionDenied", "{error}");
    assert!(
        error.contains("has `read` permission") && error.contains("need write permission"),
        "{error}"
    );
    assert_nothing_decided_or_written(&w, &request).await;
}

#[tokio::test]
async fn a_delivery_from_a_repository_not_allowed_is_refused_and_stores_nothing() {
    let (w, request) = stage("atk-repo", json!({}), None).await;
    let gitea = Gitea::shared();
    let approve = format!("/agent approve {}", request);
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
            .post(w.controller().webhook_url())
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
    let jobs = w.jobs().list(&ListParams::default()).await.unwrap().items;
    assert!(jobs.is_empty(), "{jobs:?}");
    assert!(
        w.controller()
            .log()
            .contains("command from a repository not on --gitea-repository; not stored")
    );
    assert_nothing_decided_or_written(&w, &request).await;
}

#[tokio::test]
async fn approving_a_stale_or_expired_request_is_refused_and_records_nothing() {
    // The shortest expiry a Budget accepts is one minute.
    let (w, request) = stage("atk-late", json!({"expiry": "1m"}), None).await;
    let gitea = Gitea::shared();
    let requests = w.sc.api::<ApprovalRequest>();
    wait::until(&requests, &request, Duration::from_secs(120), |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(ApprovalPhase::Expired)
    })
    .await;
    // A Stale one, as the plan reconciler leaves it when YNAB changed since the preview.
    let stale = request.clone() + "-stale";
    let mut copy = requests.get(&request).await.unwrap();
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
    let issue = w.issue("late answers").await;
    // The Stale one may also show as "not Pending" should the request's phase say more.
    for (request, want) in [(&request, "expired at"), (&stale, "Stale")] {
        let c = w
            .comment(
                gitea.writer(),
                issue,
                &format!("/agent approve {request} yes"),
            )
            .await;
        let done = w
            .wait_phase(&w.job_name(issue, c), JobPhase::Rejected)
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
    assert_nothing_decided_or_written(&w, &request).await;
}

#[tokio::test]
async fn markers_mentions_html_and_links_in_a_command_are_echoed_inert() {
    let (w, request) = stage("atk-echo", json!({}), None).await;
    let gitea = Gitea::shared();
    let issue = w.issue("echo").await;
    let admin = gitea.admin().login();
    let text = format!("/agent approve @{admin} <!--x--> [a](http://e.vil) ![i](http://e.vil/i)");
    let c = w.comment(gitea.writer(), issue, &text).await;
    let name = w.job_name(issue, c);
    w.wait_phase(&name, JobPhase::Rejected).await;
    let start = Instant::now();
    let body = loop {
        let id = w
            .jobs()
            .get(&name)
            .await
            .unwrap()
            .status
            .and_then(|s| s.status_comment_id);
        let found = w
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
        .json(&json!({"Text": body, "Mode": "comment", "Context": format!("{}/{}", gitea.url(), w.repo())}))
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
    let comments = issue_comments(&w, issue).await;
    assert_eq!(
        canonical_comment(&comments, gitea.bot().login(), &name),
        comments.iter().find(|x| x.body == body).map(|x| x.id)
    );
    assert_nothing_decided_or_written(&w, &request).await;
}
