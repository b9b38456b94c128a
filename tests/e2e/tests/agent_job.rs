//! `/agent` commands end to end: a real Gitea sends signed comment webhooks to `ledgerops run`,
//! which persists AgentJobs in a real API server, checks permissions through Gitea's API,
//! executes in receive order, and keeps one status comment per job.
//!
//! Each test has its own Gitea repository (so webhooks of other tests never reach it), its own
//! namespace and its own controller process.

use std::time::{Duration, Instant};

use base64::Engine;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use ledgerops::api::agent_job::{AgentJob, CommentEvent, JobPhase};
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::logic::job::persisted::from_persisted;
use ledgerops::logic::job::render::{marker, pending_publication};
use ledgerops::logic::job::state::is_terminal;
use ledgerops::logic::job::webhook::{Incoming, sign};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::agent::SECRET;
use ledgerops_e2e::gitea_api::{self, call as gitea_call};
use ledgerops_e2e::scenario::WAIT;
use ledgerops_e2e::world::World;
use ledgerops_e2e::{install_crds, kstatus};
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use reqwest::Method;
use serde_json::json;

/// One test's world: a Gitea repository, a namespace and a controller of its own, which Gitea
/// tells of comments; `pause` sets the controller's test pauses.
async fn world(prefix: &str, pause: Option<&str>) -> World {
    World::build(prefix)
        .agent(&["issue_comment", "pull_request_comment"])
        .pause(pause)
        .build()
        .await
}

/// Waits until the job is finished and its comment shows it (the hash of the published body is
/// that of the final state's rendering).
async fn wait_settled(w: &World, name: &str) -> AgentJob {
    w.wait_job(name, "settled", |j| {
        let s = from_persisted(&j.spec, j.status.as_ref(), j.metadata.generation);
        is_terminal(s.phase)
            && s.status_comment_id.is_some()
            && pending_publication(name, &s).is_none()
    })
    .await
}

fn phase(j: &AgentJob) -> Option<JobPhase> {
    j.status.as_ref().and_then(|s| s.phase)
}

#[tokio::test]
async fn a_writers_status_command_ends_with_one_comment_updated_through_each_state() {
    // Slow the executor down just enough for the queued and running comments to be seen.
    let w = world(
        "aj-status",
        Some("before-claim=1500,after-job-started=1500"),
    )
    .await;
    let issue = w.issue("status please").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent status").await;
    let name = w.job_name(issue, comment);

    let mut seen: Vec<String> = Vec::new();
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < WAIT,
            "no final comment; seen {seen:?}\n{}",
            w.controller().log()
        );
        let bots = w.bot_comments(issue).await;
        assert!(bots.len() <= 1, "more than one bot comment: {bots:?}");
        if let Some(body) = bots.first().map(|c| &c.body) {
            assert!(body.starts_with(&marker(&name)), "{body}");
            let state = ["queued as", "running (", ": done."]
                .into_iter()
                .find(|s| body.contains(s))
                .unwrap_or("other")
                .to_owned();
            if seen.last() != Some(&state) {
                seen.push(state.clone());
            }
            if state == ": done." {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen, ["queued as", "running (", ": done."]);
    let job = wait_settled(&w, &name).await;
    let status = job.status.clone().unwrap();
    assert_eq!(status.phase, Some(JobPhase::Succeeded));
    assert_eq!(status.command_name.as_deref(), Some("status"));
    assert_eq!(status.permission.as_deref(), Some("write"));
    assert_eq!(job.spec.author, w.gitea().writer().login());
    assert_eq!(job.spec.sequence, 1);
    let ready = conditions::get(&status.conditions, "Ready").unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Succeeded")
    );
    kstatus::expect::<AgentJob>(&w.sc.client, &w.sc.ns, &name, "Current").await;
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1);
    assert_eq!(status.status_comment_id, Some(bots[0].id));
    assert!(
        bots[0].body.contains("### Waiting approvals (0)"),
        "{}",
        bots[0].body
    );
    assert!(bots[0].body.contains("### Budgets (0)"), "{}", bots[0].body);
    // Every change went through the state machine, each event once.
    for id in ["received", "permission", "started", "completed"] {
        assert_eq!(
            status.applied_events.iter().filter(|e| *e == id).count(),
            1,
            "{id}: {:?}",
            status.applied_events
        );
    }
}

#[tokio::test]
async fn a_reader_is_rejected_before_syntax_and_a_writers_malformed_command_gets_help() {
    let w = world("aj-reject", None).await;
    let issue = w.issue("permissions").await;
    let by_reader = w
        .comment(w.gitea().reader(), issue, "/agent frobnicate")
        .await;
    let by_writer = w
        .comment(w.gitea().writer(), issue, "/agent frobnicate")
        .await;
    let reader_job = wait_settled(&w, &w.job_name(issue, by_reader)).await;
    let writer_job = wait_settled(&w, &w.job_name(issue, by_writer)).await;

    let rs = reader_job.status.unwrap();
    assert_eq!(rs.phase, Some(JobPhase::Rejected));
    let reader_name = w.job_name(issue, by_reader);
    let verdict = kstatus::expect::<AgentJob>(&w.sc.client, &w.sc.ns, &reader_name, "Failed").await;
    assert!(verdict.message.contains("permission"), "{verdict:?}");
    assert_eq!(rs.reason.as_deref(), Some("PermissionDenied"));
    assert_eq!(rs.permission.as_deref(), Some("read"));
    assert!(rs.started_at.is_none(), "a rejected command never starts");
    let ws = writer_job.status.unwrap();
    assert_eq!(ws.reason.as_deref(), Some("InvalidCommand"));

    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 2, "{bots:?}");
    let reader_comment = &bots
        .iter()
        .find(|c| Some(c.id) == rs.status_comment_id)
        .unwrap()
        .body;
    assert!(
        reader_comment.contains("`read` permission"),
        "{reader_comment}"
    );
    assert!(
        !reader_comment.contains("unknown command"),
        "{reader_comment}"
    );
    let writer_comment = &bots
        .iter()
        .find(|c| Some(c.id) == ws.status_comment_id)
        .unwrap()
        .body;
    assert!(
        writer_comment.contains("unknown command `frobnicate`"),
        "{writer_comment}"
    );
    assert!(
        writer_comment.contains("/agent suggest [YYYY-MM]"),
        "{writer_comment}"
    );
}

#[tokio::test]
async fn fifty_identical_deliveries_make_one_job_and_one_comment() {
    let w = world("aj-dedup", None).await;
    let issue = w.issue("dedup").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent help").await;
    let body = w.payload(issue, comment, w.gitea().writer().login(), "/agent help");
    let deliveries = (0..50).map(|_| w.deliver(Some("replayed-delivery-1"), &body, SECRET));
    let codes = futures::future::join_all(deliveries).await;
    // Gitea's own delivery (another delivery id, the same comment) may have come first.
    assert!(
        codes.iter().filter(|c| **c == 202).count() <= 1,
        "{codes:?}"
    );
    assert!(codes.iter().all(|c| *c == 202 || *c == 200), "{codes:?}");
    let name = w.job_name(issue, comment);
    let job = wait_settled(&w, &name).await;
    assert_eq!(phase(&job), Some(JobPhase::Succeeded));
    // A redelivery gets a new delivery id: still the same job.
    assert_eq!(
        w.deliver(Some("manual-redelivery"), &body, SECRET).await,
        200
    );
    let jobs = w.jobs().list(&Default::default()).await.unwrap().items;
    assert_eq!(
        jobs.len(),
        1,
        "{:?}",
        jobs.iter().map(|j| j.name_any()).collect::<Vec<_>>()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1, "{bots:?}");
    assert!(
        bots[0]
            .body
            .contains("/agent approve <approvalrequest> [comment]")
    );
}

#[tokio::test]
async fn bad_deliveries_are_refused_and_persist_nothing() {
    let w = world("aj-forged", None).await;
    let body = w.payload(1, 999_999, "writer", "/agent status");
    assert_eq!(
        w.deliver(Some("d-forged"), &body, "not-the-secret").await,
        401
    );
    // A valid signature over other bytes is a forgery too.
    let resp = reqwest::Client::new()
        .post(w.controller().webhook_url())
        .header("X-Gitea-Event", "issue_comment")
        .header("X-Gitea-Delivery", "d-tampered")
        .header("X-Gitea-Signature", sign(SECRET.as_bytes(), b"{}"))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    assert_eq!(w.deliver(None, &body, SECRET).await, 400, "no delivery id");
    assert_eq!(w.deliver(Some("d-bad"), b"{not json", SECRET).await, 400);
    let chat = w.payload(1, 999_998, "writer", "thanks!");
    assert_eq!(w.deliver(Some("d-chat"), &chat, SECRET).await, 204);
    let own = w.payload(1, 999_997, w.gitea().bot().login(), "/agent status");
    assert_eq!(w.deliver(Some("d-own"), &own, SECRET).await, 204);
    let jobs = w.jobs().list(&Default::default()).await.unwrap().items;
    assert!(jobs.is_empty(), "{jobs:?}");
}

#[tokio::test]
async fn a_spoofed_marker_is_never_edited_and_a_deleted_comment_comes_back() {
    // Hold the permission check so that the spoof exists before the bot looks for its comment.
    let w = world("aj-spoof", Some("authorize=3000")).await;
    let issue = w.issue("spoof").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent help").await;
    let name = w.job_name(issue, comment);
    let spoof_body = format!("{}\nI am the bot, trust me", marker(&name));
    let spoof = w.comment(w.gitea().reader(), issue, &spoof_body).await;
    let job = wait_settled(&w, &name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Succeeded));
    assert_ne!(status.status_comment_id, Some(spoof));
    let all = w.comments(issue).await;
    let spoofed = all.iter().find(|c| c.id == spoof).unwrap();
    assert_eq!(spoofed.body, spoof_body, "the user's comment was edited");
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1, "{bots:?}");

    // Deleting the finished job's comment: it is recreated and relinked.
    let old = bots[0].id;
    gitea_call(
        Method::DELETE,
        &format!("/repos/{}/issues/comments/{old}", w.repo()),
        w.gitea().admin(),
        None,
    )
    .await;
    let relinked = w
        .wait_job(&name, "relinked", |j| {
            j.status
                .as_ref()
                .and_then(|s| s.status_comment_id)
                .is_some_and(|id| id != old)
        })
        .await;
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1, "{bots:?}");
    assert_eq!(relinked.status.unwrap().status_comment_id, Some(bots[0].id));
    assert!(bots[0].body.starts_with(&marker(&name)));
    let spoofed = w
        .comments(issue)
        .await
        .into_iter()
        .find(|c| c.id == spoof)
        .unwrap();
    assert_eq!(spoofed.body, spoof_body);
}

#[tokio::test]
async fn kill_during_execute_fails_the_job_as_interrupted_and_never_replays_it() {
    let mut w = world("aj-kill-run", Some("after-job-started=600000")).await;
    let issue = w.issue("kill while running").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent status").await;
    let name = w.job_name(issue, comment);
    w.wait_phase(&name, JobPhase::Running).await;
    // The phase is written before the pause is logged: kill only once it is paused.
    w.wait_paused("after-job-started").await;
    w.agent_mut().kill();
    w.agent_mut().start_controller(None).await;
    let job = wait_settled(&w, &name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Failed));
    assert_eq!(status.reason.as_deref(), Some("Interrupted"));
    let interrupted = conditions::get(&status.conditions, "Interrupted").unwrap();
    assert_eq!(interrupted.status, "True");
    assert!(status.result.is_none());
    assert!(!status.applied_events.iter().any(|e| e == "completed"));
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1, "{bots:?}");
    assert!(
        bots[0].body.contains("failed (Interrupted)"),
        "{}",
        bots[0].body
    );
    // Still failed a while later: never run again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let again = w.jobs().get(&name).await.unwrap();
    let again = again.status.unwrap();
    assert_eq!(again.phase, Some(JobPhase::Failed));
    assert_eq!(
        again
            .applied_events
            .iter()
            .filter(|e| *e == "started")
            .count(),
        1
    );
}

#[tokio::test]
async fn kill_after_the_claim_before_job_started_runs_the_job_once_after_restart() {
    let mut w = world("aj-kill-claim", Some("after-claim=600000")).await;
    let issue = w.issue("kill after claim").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent status").await;
    let name = w.job_name(issue, comment);
    w.wait_paused("after-claim").await;
    assert_eq!(
        phase(&w.jobs().get(&name).await.unwrap()),
        Some(JobPhase::Queued)
    );
    w.agent_mut().kill();
    w.agent_mut().start_controller(None).await;
    let job = wait_settled(&w, &name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Succeeded));
    assert_eq!(
        status
            .applied_events
            .iter()
            .filter(|e| *e == "started")
            .count(),
        1
    );
    assert!(conditions::get(&status.conditions, "Interrupted").is_none());
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1, "{bots:?}");
    assert!(bots[0].body.contains(": done."), "{}", bots[0].body);
}

#[tokio::test]
async fn commands_run_in_receive_order_even_when_the_first_permission_check_is_slow() {
    let w = world("aj-order", Some("authorize@first=4000")).await;
    // Record every change of every job, in the API server's order.
    let api = w.jobs();
    let recorder = tokio::spawn(async move {
        let mut log: Vec<(String, Option<JobPhase>)> = Vec::new();
        let mut stream = watcher(api, watcher::Config::default())
            .applied_objects()
            .boxed();
        while let Some(Ok(j)) = stream.next().await {
            let entry = (j.name_any(), phase(&j));
            if log.iter().rev().find(|(n, _)| *n == entry.0) != Some(&entry) {
                log.push(entry);
            }
            if log
                .iter()
                .filter(|(_, p)| *p == Some(JobPhase::Succeeded))
                .count()
                == 3
            {
                break;
            }
        }
        log
    });
    let issue = w.issue("order").await;
    let mut names = Vec::new();
    for word in ["first", "second", "third"] {
        let c = w
            .comment(w.gitea().writer(), issue, &format!("/agent status\n{word}"))
            .await;
        let name = w.job_name(issue, c);
        // Received before the next is posted, so the receive order is the comment order.
        w.wait_job(&name, "received", |_| true).await;
        names.push(name);
    }
    let log = tokio::time::timeout(WAIT, recorder)
        .await
        .unwrap_or_else(|_| panic!("not all succeeded:\n{}", w.controller().log()))
        .unwrap();
    let pos = |name: &str, p: JobPhase| {
        log.iter()
            .position(|(n, ph)| n == name && *ph == Some(p))
            .unwrap_or_else(|| panic!("{name} never {p:?}: {log:?}"))
    };
    let seqs: Vec<i64> = {
        let mut v = Vec::new();
        for n in &names {
            v.push(w.jobs().get(n).await.unwrap().spec.sequence);
        }
        v
    };
    assert!(seqs[0] < seqs[1] && seqs[1] < seqs[2], "{seqs:?}");
    // The later commands were authorized while the first still waited for its check…
    assert!(
        pos(&names[1], JobPhase::Queued) < pos(&names[0], JobPhase::Queued),
        "{log:?}"
    );
    // …and still ran only after it, one at a time.
    assert!(
        pos(&names[0], JobPhase::Succeeded) < pos(&names[1], JobPhase::Running),
        "{log:?}"
    );
    assert!(
        pos(&names[1], JobPhase::Succeeded) < pos(&names[2], JobPhase::Running),
        "{log:?}"
    );
}

#[tokio::test]
async fn suggest_uses_blessed_rules_first_and_opens_a_pull_request_whose_file_is_a_valid_plan() {
    use k8s_openapi::api::core::v1::Secret;
    use ledgerops::api::budget::{Budget, BudgetPhase};
    use ledgerops::api::rule::{CategorizationRule, RulePhase};
    use ynab_sim::demo;

    let w = world("aj-suggest", None).await;
    let secret = ledgerops_e2e::scenario::token_secret("home-token", demo::TOKEN);
    Api::<Secret>::namespaced(w.sc.client.clone(), &w.sc.ns)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let budget: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": "home"},
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "home-token"}, "apiUrl": w.sc.sim.api_url()}
    }))
    .unwrap();
    let budgets: Api<Budget> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    budgets
        .create(&PostParams::default(), &budget)
        .await
        .unwrap();
    ledgerops_e2e::wait::until(&budgets, "home", WAIT, |b| {
        b.status.as_ref().and_then(|s| s.phase) == Some(BudgetPhase::Ready)
    })
    .await;

    // A Blessed rule speaks before the payee's history; a candidate never does.
    let rules: Api<CategorizationRule> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    let rule = |name: &str, m: serde_json::Value, category: &str, blessed: bool| {
        let mut r = json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationRule",
            "metadata": {"name": name},
            "spec": {"budgetRef": {"name": "home"}, "match": m, "categoryId": category}
        });
        if blessed {
            r["spec"]["blessing"] = json!({"by": "admin", "at": "2026-09-20T10:00:00Z"});
        }
        serde_json::from_value::<CategorizationRule>(r).unwrap()
    };
    let transport = "a037e3e6-bc37-4856-8a4c-1706cea346b7";
    let gifts = "bb6db73d-33c5-4760-a89d-cabbb758c811";
    for r in [
        rule(
            "rail-co",
            json!({"payeeNormalised": "Rail Co"}),
            transport,
            true,
        ),
        rule(
            "monoprix-gifts",
            json!({"payeePattern": "monoprix*"}),
            gifts,
            false,
        ),
    ] {
        rules.create(&PostParams::default(), &r).await.unwrap();
    }
    ledgerops_e2e::wait::until(&rules, "rail-co", WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(RulePhase::Blessed)
    })
    .await;

    let issue = w.issue("suggest").await;
    let comment = w
        .comment(w.gitea().writer(), issue, "/agent suggest 2026-09")
        .await;
    let name = w.job_name(issue, comment);
    let job = wait_settled(&w, &name).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Succeeded), "{status:#?}");
    let pr_url = status.pull_request_url.clone().expect("a pull request");
    let branch = status.branch.clone().expect("a branch");
    let bots = w.bot_comments(issue).await;
    assert_eq!(bots.len(), 1);
    assert!(bots[0].body.contains(&pr_url), "{}", bots[0].body);
    let table = &bots[0].body;
    assert!(
        table.contains("| date | payee | amount | category | from |"),
        "{table}"
    );
    let row = |payee: &str| {
        table
            .lines()
            .find(|l| l.contains(payee))
            .unwrap_or_else(|| panic!("no row for {payee}: {table}"))
    };
    assert!(
        // Markdown-escaped: the table's cells are inert text.
        row("RAIL CO").contains("| Transport | rule rail\\-co |"),
        "{table}"
    );
    let monoprix = row("MONOPRIX");
    assert!(
        !monoprix.contains("Gifts") && monoprix.contains("| history\\: "),
        "{table}"
    );

    let number = gitea_api::pull_number(&pr_url);
    let pr = gitea_api::pull_request(w.repo(), number).await;
    assert_eq!(pr["head"]["ref"], branch.as_str());
    assert_eq!(pr["state"], "open");
    let files = gitea_api::pull_request_files(w.repo(), number).await;
    let path = files[0].clone();
    assert!(path.starts_with("plans/suggest-2026-09-"), "{path}");
    let content = gitea_call(
        Method::GET,
        &format!("/repos/{}/contents/{path}?ref={branch}", w.repo()),
        w.gitea().admin(),
        None,
    )
    .await;
    let raw = content["content"].as_str().unwrap().replace('\n', "");
    let yaml = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .unwrap(),
    )
    .unwrap();
    let plan: CategorizationPlan =
        serde_json::from_value(ledgerops_e2e::yaml_documents(&yaml).remove(0)).unwrap();
    let assignments = plan.spec.assignments.clone().unwrap();
    assert!(!assignments.is_empty());
    assert_eq!(plan.spec.budget_ref.name, "home");
    // The API server accepts it as written (schema and CEL rules), without storing it.
    let plans: Api<CategorizationPlan> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    plans
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &plan,
        )
        .await
        .unwrap_or_else(|e| panic!("the plan is invalid: {e}\n{yaml}"));

    // `/agent rules` lists them: the Candidate first, then the Blessed rule, category named.
    let issue = w.issue("rules").await;
    let comment = w.comment(w.gitea().writer(), issue, "/agent rules").await;
    let job = wait_settled(&w, &w.job_name(issue, comment)).await;
    assert_eq!(job.status.unwrap().phase, Some(JobPhase::Succeeded));
    let bots = w.bot_comments(issue).await;
    let report = &bots[0].body;
    let at = |needle: &str| {
        report
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {report}"))
    };
    assert!(
        at("Candidates (learned or written, not blessed: they never act): 1")
            < at("`monoprix-gifts`")
    );
    assert!(at("`monoprix-gifts`") < at("Blessed (used by `/agent suggest`"));
    assert!(at("Blessed (used by `/agent suggest`") < at("`rail-co`"));
    assert!(
        report.contains(&format!("Transport (`{transport}`)")),
        "{report}"
    );
}

#[tokio::test]
async fn approvals_are_listed_oldest_first_and_decided_through_comments() {
    use ledgerops::api::approval::{ApprovalRequest, Verdict};
    let w = world("aj-approve", None).await;
    let approvals: Api<ApprovalRequest> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    for name in ["apr-old", "apr-new"] {
        let r: ApprovalRequest = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
            "metadata": {"name": name},
            "spec": {
                "budgetRef": {"name": "home"},
                "subject": {"kind": "CategorizationPlan", "name": format!("plan-of-{name}")},
                "previewHash": "abc123", "summary": format!("summary of {name}"),
                "reason": "above the auto-approve limit", "expiresAt": "2099-01-01T00:00:00Z"
            }
        }))
        .unwrap();
        approvals.create(&PostParams::default(), &r).await.unwrap();
        // Only a Pending request can be decided.
        ledgerops_e2e::wait::until(&approvals, name, WAIT, |r| {
            r.status.as_ref().and_then(|s| s.phase)
                == Some(ledgerops::api::approval::ApprovalPhase::Pending)
        })
        .await;
        // creationTimestamp has a one-second resolution.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    let issue = w.issue("approvals").await;
    let run = |text: &'static str| {
        let w = &w;
        async move {
            let c = w.comment(w.gitea().writer(), issue, text).await;
            let job = wait_settled(w, &w.job_name(issue, c)).await;
            let s = job.status.unwrap();
            let body = w
                .bot_comments(issue)
                .await
                .into_iter()
                .find(|c| Some(c.id) == s.status_comment_id)
                .unwrap()
                .body;
            (s, body)
        }
    };
    let (s, body) = run("/agent status").await;
    assert_eq!(s.phase, Some(JobPhase::Succeeded));
    assert!(body.contains("### Waiting approvals (2)"), "{body}");
    assert!(
        body.find("`apr-old`").unwrap() < body.find("`apr-new`").unwrap(),
        "{body}"
    );

    let (s, body) = run("/agent approve apr-old looks right").await;
    assert_eq!(s.phase, Some(JobPhase::Succeeded), "{body}");
    let (s, body) = run("/agent reject apr-new wrong month").await;
    assert_eq!(s.phase, Some(JobPhase::Succeeded), "{body}");
    let old = approvals
        .get("apr-old")
        .await
        .unwrap()
        .spec
        .decision
        .unwrap();
    assert_eq!(old.verdict, Verdict::Approve);
    assert_eq!(old.by, format!("gitea:{}", w.gitea().writer().login()));
    assert_eq!(old.comment.as_deref(), Some("looks right"));
    let new = approvals
        .get("apr-new")
        .await
        .unwrap()
        .spec
        .decision
        .unwrap();
    assert_eq!(new.verdict, Verdict::Reject);
    assert_eq!(new.comment.as_deref(), Some("wrong month"));

    // A decision is final, and an unknown request is a failed precondition.
    let (s, body) = run("/agent reject apr-old changed my mind").await;
    assert_eq!(s.phase, Some(JobPhase::Rejected));
    assert!(body.contains("already decided"), "{body}");
    let (s, body) = run("/agent approve apr-missing").await;
    assert_eq!(s.reason.as_deref(), Some("PreconditionFailed"));
    assert!(body.contains("no ApprovalRequest `apr-missing`"), "{body}");
    let (_, body) = run("/agent status").await;
    assert!(body.contains("### Waiting approvals (0)"), "{body}");
}

#[tokio::test]
async fn undo_opens_a_pull_request_with_the_undo_plan() {
    let w = world("aj-undo", None).await;
    let plan: CategorizationPlan = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "july-cleanup"},
        "spec": {"budgetRef": {"name": "home"}, "assignments": [{"transactionId": "tx-1", "categoryId": "cat-1"}]}
    }))
    .unwrap();
    let plans: Api<CategorizationPlan> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    plans.create(&PostParams::default(), &plan).await.unwrap();
    let issue = w.issue("undo").await;
    let c = w
        .comment(w.gitea().writer(), issue, "/agent undo july-cleanup")
        .await;
    let job = wait_settled(&w, &w.job_name(issue, c)).await;
    let status = job.status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Succeeded), "{status:#?}");
    let branch = status.branch.unwrap();
    let content = gitea_call(
        Method::GET,
        &format!(
            "/repos/{}/contents/plans/undo-july-cleanup.yaml?ref={branch}",
            w.repo()
        ),
        w.gitea().admin(),
        None,
    )
    .await;
    let raw = content["content"].as_str().unwrap().replace('\n', "");
    let yaml = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .unwrap(),
    )
    .unwrap();
    let undo: CategorizationPlan =
        serde_json::from_value(ledgerops_e2e::yaml_documents(&yaml).remove(0)).unwrap();
    assert_eq!(undo.spec.undo_of.as_deref(), Some("july-cleanup"));
    assert!(undo.spec.assignments.is_none());
    plans
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &undo,
        )
        .await
        .unwrap_or_else(|e| panic!("the undo plan is invalid: {e}\n{yaml}"));
    let bots = w.bot_comments(issue).await;
    assert!(
        bots[0]
            .body
            .contains(status.pull_request_url.as_deref().unwrap())
    );
}

#[tokio::test]
async fn claims_and_sequences_are_atomic_across_writers() {
    use k8s_openapi::jiff::Timestamp;
    use ledgerops::agent::store::{JobStore, Latest, Received};
    use ledgerops::logic::job::event::{EventKind, JobEvent};

    let plane = ControlPlane::shared();
    let client = plane.client().await.unwrap();
    install_crds(&client).await;
    let ns = plane.namespace("aj-atomic").await.unwrap();
    // Two stores stand for two processes: their in-process locks do not help each other.
    let stores = [
        JobStore::new(client.clone(), &ns),
        JobStore::new(client.clone(), &ns),
    ];
    let allocations = (0..40).map(|i| stores[i % 2].allocate_sequence());
    let mut seqs: Vec<i64> = futures::future::join_all(allocations)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=40).collect::<Vec<i64>>());

    let incoming = Incoming {
        delivery_id: "d-1".into(),
        event: CommentEvent::IssueComment,
        repository: "household/atomic".into(),
        issue_number: 1,
        comment_id: 5,
        author: "writer".into(),
        command: "/agent status".into(),
        truncated_from: None,
    };
    let Received::New { name, sequence } = stores[0]
        .receive(&incoming, Timestamp::now())
        .await
        .unwrap()
    else {
        panic!("not new");
    };
    assert_eq!(sequence, 41);
    let again = Incoming {
        delivery_id: "d-2".into(),
        ..incoming.clone()
    };
    assert_eq!(
        stores[1].receive(&again, Timestamp::now()).await.unwrap(),
        Received::Duplicate { name: name.clone() }
    );
    let granted = JobEvent::new(
        "permission",
        Timestamp::now(),
        EventKind::PermissionGranted {
            permission: "write".into(),
        },
    );
    // The job as stored, with no status written (the CRD's default only): a copy that every
    // write below makes stale.
    let unwritten = stores[0].api().get(&name).await.unwrap();
    let defaulted = unwritten.status.as_ref().expect("the CRD's default");
    assert_eq!(
        (defaulted.observed_generation, defaulted.phase),
        (Some(-1), None)
    );
    let granted_once = stores[0].evolve(&name, &granted).await.unwrap();
    assert!(granted_once.applied);
    // From the stale copy the event looks new; the write is refused, and the fresh read shows it
    // applied: it is not applied twice.
    let again = stores[1]
        .evolve_latest(&Latest::seen(&unwritten), &granted)
        .await
        .unwrap();
    assert!(!again.applied, "{again:?}");
    // Eight executors race to start the job, half of them from the stale copy: exactly one wins.
    let started = JobEvent::new("started", Timestamp::now(), EventKind::JobStarted);
    let claims = (0..8).map(|i| {
        let latest = match i % 2 {
            0 => Latest::seen(&unwritten),
            _ => Latest::named(&name),
        };
        let (store, started) = (&stores[i % 2], &started);
        async move { store.evolve_latest(&latest, started).await }
    });
    let results = futures::future::join_all(claims).await;
    let winners = results
        .iter()
        .filter(|r| r.as_ref().is_ok_and(|e| e.applied))
        .count();
    assert_eq!(winners, 1, "{results:?}");
    let status = stores[0].api().get(&name).await.unwrap().status.unwrap();
    assert_eq!(status.phase, Some(JobPhase::Running));
    assert_eq!(status.applied_events, ["received", "permission", "started"]);
}

#[tokio::test]
async fn a_permission_check_that_keeps_failing_rejects_after_the_bound_and_later_commands_run() {
    let mut w = world("aj-bound", None).await;
    // A second allowed repository where the bot may only read: Gitea answers 403 to its
    // permission question there, every time.
    let members = [(w.gitea().bot(), "read"), (w.gitea().writer(), "write")];
    let read_only = gitea_api::create_repo(&format!("{}-ro", w.sc.ns), &members).await;
    w.agent_mut().obey_also(&read_only).await;
    let hook = w.controller().webhook_url();
    gitea_api::add_hook(&read_only, hook, SECRET, &["issue_comment"]).await;
    let issue = gitea_api::open_issue(&read_only, "bot without rights").await;
    let stuck = gitea_api::comment(&read_only, w.gitea().writer(), issue, "/agent help").await;
    let stuck_name = Incoming {
        delivery_id: "x".into(),
        event: CommentEvent::IssueComment,
        repository: read_only.clone(),
        issue_number: issue,
        comment_id: stuck,
        author: "x".into(),
        command: "x".into(),
        truncated_from: None,
    }
    .job_name();
    // Received after the stuck one: it waits behind it, then runs.
    w.wait_job(&stuck_name, "stored", |_| true).await;
    let later_issue = w.issue("later").await;
    let later = w
        .comment(w.gitea().writer(), later_issue, "/agent help")
        .await;
    let later_name = w.job_name(later_issue, later);

    let started = Instant::now();
    let failed = w.wait_phase(&stuck_name, JobPhase::Rejected).await;
    let status = failed.status.unwrap();
    assert_eq!(status.reason.as_deref(), Some("PermissionCheckFailed"));
    let error = status.error.unwrap();
    assert!(
        error.contains("failed 6 time(s)") && error.contains("403"),
        "{error}"
    );
    eprintln!(
        "permission check given up after {:?} (received to Rejected: {:?})",
        started.elapsed(),
        status
            .finished_at
            .as_ref()
            .unwrap()
            .0
            .duration_since(failed.spec.received_at.0)
    );
    let last = status.last_error.expect("the latest error is kept");
    assert!(last.message.contains("403"), "{}", last.message);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the bound took {:?}",
        started.elapsed()
    );
    let done = w.wait_phase(&later_name, JobPhase::Succeeded).await;
    let ran_at = done.status.unwrap().started_at.unwrap().0;
    assert!(
        ran_at >= status.finished_at.unwrap().0,
        "the later command overtook the stuck one"
    );
}

#[tokio::test]
async fn empty_secrets_and_a_missing_repository_allowlist_stop_start_up() {
    let dir = std::env::temp_dir().join(format!("ledgerops-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    let empty = dir.join("empty");
    std::fs::write(&token, "a-token").unwrap();
    std::fs::write(&empty, " \n").unwrap();
    let (token, empty) = (token.to_str().unwrap(), empty.to_str().unwrap());
    let base = [
        "run",
        "--listen",
        "127.0.0.1:0",
        "--gitea-url",
        "http://127.0.0.1:1",
        "--gitea-bot-login",
        "bot",
    ];
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "--gitea-repository",
                "o/r",
                "--gitea-token-file",
                token,
                "--gitea-webhook-secret-file",
                empty,
            ],
            "(--gitea-webhook-secret-file) is empty",
        ),
        (
            &[
                "--gitea-repository",
                "o/r",
                "--gitea-token-file",
                empty,
                "--gitea-webhook-secret-file",
                token,
            ],
            "(--gitea-token-file) is empty",
        ),
        (
            &[
                "--gitea-token-file",
                token,
                "--gitea-webhook-secret-file",
                token,
            ],
            "give --gitea-repository owner/name",
        ),
    ];
    for (extra, want) in cases {
        let out = std::process::Command::new(ledgerops_e2e::controller::binary())
            .args(base)
            .args(extra)
            .env("KUBECONFIG", "/nonexistent")
            .env_remove("LEDGEROPS_GITEA_REPOSITORIES")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{want}: started anyway");
        assert!(stderr.contains(want), "{want}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The numbers of the pull requests of `repo` from `branch`.
async fn pulls_from(repo: &str, branch: &str) -> Vec<i64> {
    let admin = Gitea::shared().admin();
    let pulls = gitea_call(
        Method::GET,
        &format!("/repos/{repo}/pulls?state=all"),
        admin,
        None,
    )
    .await;
    pulls
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["head"]["ref"] == branch)
        .map(|p| p["number"].as_i64().unwrap())
        .collect()
}

/// Whether `repo` has `branch`.
async fn has_branch(repo: &str, branch: &str) -> bool {
    let admin = Gitea::shared().admin();
    let branches = gitea_call(Method::GET, &format!("/repos/{repo}/branches"), admin, None).await;
    branches
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == branch)
}

/// An `/agent undo` job of a plan, stopped (SIGKILL) right after it opened its pull request
/// and before it recorded it; `touch` runs on the branch before the kill. The restarted
/// controller fails the job as interrupted and cleans up. Returns the job, its branch and the
/// number of the pull request it opened.
async fn interrupted_undo(
    prefix: &str,
    touch: impl AsyncFnOnce(&World, &str),
) -> (World, i64, AgentJob, String, i64) {
    let mut w = world(prefix, Some("pull-request-unrecorded=600000")).await;
    let plan: CategorizationPlan = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "july-cleanup"},
        "spec": {"budgetRef": {"name": "home"}, "assignments": [{"transactionId": "tx-1", "categoryId": "cat-1"}]}
    }))
    .unwrap();
    Api::<CategorizationPlan>::namespaced(w.sc.client.clone(), &w.sc.ns)
        .create(&PostParams::default(), &plan)
        .await
        .unwrap();
    let issue = w.issue("undo, interrupted").await;
    let c = w
        .comment(w.gitea().writer(), issue, "/agent undo july-cleanup")
        .await;
    let name = w.job_name(issue, c);
    w.wait_paused("pull-request-unrecorded").await;
    let status = w.jobs().get(&name).await.unwrap().status.unwrap();
    let branch = status.branch.clone().expect("the branch is recorded first");
    assert_eq!(status.pull_request_url, None, "not recorded yet");
    let pulls = pulls_from(w.repo(), &branch).await;
    assert_eq!(
        pulls.len(),
        1,
        "the pull request is open in Gitea: {pulls:?}"
    );
    let pull = pulls[0];
    touch(&w, &branch).await;
    w.agent_mut().kill();
    w.agent_mut().start_controller(None).await;
    let job = w
        .wait_job(&name, "cleaned up", |j| {
            j.status.as_ref().is_some_and(|s| s.cleanup.is_some())
        })
        .await;
    let status = job.status.as_ref().unwrap();
    assert_eq!(status.phase, Some(JobPhase::Failed));
    assert_eq!(status.reason.as_deref(), Some("Interrupted"));
    (w, issue, job, branch, pull)
}

/// The state of pull request `number` of `repo`.
async fn pull_state(repo: &str, number: i64) -> String {
    let admin = Gitea::shared().admin();
    let pr = gitea_call(
        Method::GET,
        &format!("/repos/{repo}/pulls/{number}"),
        admin,
        None,
    )
    .await;
    pr["state"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_job_killed_after_opening_its_pull_request_closes_it_and_deletes_its_branch() {
    let (w, issue, job, branch, pull) = interrupted_undo("aj-cleanup", async |_, _| {}).await;
    let note = job.status.unwrap().cleanup.unwrap();
    assert!(
        note.starts_with("Cleaned up: closed the pull request"),
        "{note}"
    );
    assert_eq!(pull_state(w.repo(), pull).await, "closed");
    assert!(
        !has_branch(w.repo(), &branch).await,
        "the branch is deleted"
    );
    // The job's one comment says so.
    let start = Instant::now();
    loop {
        let bots = w.bot_comments(issue).await;
        assert_eq!(bots.len(), 1, "{bots:?}");
        if bots[0].body.contains(&note) {
            assert!(
                bots[0].body.contains("failed (Interrupted)"),
                "{}",
                bots[0].body
            );
            break;
        }
        assert!(
            start.elapsed() < WAIT,
            "the comment never told: {}",
            bots[0].body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_branch_someone_else_committed_to_is_left_with_its_pull_request() {
    let (w, _, job, branch, pull) = interrupted_undo("aj-cleanup-kept", async |w, branch| {
        // A person adds to the bot's pull request before the job fails.
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode("notes\n"),
            "message": "notes for the reviewer",
            "branch": branch,
        });
        gitea_call(
            Method::POST,
            &format!("/repos/{}/contents/plans/NOTES.md", w.repo()),
            w.gitea().writer(),
            Some(body),
        )
        .await;
    })
    .await;
    let note = job.status.unwrap().cleanup.unwrap();
    assert!(
        note.contains("left as they are: the branch holds commits ledgerops did not make"),
        "{note}"
    );
    assert!(has_branch(w.repo(), &branch).await);
    assert_eq!(pull_state(w.repo(), pull).await, "open");
}
