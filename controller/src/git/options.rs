//! `ledgerops run` flags of the ConfigRepo reconciler.

use std::path::PathBuf;

/// Where ConfigRepos are fetched to, and which local repositories they may name.
#[derive(clap::Args, Debug, Clone)]
pub struct ConfigRepoArgs {
    /// Directory holding a bare cache of each ConfigRepo's remote (in a Pod: the `/tmp` emptyDir).
    #[arg(
        long,
        env = "LEDGEROPS_CONFIG_REPO_CACHE",
        default_value = "/tmp/ledgerops-config-repos"
    )]
    pub config_repo_cache: PathBuf,
    /// A directory whose git repositories ConfigRepos may name with `file://` URLs. Unset (the
    /// default): `file://` is refused, so no ConfigRepo can read the controller's disk.
    #[arg(long, env = "LEDGEROPS_CONFIG_REPO_FILE_ROOT")]
    pub config_repo_file_root: Option<PathBuf>,
}
