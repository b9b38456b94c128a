//! Helpers shared by the suites: installing the CRDs, reading the examples, running ledgerops.

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
pub mod promtool;
pub mod scenario;
pub mod stranger;
pub mod wait;

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::wait::{await_condition, conditions};
use serde::Deserialize;

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
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| {
            serde_json::to_value(serde_yaml::Value::deserialize(doc).expect("valid YAML"))
                .expect("YAML maps to JSON")
        })
        .collect()
}
