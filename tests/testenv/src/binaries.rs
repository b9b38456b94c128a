//! Finds the control-plane binaries, building them through the cached script when needed.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::{Error, Result};

/// The directory holding `kube-apiserver`, `kine` and `kubectl`: `$LEDGEROPS_CONTROL_PLANE_BIN`,
/// or what `tests/tools/build-control-plane.sh` builds (once per version, then cached).
pub fn binary_dir() -> Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("LEDGEROPS_CONTROL_PLANE_BIN") {
            return Ok(PathBuf::from(dir));
        }
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tools/build-control-plane.sh");
        let out = Command::new("bash")
            .arg(&script)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("running {}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!("{} exited with {}", script.display(), out.status));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        stdout
            .lines()
            .last()
            .map(PathBuf::from)
            .ok_or_else(|| "the script printed no directory".to_string())
    })
    .clone()
    .map_err(Error::Build)
}
