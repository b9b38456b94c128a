//! Finds the Gitea build, running the cached build script when needed.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::{Error, Result};

/// The Gitea version the script builds unless `GITEA_VERSION` says otherwise. Keep it equal to
/// the default in `tests/tools/build-gitea.sh`.
const DEFAULT_VERSION: &str = "v1.26.3";

/// The Gitea version under test, as `/api/v1/version` reports it (no leading `v`).
pub fn version() -> String {
    let tag = std::env::var("GITEA_VERSION").unwrap_or_else(|_| DEFAULT_VERSION.into());
    tag.trim_start_matches('v').to_owned()
}

/// The directory holding the `gitea` binary and its `assets/` (options, templates, public):
/// `$LEDGEROPS_GITEA_BIN`, or what `tests/tools/build-gitea.sh` builds (once per version).
pub fn gitea_dir() -> Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("LEDGEROPS_GITEA_BIN") {
            return Ok(PathBuf::from(dir));
        }
        let version = format!("v{}", version());
        crate::binaries::run_build_script("build-gitea.sh", &[("GITEA_VERSION", version)])
    })
    .clone()
    .map_err(Error::GiteaBuild)
}
