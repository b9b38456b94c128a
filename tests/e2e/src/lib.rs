//! Helpers shared by the suites: installing the CRDs, reading the examples, running ledgerops,
//! and one test's [`world::World`].

pub mod admission;
pub mod agent;
pub mod api_requests;
pub mod attacker;
pub mod config_repo;
pub mod controller;
pub mod cpu;
pub mod git_work;
pub mod gitea_api;
pub mod helm;
pub mod inbox;
pub mod kstatus;
pub mod month_end;
pub mod promtool;
pub mod scenario;
pub mod soak;
pub mod stranger;
pub mod wait;
pub mod world;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};

/// The user the suites run the controller as: the parameter ConfigMap names it.
pub const CONTROLLER_USER: &str = "admin";

/// Installs what a cluster running ledgerops has: every CRD, then the admission policies of
/// `crds/` with the parameter ConfigMap naming [`CONTROLLER_USER`]. Repeating it is harmless.
pub async fn install_crds(client: &Client) {
    install_crds_only(client).await;
    admission::install_admission(client, CONTROLLER_USER).await;
}

/// Applies every ledgerops CRD (server-side, so repeating it is harmless) and waits until each is
/// Established; installs no admission policy.
pub async fn install_crds_only(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply("ledgerops-tests").force();
    for crd in ledgerops::api::crds() {
        let name = crd.metadata.name.clone().expect("generated CRDs are named");
        api.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .unwrap_or_else(|e| panic!("applying CRD {name}: {e}"));
        let established = await_condition(api.clone(), &name, conditions::is_crd_established());
        tokio::time::timeout(Duration::from_secs(30), established)
            .await
            .unwrap_or_else(|_| panic!("CRD {name} was not Established within 30s"))
            .unwrap_or_else(|e| panic!("watching CRD {name}: {e}"));
    }
}

/// A tool built from its Go module by `tests/tools/<script>` (which caches it and prints its
/// directory last), or found in the directory `$<env>` names: the path of its binary `name`.
pub fn built_tool(env: &str, script: &str, name: &str) -> PathBuf {
    let dir = match std::env::var_os(env) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tools")
                .join(script);
            let out = Command::new("bash")
                .arg(&script)
                .stderr(Stdio::inherit())
                .output()
                .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
            assert!(out.status.success(), "{} failed", script.display());
            PathBuf::from(
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .last()
                    .expect("the script prints the directory"),
            )
        }
    };
    let binary = dir.join(name);
    assert!(binary.is_file(), "{} does not exist", binary.display());
    binary
}

/// The example of each kind in `examples/`, one file a kind.
pub const KIND_EXAMPLES: &[&str] = &[
    "budget.yaml",
    "transaction.yaml",
    "categorization-plan.yaml",
    "approval-request.yaml",
    "agent-job.yaml",
    "config-repo.yaml",
    "categorization-rule.yaml",
];

/// The path of a file under `examples/`.
pub fn example(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(file)
}

/// The documents of a multi-document YAML file under `examples/`.
pub fn example_documents(file: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(example(file))
        .unwrap_or_else(|e| panic!("reading examples/{file}: {e}"));
    yaml_documents(&text)
}

/// The documents of a multi-document YAML text, empty ones left out, read as a ConfigRepo reads
/// a revision's files.
pub fn yaml_documents(text: &str) -> Vec<serde_json::Value> {
    ledgerops::logic::config_repo::yaml::values(text)
        .unwrap_or_else(|e| panic!("valid YAML: {e:?}"))
        .into_iter()
        .filter(|v| !v.is_null())
        .collect()
}
