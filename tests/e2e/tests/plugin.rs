//! `kubectl ledgerops` against the real API server, `ledgerops run` and the YNAB simulator, as
//! the token users: bob (approver) approves in his own name, alice (editor) cannot approve in
//! his, a stale request is refused with exit 2 and nothing written, the queue's order and
//! columns, `-o json` and `-o name`, the confirmation on a pseudo-terminal, its screen captured,
//! an editor's diff (with kubectl diff's exit codes), undo, status, resolve and sync, and
//! kubectl's completion of the plugin through `kubectl_complete-ledgerops`.

use std::io::{Read, Write};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::plan::PlanPhase;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops_e2e::attacker::{approver, editor};
use ledgerops_e2e::controller::{kubectl_with_plugin, plugin_binary};
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, bakery_and_train_plan, category, household};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};

/// How long a test watches for a write that must not happen.
const QUIET: Duration = Duration::from_secs(3);

/// The plugin's arguments as `user`, through the test kubeconfig's context of that name.
fn args_as(user: &str, args: &[&str]) -> Vec<String> {
    let kubeconfig = ControlPlane::shared().kubeconfig().display().to_string();
    let mut all = vec![
        "--kubeconfig".to_owned(),
        kubeconfig,
        "--context".into(),
        user.into(),
    ];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    all
}

/// Runs the plugin as `user` without a terminal.
async fn plugin(user: &str, args: &[&str]) -> Output {
    tokio::process::Command::new(plugin_binary())
        .args(args_as(user, args))
        .stdin(Stdio::null())
        .output()
        .await
        .expect("running kubectl-ledgerops")
}

fn text(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The Pending ApprovalRequest the plan `plan` waits on.
async fn request_of(s: &Scenario, plan: &str) -> String {
    let waiting = s.wait_plan(plan, PlanPhase::AwaitingApproval).await;
    let name = waiting.status.unwrap().approval_request.expect("a request");
    wait_request(s, &name, ApprovalPhase::Pending).await;
    name
}

async fn wait_request(s: &Scenario, name: &str, phase: ApprovalPhase) -> ApprovalRequest {
    wait::until(&s.api::<ApprovalRequest>(), name, WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(phase)
    })
    .await
}

async fn decision_by(s: &Scenario, request: &str) -> Option<String> {
    let r = s.api::<ApprovalRequest>().get(request).await.unwrap();
    r.spec.decision.map(|d| d.by)
}

#[tokio::test]
async fn queue_lists_waiting_requests_oldest_first_with_their_columns_and_json_parses() {
    let s = household(
        "plugin-queue",
        json!({"approval": {"escalateTo": ["finance-manager"]}}),
    )
    .await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    s.create_plan("first", "household", bakery_and_train_plan())
        .await;
    let first = request_of(&s, "first").await;
    // creationTimestamp counts seconds: the second request must be visibly younger.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let hobby =
        json!({"assignments": [{"transactionId": "tx-044", "categoryId": category("Hobbies")}]});
    s.create_plan("second", "household", hobby).await;
    let second = request_of(&s, "second").await;

    let (code, out, err) = text(&plugin("bob", &["queue", "-n", &s.ns]).await);
    println!("$ kubectl ledgerops queue -n {}\n{out}", s.ns);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let header: Vec<&str> = lines[0]
        .split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "NAME",
            "SUBJECT",
            "SUMMARY",
            "TOTAL",
            "CHANGES",
            "AGE",
            "EXPIRES",
            "ESCALATES TO"
        ]
    );
    for (line, name, subject, total, count) in [
        (lines[1], &first, "CategorizationPlan/first", "53.40", "2"),
        (lines[2], &second, "CategorizationPlan/second", "", "1"),
    ] {
        assert!(line.starts_with(name.as_str()), "oldest first: {out}");
        // 24h of expiry, less the seconds the test took.
        for cell in [subject, total, count, "   in 2", "finance-manager"] {
            assert!(line.contains(cell), "{cell:?} in {line}");
        }
    }
    assert!(
        !out.contains('\x1b'),
        "no colour without a terminal: {out:?}"
    );

    let (code, out, err) = text(&plugin("bob", &["queue", "-n", &s.ns, "-o", "json"]).await);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("-o json is JSON");
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, [first.as_str(), second.as_str()]);
    assert_eq!(rows[0]["total"], "53.40");
    assert_eq!(rows[0]["changeCount"], 2);
    assert_eq!(rows[0]["subject"], "CategorizationPlan/first");
    assert_eq!(rows[0]["escalateTo"], json!(["finance-manager"]));

    let (code, out, err) = text(&plugin("admin", &["queue", "-A"]).await);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAMESPACE"), "{out}");
    let ours: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with(&format!("{} ", s.ns)))
        .collect();
    assert_eq!(ours.len(), 2, "{out}");
    assert!(
        ours[0].contains(&first) && ours[1].contains(&second),
        "{out}"
    );
}

#[tokio::test]
async fn approve_as_bob_through_kubectl_records_bob_and_prints_the_operation() {
    let s = household("plugin-approve", json!({"writes": {"enabled": true}})).await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;

    let (code, out, err) = text(&plugin("bob", &["show", &request, "-n", &s.ns]).await);
    println!("$ kubectl ledgerops show {request}\n{out}");
    assert_eq!(code, 0, "{err}");
    for want in [
        format!("ApprovalRequest {request} (Pending, expires in 2"),
        "Subject: CategorizationPlan/september   Budget: household".into(),
        "\"CB BOULANGERIE DU PORT FACT 160926 525130******1\"".into(),
        "(uncategorized) → Groceries".into(),
        "2 to change, 53.40 moved, 0 unchanged".into(),
    ] {
        assert!(out.contains(&want), "{want:?} in {out}");
    }

    // As a person runs it: kubectl finds the plugin on PATH.
    let run = kubectl_with_plugin(ControlPlane::shared())
        .args([
            "ledgerops",
            "--context",
            "bob",
            "approve",
            &request,
            "-n",
            &s.ns,
        ])
        .args(["--yes", "-m", "looks right"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let (code, out, err) = text(&run);
    println!(
        "$ kubectl ledgerops --context bob approve {request} --yes -m 'looks right'\n{out}{err}"
    );
    assert_eq!(code, 0, "{out}{err}");
    let applied = s.wait_plan("september", PlanPhase::Applied).await;
    let operation = applied.status.unwrap().operation_id.unwrap();
    assert!(
        out.contains(&format!("Approved ApprovalRequest {request} as bob.")),
        "{out}"
    );
    assert!(
        out.contains(&format!("Applied: operation {operation}")),
        "{out}"
    );
    let decided = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    let decision = decided.spec.decision.unwrap();
    assert_eq!(
        (decision.by.as_str(), decision.comment.as_deref()),
        ("bob", Some("looks right"))
    );

    // Decided once: asking again is refused with the reason, exit 2.
    let (code, _, err) = text(&plugin("bob", &["approve", &request, "-n", &s.ns, "--yes"]).await);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("was already approved by bob"), "{err}");
}

#[tokio::test]
async fn alice_cannot_approve_in_bobs_name_through_the_plugin() {
    let s = household("plugin-alice", json!({})).await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    ControlPlane::shared()
        .kubectl_ok(&[
            "create",
            "rolebinding",
            "alice-approver",
            "-n",
            &s.ns,
            "--clusterrole=ledgerops-approver",
            "--user=alice",
        ])
        .unwrap();
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;

    let args = [
        "approve", &request, "-n", &s.ns, "--yes", "--wait", "0s", "--as", "bob",
    ];
    let (code, out, err) = text(&plugin("alice", &args).await);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("--as needs the right to impersonate") && err.contains("leave out --as"),
        "{err}"
    );
    assert!(!err.contains("{\""), "no raw Status object: {err}");
    assert_eq!(decision_by(&s, &request).await, None, "nothing recorded");

    // Without --as the plugin records who alice is, never anyone else.
    let (code, out, err) = text(&plugin("alice", &args[..7]).await);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("as alice"), "{out}");
    assert_eq!(decision_by(&s, &request).await.as_deref(), Some("alice"));
}

#[tokio::test]
async fn approving_a_stale_request_exits_2_and_writes_nothing() {
    let s = household("plugin-stale", json!({"writes": {"enabled": true}})).await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let first = request_of(&s, "september").await;
    s.add_assignment("september", "tx-044", "Hobbies").await;
    wait_request(&s, &first, ApprovalPhase::Stale).await;

    let (code, out, err) = text(&plugin("bob", &["approve", &first, "-n", &s.ns, "--yes"]).await);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!("ApprovalRequest {first} is Stale")),
        "{err}"
    );
    assert!(
        err.contains("kubectl ledgerops queue"),
        "says what to do: {err}"
    );
    assert_eq!(decision_by(&s, &first).await, None);
    tokio::time::sleep(QUIET).await;
    assert_eq!(s.writes().await, 0, "a stale request wrote to YNAB");
}

#[tokio::test]
async fn approve_asks_on_a_terminal_and_writes_only_after_yes() {
    let s = household("plugin-tty", json!({"writes": {"enabled": true}})).await;
    approver(ControlPlane::shared(), &s.ns, "bob").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;
    let args = args_as(
        "bob",
        &["approve", &request, "-n", &s.ns, "-m", "on a terminal"],
    );

    let (code, screen) = on_terminal(args.clone(), "n").await;
    println!("screen after n:\n{screen}");
    assert_eq!(code, 2, "{screen}");
    let plain = strip_colour(&screen);
    for want in [
        "\"CB BOULANGERIE DU PORT FACT 160926 525130******1\"".to_owned(),
        "(uncategorized) → Groceries".into(),
        format!("Approve ApprovalRequest {request} as bob? [y/N] n"),
        "not approved: you did not answer y".into(),
    ] {
        assert!(plain.contains(&want), "{want:?} on {plain}");
    }
    assert!(
        screen.contains("\x1b[1m"),
        "a terminal gets colour: {screen:?}"
    );
    assert_eq!(decision_by(&s, &request).await, None);
    assert_eq!(s.writes().await, 0);

    let (code, screen) = on_terminal(args, "y").await;
    println!("screen after y:\n{screen}");
    assert_eq!(code, 0, "{screen}");
    let plain = strip_colour(&screen);
    assert!(
        plain.contains(&format!("Approved ApprovalRequest {request} as bob.")),
        "{plain}"
    );
    assert!(plain.contains("Applied: operation "), "{plain}");
    assert_eq!(decision_by(&s, &request).await.as_deref(), Some("bob"));
    assert_eq!(s.writes().await, 1);
}

#[tokio::test]
async fn diff_undo_status_resolve_and_sync_as_an_editor_uses_them() {
    let writes = json!({
        "writes": {"enabled": true},
        "approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}
    });
    let s = household("plugin-more", writes).await;
    editor(ControlPlane::shared(), &s.ns, "alice").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::Applied).await;

    let (code, out, err) = text(&plugin("alice", &["diff", "september", "-n", &s.ns]).await);
    println!("$ kubectl ledgerops diff september\n{out}");
    assert_eq!(code, 0, "applied: nothing left to change. {err}");
    assert!(
        out.contains("Groceries") && out.contains("Transport"),
        "{out}"
    );
    assert!(out.contains("No difference: the plan is Applied"), "{out}");

    // undo creates the reverting plan and shows what it would change.
    let (code, out, err) = text(&plugin("alice", &["undo", "september", "-n", &s.ns]).await);
    println!("$ kubectl ledgerops undo september\n{out}");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("undo-september"), "{out}");
    assert!(out.contains("Groceries"), "{out}");
    s.wait_plan("undo-september", PlanPhase::Applied).await;
    assert_eq!(s.ynab_category("tx-048").await, None);
    assert_eq!(s.requests(PATCH).await, 2);

    // A Transaction someone recategorised in YNAB: status shows it, resolve keeps theirs.
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    s.recategorise_in_ynab("tx-048", "Restaurants").await;
    s.wait_transaction("bakery", TransactionPhase::Diverged)
        .await;
    let (code, out, err) = text(&plugin("alice", &["status", "-n", &s.ns]).await);
    println!("$ kubectl ledgerops status\n{out}");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("household"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("bakery") && l.contains("Diverged")),
        "{out}"
    );
    let (code, out, err) =
        text(&plugin("alice", &["resolve", "bakery", "theirs", "-n", &s.ns]).await);
    assert_eq!(code, 0, "{out}{err}");
    let kept = s.api::<Transaction>().get("bakery").await.unwrap();
    assert!(
        kept.metadata
            .annotations
            .is_none_or(|a| !a.contains_key("ledgerops.dev/resolve")),
        "handled"
    );
    assert_eq!(
        s.ynab_category("tx-048").await,
        Some(category("Restaurants"))
    );

    let (code, out, err) = text(&plugin("alice", &["sync", "household", "-n", &s.ns]).await);
    assert_eq!(code, 0, "{out}{err}");
    // Nothing above wrote YNAB but the plan, its undo and the bakery's first write.
    assert_eq!(s.requests(PATCH).await, 3);

    // resolve on a Transaction that is not Diverged is refused, exit 2.
    let (code, _, err) = text(&plugin("alice", &["resolve", "bakery", "ours", "-n", &s.ns]).await);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not Diverged"), "{err}");
}

#[tokio::test]
async fn diff_exits_as_kubectl_diff_names_print_as_kubectl_get_and_kubectl_completes_the_plugin() {
    let s = household("plugin-diff", json!({})).await;
    editor(ControlPlane::shared(), &s.ns, "alice").await;
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    let request = request_of(&s, "september").await;

    // Something would change: 1, as kubectl diff says "different".
    let (code, out, err) = text(&plugin("alice", &["diff", "september", "-n", &s.ns]).await);
    println!("$ kubectl ledgerops diff september\n{out}");
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("(uncategorized) → Groceries"), "{out}");
    assert!(out.ends_with("\n2 transactions would change.\n"), "{out}");
    // An error is never 1, which would read as "different".
    let (code, _, err) = text(&plugin("alice", &["diff", "no-such-plan", "-n", &s.ns]).await);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-plan"), "{err}");
    let (code, _, err) = text(&plugin("alice", &["diff"]).await);
    assert_eq!(code, 2, "a usage error: {err}");

    // -o name prints what kubectl get prints, and kubectl takes it back.
    let (code, out, err) = text(&plugin("alice", &["queue", "-n", &s.ns, "-o", "name"]).await);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("approvalrequest.ledgerops.dev/{request}\n"));
    let got = ControlPlane::shared()
        .kubectl_ok(&["get", out.trim(), "-n", &s.ns, "-o", "name"])
        .unwrap();
    assert_eq!(got, out);
    let (code, out, err) =
        text(&plugin("alice", &["diff", "september", "-n", &s.ns, "-o", "name"]).await);
    assert_eq!(
        (code, out.as_str()),
        (1, "categorizationplan.ledgerops.dev/september\n"),
        "{err}"
    );

    // kubectl completes `kubectl ledgerops` by running kubectl_complete-ledgerops from PATH,
    // with the names from the cluster the typed flags name.
    let complete = async |words: &[&str]| {
        let run = kubectl_with_plugin(ControlPlane::shared())
            .args(["__complete", "ledgerops"])
            .args(words)
            .output()
            .await
            .unwrap();
        let (code, out, err) = text(&run);
        assert_eq!(code, 0, "{out}{err}");
        println!("$ kubectl __complete ledgerops {}\n{out}", words.join(" "));
        out
    };
    let out = complete(&["ap"]).await;
    assert!(
        out.starts_with("apply\t") && out.contains("\napprove\t"),
        "{out}"
    );
    let out = complete(&["--context", "alice", "-n", &s.ns, "approve", ""]).await;
    assert!(
        out.contains(&format!("{request}\tCategorizationPlan/september\n")),
        "{out}"
    );
    assert!(out.ends_with(":4\n"), "no file names: {out}");
    let out = complete(&["diff", "-n", &s.ns, "sep"]).await;
    assert!(out.starts_with("september\t"), "{out}");
    let out = complete(&["queue", "-n", "plugin-di"]).await;
    assert!(out.contains(&format!("{}\n", s.ns)), "{out}");
}

/// Runs the plugin with `args` on a new pseudo-terminal, answers `answer` once it asks, and
/// returns its exit code and everything the terminal showed.
async fn on_terminal(args: Vec<String>, answer: &'static str) -> (i32, String) {
    let run = move || {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pty");
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let terminal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let mut child = std::process::Command::new(plugin_binary())
            .args(&args)
            .env_remove("NO_COLOR")
            .stdin(terminal.try_clone().unwrap())
            .stdout(terminal.try_clone().unwrap())
            .stderr(terminal)
            .spawn()
            .expect("starting kubectl-ledgerops");
        let mut master = std::fs::File::from(master);
        let screen = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let (mut master, screen) = (master.try_clone().unwrap(), screen.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                // Reading ends with EIO once the plugin has exited and closed the terminal.
                while let Ok(n @ 1..) = master.read(&mut buf) {
                    screen.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            })
        };
        let start = Instant::now();
        while !String::from_utf8_lossy(&screen.lock().unwrap()).contains("[y/N] ") {
            assert!(
                start.elapsed() < WAIT,
                "the plugin never asked: {}",
                String::from_utf8_lossy(&screen.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        master.write_all(format!("{answer}\r").as_bytes()).unwrap();
        let status = child.wait().unwrap();
        reader.join().unwrap();
        let shown = String::from_utf8_lossy(&screen.lock().unwrap()).into_owned();
        (status.code().unwrap_or(-1), shown)
    };
    tokio::task::spawn_blocking(run).await.unwrap()
}

/// The screen without ANSI colour sequences.
fn strip_colour(screen: &str) -> String {
    let mut out = String::new();
    let mut chars = screen.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for end in chars.by_ref() {
                if end == 'm' {
                    break;
                }
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

#[tokio::test]
async fn apply_proposes_in_the_senders_own_name() {
    let s = household("plugin-apply", json!({"writes": {"enabled": true}})).await;
    editor(ControlPlane::shared(), &s.ns, "alice").await;
    let file = ledgerops_e2e::example("categorization-plan.yaml");
    let file = file.to_str().unwrap();

    // Plain kubectl apply names nobody: admission refuses it, saying what to set.
    let refused = ControlPlane::shared()
        .kubectl_ok(&["--context", "alice", "apply", "-n", &s.ns, "-f", file])
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("ledgerops.dev/proposed-by") && refused.contains("\"alice\""),
        "{refused}"
    );
    // The plugin stamps the sender.
    let (code, out, err) = text(&plugin("alice", &["apply", "-n", &s.ns, "-f", file]).await);
    println!("$ kubectl ledgerops apply -f examples/categorization-plan.yaml\n{out}");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("categorizationplan.ledgerops.dev/september-cleanup applied")
            && out.contains("proposed by alice"),
        "{out}"
    );
    let plan = s
        .api::<ledgerops::api::plan::CategorizationPlan>()
        .get("september-cleanup")
        .await
        .unwrap();
    assert_eq!(
        plan.metadata.annotations.unwrap()[ledgerops::api::common::PROPOSED_BY],
        "alice"
    );
    let request = request_of(&s, "september-cleanup").await;
    let stored = s.api::<ApprovalRequest>().get(&request).await.unwrap();
    assert_eq!(stored.spec.proposed_by, ["alice"]);

    // Anything but what ledgerops proposes is refused before anything is sent.
    let secret = ledgerops_e2e::example("admission-params.yaml");
    let (code, _, err) = text(
        &plugin(
            "alice",
            &["apply", "-n", &s.ns, "-f", secret.to_str().unwrap()],
        )
        .await,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("v1 ConfigMap is not something"), "{err}");
    assert_eq!(s.writes().await, 0);
}
