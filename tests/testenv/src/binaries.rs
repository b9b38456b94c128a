//! Finds the control-plane binaries, building them through the cached script when needed.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::{Error, Result};

/// What a control plane runs, all from one directory.
const BINARIES: &[&str] = &[
    "kine",
    "kube-apiserver",
    "kube-controller-manager",
    "kubectl",
];

/// The directory holding `kine`, `kube-apiserver`, `kube-controller-manager` and `kubectl`:
/// `$LEDGEROPS_CONTROL_PLANE_BIN`, or what `tests/tools/build-control-plane.sh` builds (once per
/// version, then cached).
pub fn binary_dir() -> Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("LEDGEROPS_CONTROL_PLANE_BIN") {
            Some(dir) => PathBuf::from(dir),
            None => build()?,
        };
        match BINARIES.iter().find(|b| !dir.join(b).is_file()) {
            Some(missing) => Err(format!("{} has no {missing}", dir.display())),
            None => Ok(dir),
        }
    })
    .clone()
    .map_err(Error::Build)
}

fn build() -> Result<PathBuf, String> {
    run_build_script("build-control-plane.sh", &[])
}

/// Runs `tests/tools/<script>` with `env`, progress on stderr; the directory it prints last.
pub(crate) fn run_build_script(script: &str, env: &[(&str, String)]) -> Result<PathBuf, String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .join(script);
    let out = Command::new("bash")
        .arg(&script)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!("{} exited with {}", script.display(), out.status));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .map(PathBuf::from)
        .ok_or_else(|| "the script printed no directory".to_string())
}
