//! Leader election with two `ledgerops run` replicas on one real API server. Only the holder of
//! the Lease syncs, writes and runs `/agent` jobs; the standby stores the webhook deliveries it
//! receives. Killing the holder (SIGKILL) in the middle of a bulk write and of a running job
//! hands over within the lease duration: the new holder settles the write by re-reading (no
//! second PATCH) and fails the job as Interrupted with one comment (seed 003). Stopping the
//! holder (SIGTERM, a rolling update) releases the Lease and hands over at once.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::agent;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::scenario::{PATCH, Scenario, category, demo_with_uncategorised, load_id};
use ledgerops_e2e::wait::eventually;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use serde_json::json;

const LEASE: &str = "ledgerops-leader";
/// Short terms so the suite is quick; the chart's defaults are 15s / 10s / 2s.
const LEASE_SECONDS: u64 = 6;
const RETRY: Duration = Duration::from_secs(1);
const N: usize = 10;

fn election(identity: &str, namespace: &str) -> Vec<String> {
    [
        "--leader-elect",
        "--leader-elect-identity",
        identity,
        "--leader-elect-namespace",
        namespace,
        "--leader-elect-lease-duration",
        &format!("{LEASE_SECONDS}s"),
        "--leader-elect-renew-deadline",
        "4s",
        "--leader-elect-retry-period",
        "1s",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A replica with leader election, and with the `/agent` runtime for `repo` when given.
async fn replica(
    plane: &ControlPlane,
    s: &Scenario,
    identity: &str,
    repo: Option<&str>,
    pause: Option<&str>,
) -> Ledgerops {
    let election = election(identity, &s.ns);
    let mut args: Vec<&str> = election.iter().map(String::as_str).collect();
    let mut env = vec![];
    if let Some(repo) = repo {
        args.extend(agent::args(repo, &s.ns));
        env.extend(agent::env());
    }
    if let Some(p) = pause {
        env.push(("LEDGEROPS_TEST_PAUSE", p));
    }
    Ledgerops::start_with(plane, &args, &env).await
}

async fn holder(s: &Scenario) -> Option<String> {
    Api::<Lease>::namespaced(s.client.clone(), &s.ns)
        .get_opt(LEASE)
        .await
        .unwrap()
        .and_then(|l| l.spec)
        .and_then(|spec| spec.holder_identity)
        .filter(|h| !h.is_empty())
}

async fn wait_holder(s: &Scenario, identity: &str, limit: Duration) {
    eventually(&format!("{identity} leads"), limit, async || {
        holder(s).await.as_deref() == Some(identity)
    })
    .await;
}

/// What a standby shows: not leading, and not one YNAB request sent.
async fn assert_standby(replica: &Ledgerops) {
    let metrics = replica.metrics().await;
    assert!(metrics.contains("ledgerops_leader 0"), "{metrics}");
    assert!(
        !metrics.contains("ledgerops_ynab_requests_total{"),
        "a standby sent YNAB requests: {metrics}"
    );
}

#[tokio::test]
async fn killing_the_leader_mid_write_and_mid_job_hands_over_within_the_lease() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "leader-kill", demo_with_uncategorised(N)).await;
    let gitea = Gitea::shared();
    let members = [(gitea.bot(), "admin"), (gitea.writer(), "write")];
    let repo = gitea_api::create_repo(&s.ns, &members).await;

    // A leads and will stop inside its first job; B waits. Gitea delivers to B, the standby.
    let a = replica(
        &plane,
        &s,
        "replica-a",
        Some(&repo),
        Some("after-job-started=600000"),
    )
    .await;
    wait_holder(&s, "replica-a", Duration::from_secs(30)).await;
    let b = replica(&plane, &s, "replica-b", Some(&repo), None).await;
    agent::hook(&repo, &b, &["issue_comment"]).await;
    s.create_writing_budget("household", json!({"writes": {"batchWindow": "4s"}}))
        .await;
    s.wait_budget("household", BudgetPhase::Ready).await;

    // The job: stored by the standby, run by the leader, which stops inside it.
    let issue = gitea_api::open_issue(&repo, "who leads").await;
    let comment = gitea_api::comment(&repo, gitea.writer(), issue, "/agent status").await;
    let job = gitea_api::job_name(&repo, issue, comment);
    let jobs = s.api::<AgentJob>();
    eventually(
        "the job runs on the leader",
        Duration::from_secs(60),
        async || {
            let found = jobs.get_opt(&job).await.unwrap();
            // Running is written before the pause is logged: both, and it is paused inside.
            found.and_then(|j| j.status).and_then(|st| st.phase) == Some(JobPhase::Running)
                && a.log().contains("test pause: after-job-started")
        },
    )
    .await;

    // The write: one bulk PATCH lands in YNAB, and its answer is held back.
    s.hold_next_patch().await;
    s.create_loads(N, "Groceries").await;
    s.wait_patches(1).await;
    s.wait_all(TransactionPhase::Writing).await;
    assert_standby(&b).await;

    // kill -9 the holder in the middle of both.
    let log = a.log();
    assert!(log.contains("test pause: after-job-started"), "{log}");
    drop(a);
    let killed = Instant::now();
    let lease = Duration::from_secs(LEASE_SECONDS);
    wait_holder(&s, "replica-b", lease + RETRY * 3).await;
    let takeover = killed.elapsed();
    eprintln!("takeover after SIGKILL: {} ms", takeover.as_millis());
    // B counts the term from when it saw A's last renewal, on its own clock, and looks at least
    // every retry period: at most a lease and a look, less the time since A last renewed.
    assert!(
        takeover <= lease + RETRY * 2,
        "B led {takeover:?} after the kill; the lease is {lease:?}, B looks every {RETRY:?}"
    );

    // B settles the write by re-reading: nothing is written twice.
    s.wait_all(TransactionPhase::Converged).await;
    assert_eq!(s.requests(PATCH).await, 1, "no second PATCH");
    for i in [0, N - 1] {
        assert_eq!(
            s.ynab_category(&load_id(i)).await,
            Some(category("Groceries"))
        );
    }

    // The job A was running is Interrupted, never run again, with one comment saying so.
    eventually(
        "the job is failed as Interrupted",
        Duration::from_secs(60),
        async || {
            let status = jobs.get(&job).await.unwrap().status.unwrap_or_default();
            status.phase == Some(JobPhase::Failed)
                && status.reason.as_deref() == Some("Interrupted")
        },
    )
    .await;
    let bot = gitea.bot().login().to_owned();
    eventually(
        "one comment shows the interruption",
        Duration::from_secs(60),
        async || {
            let comments = gitea_api::comments(&repo, issue).await;
            let ours: Vec<_> = comments.iter().filter(|c| c.author == bot).collect();
            ours.len() == 1 && ours[0].body.contains("failed (Interrupted)")
        },
    )
    .await;
    let status = jobs.get(&job).await.unwrap().status.unwrap();
    let started = status.applied_events.iter().filter(|e| *e == "started");
    assert_eq!(started.count(), 1, "the job ran once");
    let comments = gitea_api::comments(&repo, issue).await;
    assert_eq!(comments.iter().filter(|c| c.author == bot).count(), 1);
    assert!(b.metrics().await.contains("ledgerops_leader 1"));
}

#[tokio::test]
async fn a_stopped_leader_releases_the_lease_and_the_standby_takes_over_at_once() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "leader-stop", demo_with_uncategorised(1)).await;
    let a = replica(&plane, &s, "replica-a", None, None).await;
    wait_holder(&s, "replica-a", Duration::from_secs(30)).await;
    let b = replica(&plane, &s, "replica-b", None, None).await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_standby(&b).await;

    // SIGTERM, as a rolling update sends: A stops its controllers and lets the Lease go.
    let log = a.stop().await;
    assert!(log.contains("released the leader lease"), "{log}");
    let stopped = Instant::now();
    wait_holder(&s, "replica-b", RETRY * 5).await;
    eprintln!(
        "takeover after SIGTERM: {} ms",
        stopped.elapsed().as_millis()
    );

    // B acts: it syncs and writes.
    let spec = json!({"categoryId": category("Groceries")});
    s.create_transaction("after", "household", &load_id(0), spec)
        .await;
    s.wait_transaction("after", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 2);
    assert!(b.metrics().await.contains("ledgerops_leader 1"));
}

/// A pod deleted while it starts gets SIGTERM at any moment of start-up: before, during and just
/// after taking the lease, while the controllers are being set up. Each time the process stops
/// (kube-runtime's own signal handling listened only once a controller was first polled, and a
/// SIGTERM that came before was lost: the process hung until SIGKILL).
#[tokio::test]
async fn a_sigterm_at_any_moment_of_start_up_stops_the_process() {
    let plane = ControlPlane::shared();
    let s = Scenario::new(plane, "early-term", demo_with_uncategorised(0)).await;
    for (i, delay) in [0, 20, 50, 100, 200, 400, 800, 1600]
        .into_iter()
        .enumerate()
    {
        let identity = format!("early-{i}");
        let replica = replica(plane, &s, &identity, None, None).await;
        tokio::time::sleep(Duration::from_millis(delay)).await;
        let start = Instant::now();
        let log = replica.stop().await;
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "SIGTERM {delay} ms after ready: stopped only after {:?}\n{log}",
            start.elapsed()
        );
    }
}
