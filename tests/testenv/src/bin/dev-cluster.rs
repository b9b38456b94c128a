//! A local control plane for trying ledgerops by hand: starts kube-apiserver and kine on
//! loopback, installs the CRDs from `crds/`, applies `examples/` into the `demo` namespace, shows
//! them, and keeps running until Ctrl-C (`--once` stops right after).

use std::path::PathBuf;
use std::process::ExitCode;

use ledgerops_testenv::ControlPlane;

#[tokio::main]
async fn main() -> ExitCode {
    let once = std::env::args().any(|a| a == "--once");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    eprintln!(
        "starting kube-apiserver and kine (the first run builds them from Go modules; that takes several minutes)"
    );
    let plane = match ControlPlane::start().await {
        Ok(plane) => plane,
        Err(e) => {
            eprintln!("dev-cluster: {e}");
            return ExitCode::FAILURE;
        }
    };
    let crds = repo.join("crds");
    let examples = repo.join("examples");
    let steps: [&[&str]; 5] = [
        &["apply", "--server-side", "-f", crds.to_str().unwrap()],
        &[
            "wait",
            "--for=condition=Established",
            "crd",
            "--all",
            "--timeout=60s",
        ],
        &["create", "namespace", "demo"],
        &["apply", "-n", "demo", "-f", examples.to_str().unwrap()],
        &["get", "ledgerops", "-n", "demo"],
    ];
    for args in steps {
        match plane.kubectl_ok(args) {
            Ok(out) => print!("{out}"),
            Err(e) => {
                eprintln!("dev-cluster: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("\nAPI server: {}", plane.url());
    println!("export KUBECONFIG={}", plane.kubeconfig().display());
    if once {
        return ExitCode::SUCCESS;
    }
    println!("Running; Ctrl-C stops it and deletes everything.");
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}
