//! The plugin's day-two commands on a real API server. `check`: where ledgerops runs (the shared
//! plane with its CRDs, policies, controller and a synced Budget) all is well and it says what
//! you may do; on a cluster without ledgerops it fails with the CRDs' and the policies' bits and
//! says what to install. `queue --watch` prints the queue again as it changes. `suspend` and
//! `resume`: governed, refused an editor with the role it
//! needs and nothing changed, done by an owner in their name.

use std::path::Path;
use std::process::Output;

use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops_e2e::attacker::{approver, editor, owner};
use ledgerops_e2e::controller::plugin_binary;
use ledgerops_e2e::scenario::{WAIT, bakery_and_train_plan, household};
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::ChildStdout;

/// The workspace's version: the plugin's and the controller's.
const VERSION: &str = env!("CARGO_PKG_VERSION");

async fn check(kubeconfig: &Path, args: &[&str]) -> Output {
    plugin(kubeconfig, &[&["check"], args].concat()).await
}

async fn plugin(kubeconfig: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(plugin_binary())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .await
        .expect("running kubectl-ledgerops")
}

fn messages(json: &Value, level: &str) -> Vec<String> {
    json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["level"] == level)
        .map(|f| f["message"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn where_ledgerops_runs_check_says_all_is_well_and_what_you_may_do() {
    let s = household("plugin-check", json!({})).await;
    let plane = ControlPlane::shared();
    // A cluster admin sees everything.
    let out = check(plane.kubeconfig(), &["--context", "admin", "-n", &s.ns]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ledgerops can work here."), "{stdout}");
    for line in [
        "all 7 CRDs installed as this version ships them",
        "admission policies and",
        "bindings in force; the controller is admin",
        "the controller runs: each of the 1 Budgets here synced within its interval",
        &format!("the controller's version is this plugin's ({VERSION})"),
    ] {
        assert!(stdout.contains(line), "{line:?} in\n{stdout}");
    }
    let version = plugin(
        plane.kubeconfig(),
        &["--context", "admin", "-n", &s.ns, "version", "-o", "json"],
    )
    .await;
    let parsed: Value = serde_json::from_slice(&version.stdout).expect("JSON");
    assert_eq!(parsed["plugin"], VERSION);
    assert_eq!(parsed["controller"], json!([VERSION]));
    assert_eq!(
        parsed["crds"],
        "all 7 CRDs installed as this version ships them"
    );
    // Without a cluster at all: the plugin's own.
    let client = plugin(Path::new("/nonexistent"), &["version", "--client"]).await;
    assert_eq!(client.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&client.stdout),
        format!("plugin   {VERSION}\n")
    );
    // An approver's rights do not reach the cluster-scoped objects: said once, not a failure.
    approver(plane, &s.ns, "bob").await;
    editor(plane, &s.ns, "alice").await;
    let bob = check(
        plane.kubeconfig(),
        &["--context", "bob", "-n", &s.ns, "-o", "json"],
    )
    .await;
    let parsed: Value = serde_json::from_slice(&bob.stdout).expect("JSON");
    assert_eq!(bob.status.code(), Some(0), "{parsed}");
    let ok = messages(&parsed, "Ok");
    for line in [
        "you may approve (approve approvalrequests) here",
        "you may not govern (govern budgets) here",
    ] {
        assert!(ok.iter().any(|m| m == line), "{line:?} in {ok:#?}");
    }
    let warned = messages(&parsed, "Warn");
    assert!(
        warned
            .iter()
            .any(|m| m.starts_with("cannot check 7 object(s) with your rights, e.g. CRD")),
        "{warned:#?}"
    );
    let alice = check(
        plane.kubeconfig(),
        &["--context", "alice", "-n", &s.ns, "-o", "json"],
    )
    .await;
    let parsed: Value = serde_json::from_slice(&alice.stdout).expect("JSON");
    assert!(
        messages(&parsed, "Ok")
            .iter()
            .any(|m| m == "you may not approve (approve approvalrequests) here"),
        "alice proposes, she does not approve: {parsed}"
    );
}

#[tokio::test]
async fn on_a_cluster_without_ledgerops_check_fails_and_says_what_to_install() {
    let plane = ControlPlane::start().await.unwrap();
    let out = check(plane.kubeconfig(), &["-o", "json"]).await;
    // 8 (CRDs) + 16 (policies); whether a controller runs cannot be told (no Lease, no Budget).
    assert_eq!(
        out.status.code(),
        Some(24),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let failed = messages(&parsed, "Fail");
    assert!(
        failed
            .iter()
            .any(|m| m.starts_with("CRD budgets.ledgerops.dev is not installed")),
        "{failed:#?}"
    );
    assert!(
        failed
            .iter()
            .any(|m| m.contains("ConfigMap ledgerops-system/ledgerops-admission")),
        "{failed:#?}"
    );
    assert!(
        failed
            .iter()
            .all(|m| m.contains("helm upgrade --install ledgerops")
                && m.contains("ledgerops crdgen")),
        "each failure says what to install: {failed:#?}"
    );
    assert_eq!(
        messages(&parsed, "Warn")
            .iter()
            .filter(|m| m.starts_with("cannot tell whether the controller runs"))
            .count(),
        1,
        "{parsed}"
    );
    let table = check(plane.kubeconfig(), &[]).await;
    let stdout = String::from_utf8_lossy(&table.stdout);
    assert!(
        stdout.contains("ledgerops cannot work here until the FAIL lines are fixed."),
        "{stdout}"
    );
}

#[tokio::test]
async fn suspend_and_resume_are_an_owners_and_said_so_to_an_editor() {
    let s = household("plugin-suspend", json!({"writes": {"enabled": true}})).await;
    let plane = ControlPlane::shared();
    editor(plane, &s.ns, "alice").await;
    owner(plane, &s.ns, "carol").await;
    let as_user = |user: &'static str, verb: &'static str| {
        let ns = s.ns.clone();
        async move {
            plugin(
                plane.kubeconfig(),
                &["--context", user, "-n", &ns, verb, "budget", "household"],
            )
            .await
        }
    };
    let writes = s.writes().await;

    let refused = as_user("alice", "suspend").await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("govern") && stderr.contains("ledgerops-owner"),
        "says which role it needs: {stderr}"
    );
    let budget = s.api::<Budget>().get("household").await.unwrap();
    assert!(!budget.spec.suspend, "nothing changed");

    let done = as_user("carol", "suspend").await;
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(
        String::from_utf8_lossy(&done.stdout).contains("budget.ledgerops.dev/household suspended")
    );
    let suspended = s.wait_budget("household", BudgetPhase::Suspended).await;
    let lineage = &suspended.metadata.annotations.as_ref().unwrap()[PROPOSED_BY];
    assert!(lineage.split(',').any(|p| p.trim() == "carol"), "{lineage}");
    let again = as_user("carol", "suspend").await;
    assert!(String::from_utf8_lossy(&again.stdout).contains("already suspended"));

    let resumed = as_user("carol", "resume").await;
    assert_eq!(resumed.status.code(), Some(0));
    s.wait_budget("household", BudgetPhase::Ready).await;
    assert_eq!(
        s.writes().await,
        writes,
        "suspending writes nothing to YNAB"
    );
}

/// Reads `lines` until one contains `text`, at most [`WAIT`]; all read so far on failure.
async fn until_line(lines: &mut Lines<BufReader<ChildStdout>>, text: &str, seen: &mut String) {
    let found = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(text) {
                return true;
            }
        }
        false
    })
    .await;
    assert!(
        found == Ok(true),
        "{text:?} never printed; printed:\n{seen}"
    );
}

#[tokio::test]
async fn queue_watch_prints_the_queue_again_as_requests_come_and_are_decided() {
    let s = household("plugin-watch", json!({})).await;
    let plane = ControlPlane::shared();
    approver(plane, &s.ns, "bob").await;
    let mut watching = tokio::process::Command::new(plugin_binary())
        .arg("--kubeconfig")
        .arg(plane.kubeconfig())
        .args(["--context", "bob", "-n", &s.ns, "queue", "--watch"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("running kubectl-ledgerops");
    let mut lines = BufReader::new(watching.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    until_line(&mut lines, "No ApprovalRequest waits", &mut seen).await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = s.plan_request("september").await;
    until_line(&mut lines, &request, &mut seen).await;
    s.decide(&request, "Reject", "not now").await;
    until_line(&mut lines, "No ApprovalRequest waits", &mut seen).await;
    assert!(
        watching.try_wait().unwrap().is_none(),
        "it keeps watching: {seen}"
    );
    watching.kill().await.unwrap();
}
