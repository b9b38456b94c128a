//! Item 6 of issue 9: a token goes only to an allowed API URL, only from a Secret that opted in,
//! and nothing an outside server answers reaches a Budget's status or Events.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::attacker::{attacker, owner};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category, token_secret};
use ledgerops_e2e::stranger::Listener;
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use ynab_sim::{RequestMatch, StatusFault, demo};

async fn world(prefix: &str) -> (Scenario, Client) {
    let plane = ControlPlane::shared();
    let s = Scenario::new(plane, prefix, demo::generate()).await;
    Ledgerops::shared().await;
    // An owner (she governs Budgets) and more, who still cannot read the household's Secrets.
    let alice = attacker(plane, &s.ns, "alice").await;
    owner(plane, &s.ns, "alice").await;
    (s, alice)
}

/// A Budget on the demo plan as `client` creates it.
async fn create_budget(client: &Client, ns: &str, name: &str, secret: Value, api_url: &str) {
    let budget: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": name, "annotations": {PROPOSED_BY: "alice"}},
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": secret, "apiUrl": api_url}
    }))
    .unwrap();
    Api::<Budget>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &budget)
        .await
        .unwrap_or_else(|e| panic!("creating Budget {name}: {e}"));
}

/// The Budget's `Ready` reason and message once it has the reason `reason`.
async fn refused(s: &Scenario, name: &str, reason: &str) -> String {
    let budget = wait::until(&s.api::<Budget>(), name, WAIT, |b| {
        b.status
            .as_ref()
            .and_then(|st| conditions::get(&st.conditions, "Ready"))
            .is_some_and(|c| c.reason == reason)
    })
    .await;
    let status = budget.status.unwrap();
    assert_eq!(status.phase, Some(BudgetPhase::Unauthorized), "{name}");
    let ready = conditions::get(&status.conditions, "Ready").unwrap();
    assert_eq!(ready.status, "False", "{name}");
    ready.message.clone()
}

/// Every text of the Events about Budget `name`, waiting until there is at least one.
async fn event_texts(s: &Scenario, name: &str) -> String {
    let api = s.api::<Event>();
    for _ in 0..100 {
        let texts: Vec<String> = api
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .map(|e| {
                let reason = e.reason.unwrap_or_default();
                format!("{reason}: {}", e.note.unwrap_or_default())
            })
            .collect();
        if !texts.is_empty() {
            return texts.join("\n");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no Event about Budget {name}");
}

async fn writes(s: &Scenario) -> u64 {
    let counters = s.sim.control().counters().await.unwrap();
    counters
        .by_endpoint
        .iter()
        .filter(|(endpoint, _)| {
            ["POST ", "PUT ", "PATCH "]
                .iter()
                .any(|m| endpoint.starts_with(m))
        })
        .map(|(_, n)| n)
        .sum()
}

#[tokio::test]
async fn a_secret_that_did_not_opt_in_is_never_sent() {
    let (s, alice) = world("sec-optin").await;
    let listener = Listener::start("200 OK", "{}");
    let api_url = format!("http://127.0.0.1:{}/v1", listener.port);
    // Someone else's database password, in the namespace alice edits.
    let db: Secret = serde_json::from_value(json!({
        "metadata": {"name": "db-creds"}, "stringData": {"password": "db-password-9b1f"}
    }))
    .unwrap();
    s.api::<Secret>()
        .create(&PostParams::default(), &db)
        .await
        .unwrap();
    // A label that only looks like the opt-in.
    let almost: Secret = serde_json::from_value(json!({
        "metadata": {"name": "almost", "labels": {"ledgerops.dev/ynab-token": "True"}},
        "stringData": {"token": "almost-password-51c2"}
    }))
    .unwrap();
    s.api::<Secret>()
        .create(&PostParams::default(), &almost)
        .await
        .unwrap();

    let cases = [
        (
            "steal-db",
            json!({"name": "db-creds", "key": "password"}),
            "db-creds",
        ),
        ("steal-almost", json!({"name": "almost"}), "almost"),
    ];
    for (budget, secret, _) in &cases {
        create_budget(&alice, &s.ns, budget, secret.clone(), &api_url).await;
    }
    for (budget, _, secret) in &cases {
        let message = refused(&s, budget, "TokenNotOptedIn").await;
        for needle in [*secret, "ledgerops.dev/ynab-token=true", "nothing was sent"] {
            assert!(message.contains(needle), "{budget}: {message}");
        }
        let events = event_texts(&s, budget).await;
        assert!(events.contains("TokenNotOptedIn"), "{events}");
    }
    assert_eq!(
        listener.connections(),
        0,
        "the stranger's server was reached"
    );
    assert!(!listener.saw("password"));
    assert_eq!(s.total_requests().await, 0);
    assert_eq!(writes(&s).await, 0);

    // An empty or blank token, even opted in, is not sent either.
    for (name, value) in [("blank", "  \n"), ("spaced", "two words")] {
        s.api::<Secret>()
            .create(&PostParams::default(), &token_secret(name, value))
            .await
            .unwrap();
        create_budget(&alice, &s.ns, name, json!({"name": name}), &api_url).await;
        let message = refused(&s, name, "TokenMissing").await;
        assert!(message.contains(name), "{message}");
    }
    assert_eq!(listener.connections(), 0);
}

#[tokio::test]
async fn a_token_never_goes_to_an_api_url_off_the_allowlist() {
    let (s, alice) = world("sec-url").await;
    s.api::<Secret>()
        .create(&PostParams::default(), &token_secret("ynab", demo::TOKEN))
        .await
        .unwrap();
    let listener = Listener::start("200 OK", "{}");
    let port = listener.port;
    // The test allowlist is `http://127.0.0.1:*/v1`; every one of these reaches the listener.
    let cases = [
        ("other-host-form", format!("http://localhost:{port}/v1")),
        (
            "outside-the-path",
            format!("http://127.0.0.1:{port}/elsewhere"),
        ),
        (
            "dot-dot",
            format!("http://127.0.0.1:{port}/v1/../elsewhere"),
        ),
        (
            "user-info",
            format!("http://127.0.0.1:{port}@localhost:{port}/v1"),
        ),
        ("prefix-only", format!("http://127.0.0.1:{port}/v10")),
    ];
    for (name, url) in &cases {
        create_budget(&alice, &s.ns, name, json!({"name": "ynab"}), url).await;
    }
    // The URL is checked before the Secret is read: a missing Secret is not even looked up.
    let unread = format!("http://localhost:{port}/v1");
    create_budget(
        &alice,
        &s.ns,
        "no-secret",
        json!({"name": "absent"}),
        &unread,
    )
    .await;

    for (name, url) in cases.iter().chain([&("no-secret", unread.clone())]) {
        let message = refused(&s, name, "ApiUrlNotAllowed").await;
        for needle in [url.as_str(), "--ynab-api-url-allow"] {
            assert!(message.contains(needle), "{name}: {message}");
        }
    }
    assert_eq!(listener.connections(), 0, "a token left for a stranger");
    assert_eq!(s.total_requests().await, 0);
    assert_eq!(writes(&s).await, 0);
}

#[tokio::test]
async fn a_write_never_follows_a_changed_api_url() {
    let (s, alice) = world("sec-write").await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let listener = Listener::start("200 OK", "{}");
    let elsewhere = format!("http://localhost:{}/v1", listener.port);

    // Alice, an owner, moves the synced Budget to her server (in her own name), then declares a
    // write that needs no approval.
    let budgets = Api::<Budget>::namespaced(alice.clone(), &s.ns);
    let moved = json!({"metadata": {"annotations": {PROPOSED_BY: "admin,alice"}},
                       "spec": {"apiUrl": elsewhere}});
    budgets
        .patch("household", &PatchParams::default(), &Patch::Merge(&moved))
        .await
        .unwrap();
    let message = refused(&s, "household", "ApiUrlNotAllowed").await;
    assert!(message.contains(&elsewhere), "{message}");
    let tx: Transaction = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
        "metadata": {"name": "move", "annotations": {PROPOSED_BY: "alice"}},
        "spec": {"budgetRef": {"name": "household"}, "transactionId": "tx-048",
                 "categoryId": category("Groceries")}
    }))
    .unwrap();
    Api::<Transaction>::namespaced(alice.clone(), &s.ns)
        .create(&PostParams::default(), &tx)
        .await
        .unwrap();
    let pending = s.wait_transaction("move", TransactionPhase::Pending).await;
    let waiting = conditions::get(&pending.status.unwrap().conditions, "Converged")
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(waiting.contains("Waiting"), "{waiting}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(listener.connections(), 0, "the token followed the new URL");
    assert_eq!(s.requests(PATCH).await, 0);
    assert_eq!(writes(&s).await, 0);

    // The control: back on the simulator, the same write goes out once.
    let back = json!({"metadata": {"annotations": {PROPOSED_BY: "admin,alice"}},
                      "spec": {"apiUrl": s.sim.api_url()}});
    budgets
        .patch("household", &PatchParams::default(), &Patch::Merge(&back))
        .await
        .unwrap();
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.annotate::<Transaction>("move", "ledgerops.dev/poke", "1")
        .await;
    s.wait_transaction("move", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(listener.connections(), 0);
}

#[tokio::test]
async fn an_outside_body_never_reaches_status_or_events() {
    let (s, alice) = world("sec-body").await;
    let marker = "MARKER-c0ffee";
    Api::<Secret>::namespaced(alice.clone(), &s.ns)
        .create(&PostParams::default(), &token_secret("ynab", demo::TOKEN))
        .await
        .unwrap();

    // The simulator answers YNAB's error format, with the marker in `detail`.
    // Every attempt fails, however often the Budget is looked at while the test runs.
    let fault = StatusFault {
        status: 500,
        count: 1000,
        detail: Some(format!("{marker} <!-- @bob --> \u{1b}[31m")),
        only: RequestMatch::default(),
    };
    s.sim.control().inject_status(&fault).await.unwrap();
    create_budget(
        &alice,
        &s.ns,
        "sim",
        json!({"name": "ynab"}),
        &s.sim.api_url(),
    )
    .await;
    // A server of alice's answers 500 with a body of her own, and 200 with a body that does
    // not parse (a JSON parser's message would quote it).
    let loud = Listener::start(
        "500 Internal Server Error",
        &format!("{marker} stack trace\n\u{1b}[2J"),
    );
    let odd = Listener::start("200 OK", &format!(r#"{{"data": "{marker}"}}"#));
    for (name, listener) in [("loud", &loud), ("odd", &odd)] {
        let url = format!("http://127.0.0.1:{}/v1", listener.port);
        create_budget(&alice, &s.ns, name, json!({"name": "ynab"}), &url).await;
    }

    let cases = [
        ("sim", "HTTP 500, YNAB error 500 internal_server_error"),
        ("loud", "HTTP 500"),
        ("odd", "did not parse"),
    ];
    for (name, summary) in cases {
        let budget = wait::until(&s.api::<Budget>(), name, WAIT, |b| {
            b.status.as_ref().and_then(|st| st.phase) == Some(BudgetPhase::Unreachable)
        })
        .await;
        let status = serde_json::to_string(&budget.status).unwrap();
        assert!(status.contains(summary), "{name}: {status}");
        let events = event_texts(&s, name).await;
        for shown in [&status, &events] {
            for leaked in [marker, "stack trace", "@bob", "\u{1b}", "\\u001b"] {
                assert!(
                    !shown.contains(leaked),
                    "{name} repeats {leaked:?}: {shown}"
                );
            }
        }
    }
    assert!(loud.connections() > 0 && odd.connections() > 0);
    assert_eq!(writes(&s).await, 0);
}

#[test]
fn a_loose_allowlist_entry_stops_the_controller_at_start() {
    let binary = ledgerops_e2e::controller::binary();
    for entry in [
        "https://user@api.ynab.com/v1",
        "https://api.ynab.com/v1/../v2",
        "ftp://api.ynab.com/v1",
        "http://*:*/v1",
    ] {
        let out = std::process::Command::new(binary)
            .args([
                "run",
                "--listen",
                "127.0.0.1:0",
                "--ynab-api-url-allow",
                entry,
            ])
            .env("KUBECONFIG", "/nonexistent")
            .output()
            .expect("running ledgerops");
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{entry}: {log}");
        assert!(
            log.contains("--ynab-api-url-allow") && log.contains(entry),
            "{entry}: {log}"
        );
    }
}
