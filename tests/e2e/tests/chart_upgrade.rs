//! `helm upgrade` from the previous chart, on a real API server: the CRDs upgrade with the
//! release and every object survives. The previous chart is taken from this repository's
//! history (`PREVIOUS`): the last one that shipped its CRDs in the chart's `crds/`, which Helm
//! installs once and never upgrades, and whose AgentJob status still had `version`.

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use ledgerops::api::admission::PARAMS_NAMESPACE;
use ledgerops::api::budget::Budget;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops_e2e::helm::{chart, helm, output};
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::demo;

const RELEASE: &str = "ledgerops";
/// The commit of the previous chart.
const PREVIOUS: &str = "cbaf56a087c19da20e3e95cab82dc5ee3ad35218";
const AGENT_JOBS: &str = "agentjobs.ledgerops.dev";

/// The chart as it was at `commit`, extracted from Git into `dir`.
fn chart_at(commit: &str, dir: &Path) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let archive = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["archive", "--format=tar", commit, "charts/ledgerops"])
        .output()
        .expect("running git");
    assert!(
        archive.status.success(),
        "the previous chart ({commit}) is not in this clone's history: {}",
        String::from_utf8_lossy(&archive.stderr)
    );
    std::fs::create_dir_all(dir).unwrap();
    let tar = dir.join("chart.tar");
    std::fs::write(&tar, &archive.stdout).unwrap();
    let unpacked = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("running tar");
    assert!(unpacked.success());
    dir.join("charts/ledgerops")
}

/// `helm install|upgrade` of `chart` into ledgerops-system with `args`.
fn helm_run(
    plane: &ControlPlane,
    verb: &str,
    chart: &Path,
    args: &[&str],
) -> Result<String, String> {
    let mut cmd = helm(plane);
    cmd.args([verb, RELEASE])
        .arg(chart)
        .args(["--namespace", PARAMS_NAMESPACE, "--create-namespace"])
        .args(args);
    output(cmd)
}

/// Whether the AgentJob CRD's status still has `version`, and the CRD's metadata.
async fn agent_jobs_crd(admin: &Client) -> (bool, CustomResourceDefinition) {
    let crd = Api::<CustomResourceDefinition>::all(admin.clone())
        .get(AGENT_JOBS)
        .await
        .unwrap();
    let schema = serde_json::to_value(&crd.spec.versions[0].schema).unwrap();
    let version =
        !schema["openAPIV3Schema"]["properties"]["status"]["properties"]["version"].is_null();
    (version, crd)
}

#[tokio::test]
async fn upgrading_from_the_previous_chart_upgrades_the_crds_and_keeps_every_object() {
    let plane = ControlPlane::start().await.unwrap();
    let admin = plane.client().await.unwrap();
    let previous = chart_at(PREVIOUS, &plane.dir().join("previous"));
    helm_run(&plane, "install", &previous, &[]).expect("installing the previous chart");
    let (version, _) = agent_jobs_crd(&admin).await;
    assert!(version, "the previous chart's AgentJob status has version");

    let budget: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": "household", "annotations": {PROPOSED_BY: "admin"}},
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "ynab-token"}}
    }))
    .unwrap();
    let budgets = Api::<Budget>::namespaced(admin.clone(), PARAMS_NAMESPACE);
    let created = budgets
        .create(&PostParams::default(), &budget)
        .await
        .unwrap();

    // The previous chart's CRDs were not Helm's: the first upgrade adopts them, once.
    let refused = helm_run(&plane, "upgrade", &chart(), &[]).expect_err("adoption is asked for");
    assert!(
        refused.contains("invalid ownership metadata"),
        "Helm says why: {refused}"
    );
    helm_run(&plane, "upgrade", &chart(), &["--take-ownership"])
        .expect("upgrading, adopting the CRDs");
    let (version, crd) = agent_jobs_crd(&admin).await;
    assert!(
        !version,
        "the upgrade changed the CRD: status.version is gone"
    );
    let meta = &crd.metadata;
    assert_eq!(
        meta.annotations.as_ref().unwrap()["meta.helm.sh/release-name"],
        RELEASE
    );
    assert_eq!(
        meta.annotations.as_ref().unwrap()["helm.sh/resource-policy"],
        "keep"
    );
    let kept = budgets.get("household").await.expect("the Budget survives");
    assert_eq!(kept.metadata.uid, created.metadata.uid);
    assert_eq!(kept.spec.plan_id, created.spec.plan_id);

    // From now on a plain upgrade upgrades them, and an uninstall keeps them with their objects.
    helm_run(&plane, "upgrade", &chart(), &["--set=logLevel=debug"])
        .expect("a plain upgrade once the CRDs are the release's");
    let mut uninstall = helm(&plane);
    uninstall.args(["uninstall", RELEASE, "--namespace", PARAMS_NAMESPACE]);
    output(uninstall).unwrap();
    agent_jobs_crd(&admin).await;
    let kept = budgets.get("household").await.expect("the Budget stays");
    assert_eq!(kept.metadata.uid, created.metadata.uid);
}
