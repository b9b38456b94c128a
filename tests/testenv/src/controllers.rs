//! kube-controller-manager for the test control plane: the controllers that make ownership,
//! deletion and role aggregation behave as in a cluster.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

use crate::process::{Guarded, log_tail};
use crate::{Error, Result};

/// Only what the tests need: garbage collection (owner references, `--cascade=orphan` and
/// `foreground`), namespace deletion, ClusterRole aggregation (`edit`, `view`, `admin`), and each
/// namespace's `default` ServiceAccount with legacy token Secrets filled in.
const CONTROLLERS: &[&str] = &[
    "garbage-collector-controller",
    "namespace-controller",
    "clusterrole-aggregation-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
];

/// The user kube-controller-manager authenticates as. Kubernetes' bootstrap policy binds it to
/// `system:kube-controller-manager`; with `--use-service-account-credentials` each controller then
/// acts as its own ServiceAccount in `kube-system` (`generic-garbage-collector`, …) with the role
/// the bootstrap policy gives that controller, as in a kubeadm cluster.
pub(crate) const USER: &str = "system:kube-controller-manager";
/// Its bearer token (in `tokens.csv`).
pub(crate) const TOKEN: &str = "kube-controller-manager-token";

/// The files kube-controller-manager reads, all written before it starts.
pub(crate) struct Files<'a> {
    pub kubeconfig: &'a Path,
    pub service_account_key: &'a Path,
    pub root_ca: &'a Path,
    pub log: &'a Path,
}

/// Starts kube-controller-manager against a ready API server.
pub(crate) fn spawn(bin: &Path, files: &Files) -> Result<Guarded> {
    let mut kcm = Command::new(bin.join("kube-controller-manager"));
    kcm.args([
        format!("--kubeconfig={}", files.kubeconfig.display()),
        format!("--controllers={}", CONTROLLERS.join(",")),
        "--use-service-account-credentials=true".into(),
        format!(
            "--service-account-private-key-file={}",
            files.service_account_key.display()
        ),
        format!("--root-ca-file={}", files.root_ca.display()),
        "--leader-elect=false".into(),
        // No HTTPS endpoint: nothing scrapes it, and it would need its own certificate.
        "--secure-port=0".into(),
        // Deleting a namespace lists and deletes every namespaced kind: let it go at full speed.
        "--kube-api-qps=100".into(),
        "--kube-api-burst=200".into(),
    ]);
    Guarded::spawn(kcm, files.log)
}

/// Waits until the controllers act: a dependent of a deleted owner is collected and the built-in
/// `edit` role has aggregated its rules. The probe objects live in `kube-system` and are gone
/// when this returns. Namespace deletion is not probed: the namespace controller waits 5 s after
/// every deletion before it starts (its grace period for HA API servers), so each probe would
/// cost that much.
pub(crate) async fn wait_running(
    admin: &kube::Client,
    process: &Guarded,
    limit: Duration,
    log: &Path,
) -> Result<()> {
    let config_maps = Api::<ConfigMap>::namespaced(admin.clone(), "kube-system");
    let roles = Api::<ClusterRole>::all(admin.clone());
    let (owner, dependent) = (
        "ledgerops-testenv-probe-owner",
        "ledgerops-testenv-probe-dependent",
    );

    let created = config_maps
        .create(&PostParams::default(), &object(json!({"name": owner})))
        .await?;
    let uid = created.metadata.uid.expect("the API server sets a uid");
    let owned = json!({
        "name": dependent,
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid}],
    });
    config_maps
        .create(&PostParams::default(), &object(owned))
        .await?;
    config_maps
        .delete(owner, &DeleteParams::background())
        .await?;

    let start = Instant::now();
    while start.elapsed() < limit {
        if process.exited() {
            return Err(Error::Exited("kube-controller-manager", log_tail(log)));
        }
        let collected = config_maps.get_opt(dependent).await?.is_none();
        let aggregated = roles
            .get("edit")
            .await?
            .rules
            .is_some_and(|rules| !rules.is_empty());
        if collected && aggregated {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(Error::NotReady(
        "kube-controller-manager",
        limit,
        log_tail(log),
    ))
}

fn object<K: serde::de::DeserializeOwned>(metadata: serde_json::Value) -> K {
    serde_json::from_value(json!({ "metadata": metadata })).expect("a static object")
}
