//! Helm, built from its Go module by `tests/tools/build-helm.sh`, bound to a test control plane.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ledgerops_testenv::ControlPlane;

/// The chart in this repository.
pub fn chart() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../charts/ledgerops")
}

/// The `helm` binary: `$LEDGEROPS_HELM_BIN/helm`, or what the build script builds (once per
/// version, then cached).
pub fn binary() -> &'static Path {
    static HELM: OnceLock<PathBuf> = OnceLock::new();
    HELM.get_or_init(|| crate::built_tool("LEDGEROPS_HELM_BIN", "build-helm.sh", "helm"))
}

/// A `helm` command against `plane` as `admin`. Helm's own cache, config and data go into the
/// plane's directory, so tests leave nothing in the home directory.
pub fn helm(plane: &ControlPlane) -> Command {
    let mut cmd = Command::new(binary());
    let home = plane.dir().join("helm");
    cmd.arg("--kubeconfig")
        .arg(plane.kubeconfig())
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"));
    cmd
}

/// Runs `cmd`, returning stdout, or stderr as the error.
pub fn output(mut cmd: Command) -> Result<String, String> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The documents of a multi-document YAML text, empty ones left out.
pub fn documents(yaml: &str) -> Vec<serde_json::Value> {
    crate::yaml_documents(yaml)
}
