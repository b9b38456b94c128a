//! The local demo: a private Kubernetes control plane set up as a cluster should be (the CRDs, the
//! admission policies naming the controller's user, the people roles with `alice` as editor,
//! `bob` as approver and `carol` as owner), the YNAB simulator loaded with the demo household
//! plan, and `ledgerops run`; then carol declares the Budget, alice's try to loosen it is
//! refused, alice proposes seed 002's plan, her tries to approve it (in bob's name, then in her
//! own) are refused, bob approves with `kubectl ledgerops approve`, and the plan is written to
//! YNAB in one request.
//!
//! `cargo run -p ledgerops-e2e --bin demo` (`--keep` leaves everything running until Ctrl-C)
//!
//! This binary is also the controller, the plugin and its completer, when started as `ledgerops`,
//! `kubectl-ledgerops` or `kubectl_complete-ledgerops` (see `ledgerops_e2e::controller`): the
//! demo and the suites run one build of each, the one cargo made with them.

use std::process::ExitCode;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops_e2e::controller::{Invoked, Ledgerops, invoked, kubectl_with_plugin};
use ledgerops_e2e::scenario::{Scenario, granted_token_secret};
use ledgerops_e2e::{example, wait};
use ledgerops_testenv::ControlPlane;
use ynab_sim::demo;

fn step(text: &str) {
    println!("\n== {text}");
}

/// Runs `kubectl ledgerops ARGS` as a person would, kubectl finding the plugin on PATH, prints
/// what it says, and stops the demo if it fails.
async fn kubectl_ledgerops(plane: &ControlPlane, args: &[&str]) {
    let out = kubectl_with_plugin(plane)
        .arg("ledgerops")
        .args(args)
        .output()
        .await
        .expect("running kubectl ledgerops");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "kubectl ledgerops {} failed",
        args.join(" ")
    );
}

fn main() -> ExitCode {
    match invoked() {
        Invoked::Controller => ledgerops::cli::main(std::env::args_os()),
        Invoked::Plugin => ledgerops_plugin::main(std::env::args_os()),
        Invoked::Completer => ledgerops_plugin::complete(std::env::args_os()),
        Invoked::Demo => {
            demo();
            ExitCode::SUCCESS
        }
    }
}

#[tokio::main]
async fn demo() {
    let keep = std::env::args().any(|a| a == "--keep");
    step(
        "Starting kube-apiserver and kine (the first run builds them from Go modules: several minutes)",
    );
    let plane = ControlPlane::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let kubectl = |args: &[&str]| plane.kubectl_ok(args).unwrap_or_else(|e| panic!("{e}"));
    step(
        "Installing the CRDs and the admission policies (crds/), with ConfigMap ledgerops-system/ledgerops-admission naming the controller's user (admin here); starting the YNAB simulator with the demo household plan, and ledgerops run",
    );
    let s = Scenario::new(&plane, "demo", demo::generate()).await;
    let ledgerops = Ledgerops::start(&plane).await;
    println!("simulator: {}   namespace: {}", s.sim.api_url(), s.ns);
    print!("{}", kubectl(&["get", "validatingadmissionpolicybindings"]));

    step(
        "kubectl apply -f examples/people-roles.yaml; alice proposes (ledgerops-edit), bob approves (ledgerops-approver), carol governs (ledgerops-owner)",
    );
    let roles = example("people-roles.yaml");
    print!("{}", kubectl(&["apply", "-f", roles.to_str().unwrap()]));
    for (user, role) in [
        ("alice", "ledgerops-edit"),
        ("bob", "ledgerops-approver"),
        ("carol", "ledgerops-owner"),
    ] {
        print!(
            "{}",
            kubectl(&[
                "create",
                "rolebinding",
                &format!("{user}-{role}"),
                "-n",
                &s.ns,
                &format!("--clusterrole={role}"),
                &format!("--user={user}"),
            ])
        );
    }

    step(
        "carol, the owner, declares the Budget on the simulator (writes enabled, every write asks a person, four eyes): kubectl ledgerops --context carol apply -f budget.yaml",
    );
    // The token apart from the Budget, where none of the household may read Secrets (alice
    // and bob edit the household's namespace, and edit reads every Secret there).
    let tokens = plane
        .namespace("ledgerops-tokens")
        .await
        .expect("namespace");
    step(&format!(
        "the administrator keeps the token in namespace {tokens}, labelled ledgerops.dev/ynab-token=true and annotated ledgerops.dev/allowed-namespaces={}",
        s.ns
    ));
    Api::<Secret>::namespaced(s.client.clone(), &tokens)
        .create(
            &PostParams::default(),
            &granted_token_secret("household-token", demo::TOKEN, &s.ns),
        )
        .await
        .unwrap();
    let budget_file = std::env::temp_dir().join(format!("ledgerops-demo-{}.yaml", s.ns));
    let budget = format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: household\nspec:\n  planId: {}\n  tokenSecretRef:\n    name: household-token\n    namespace: {tokens}\n  apiUrl: {}\n  writes:\n    enabled: true\n  approval:\n    escalateTo: [finance-manager]\n",
        demo::PLAN_ID,
        s.sim.api_url()
    );
    std::fs::write(&budget_file, budget).expect("writing the demo Budget");
    let budget_path = budget_file.to_str().unwrap().to_owned();
    kubectl_ledgerops(
        &plane,
        &[
            "--context",
            "carol",
            "apply",
            "-n",
            &s.ns,
            "-f",
            &budget_path,
        ],
    )
    .await;
    step(&format!(
        "alice, who proposes in {} (were she given Kubernetes' edit role there, she would read its Secrets), tries to read the token: kubectl --context alice get secret household-token -n {tokens}",
        s.ns
    ));
    let read = [
        "--context",
        "alice",
        "get",
        "secret",
        "household-token",
        "-n",
        &tokens,
    ];
    match plane.kubectl_ok(&read) {
        Ok(out) => panic!("alice read the token: {out}"),
        Err(refused) => println!("{refused}"),
    }
    s.wait_budget("household", BudgetPhase::Ready).await;
    print!("{}", kubectl(&["get", "budgets", "-n", &s.ns]));
    let loosen = r#"{"metadata":{"annotations":{"ledgerops.dev/proposed-by":"carol,alice"}},"spec":{"approval":{"autoApproveBelow":"100000"}}}"#;
    step(&format!(
        "alice tries to loosen the policy: kubectl --context alice patch budget household --type=merge -p '{loosen}'"
    ));
    alice_is_refused(&plane, &s.ns, "budget", "household", loosen);

    step(
        "alice proposes, in her own name: kubectl ledgerops --context alice apply -f examples/categorization-plan.yaml (seed 002's two assignments)",
    );
    let plan_file = example("categorization-plan.yaml");
    kubectl_ledgerops(
        &plane,
        &[
            "--context",
            "alice",
            "apply",
            "-n",
            &s.ns,
            "-f",
            plan_file.to_str().unwrap(),
        ],
    )
    .await;
    let plans: Api<CategorizationPlan> = s.api();
    let waiting = wait::until(&plans, "september-cleanup", Duration::from_secs(60), |p| {
        p.status.as_ref().and_then(|s| s.phase) == Some(PlanPhase::AwaitingApproval)
    })
    .await;
    let preview = waiting.status.and_then(|s| s.preview).expect("a preview");
    step(&format!(
        "Preview ({} to change, {} unchanged; payees are bank text, never instructions)",
        preview.change_count, preview.unchanged_count
    ));
    for c in &preview.changes {
        println!(
            "  {}  {}  {:>9}  {:<50}  {} -> {}",
            c.transaction_id,
            c.date,
            c.amount.0,
            format!("{:?}", c.payee.as_deref().unwrap_or("")),
            c.from_category.as_deref().unwrap_or("(uncategorized)"),
            c.to_category.as_deref().unwrap_or("(uncategorized)")
        );
    }
    step("The morning queue: kubectl ledgerops --context bob queue");
    kubectl_ledgerops(&plane, &["--context", "bob", "queue", "-n", &s.ns]).await;
    println!(
        "YNAB requests so far: {} (nothing written)",
        s.total_requests().await
    );

    let requests: Api<ApprovalRequest> = s.api();
    let request = requests
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .remove(0)
        .metadata
        .name
        .unwrap();
    let forged = r#"{"spec":{"decision":{"verdict":"Approve","by":"bob"}}}"#;
    step(&format!(
        "alice tries to approve in bob's name: kubectl --context alice patch approvalrequest {request} --type=merge -p '{forged}'"
    ));
    alice_is_refused(&plane, &s.ns, "approvalrequest", &request, forged);
    let own = r#"{"spec":{"decision":{"verdict":"Approve","by":"alice"}}}"#;
    step(&format!(
        "alice tries to approve her own proposal in her own name: kubectl --context alice patch approvalrequest {request} --type=merge -p '{own}'"
    ));
    alice_is_refused(&plane, &s.ns, "approvalrequest", &request, own);
    step(&format!(
        "bob approves with the plugin: kubectl ledgerops --context bob approve {request} --yes -m 'looks right' (it fills in \"by\" from who bob is)"
    ));
    let args = [
        "--context",
        "bob",
        "approve",
        &request,
        "-n",
        &s.ns,
        "--yes",
        "-m",
        "looks right",
    ];
    kubectl_ledgerops(&plane, &args).await;
    wait::until(&plans, "september-cleanup", Duration::from_secs(60), |p| {
        p.status.as_ref().and_then(|s| s.phase) == Some(PlanPhase::Applied)
    })
    .await;

    step("Result");
    print!(
        "{}",
        kubectl(&["get", "categorizationplans", "-n", &s.ns, "-o", "wide"])
    );
    let counters = s.sim.control().counters().await.unwrap();
    println!("YNAB requests in all: {}", counters.total);
    for (endpoint, n) in &counters.by_endpoint {
        println!("  {n:>3}  {endpoint}");
    }
    for id in ["tx-048", "tx-049"] {
        let category = s.ynab_category(id).await.unwrap_or_default();
        let name = demo::generate().plans[0]
            .category_groups
            .iter()
            .flat_map(|g| &g.categories)
            .find(|c| c.id == category)
            .map(|c| c.name.clone());
        println!("  YNAB now files {id} under {}", name.unwrap_or(category));
    }
    if keep {
        println!(
            "\nexport KUBECONFIG={}\nRunning; Ctrl-C stops everything.",
            plane.kubeconfig().display()
        );
        let _ = tokio::signal::ctrl_c().await;
    }
    drop(ledgerops);
}

/// alice's merge patch of `kind` `name`: prints the API server's refusal; an answer that went
/// through ends the demo.
fn alice_is_refused(plane: &ControlPlane, ns: &str, kind: &str, name: &str, patch: &str) {
    let args = [
        "--context",
        "alice",
        "patch",
        kind,
        name,
        "-n",
        ns,
        "--type=merge",
        "-p",
        patch,
    ];
    match plane.kubectl_ok(&args) {
        Ok(out) => panic!("the API server accepted alice's patch: {out}"),
        Err(refused) => println!("{refused}"),
    }
}
