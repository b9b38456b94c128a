//! `ledgerops run` flags of the ConfigRepo reconciler.

use std::path::PathBuf;

use super::Limits;
use crate::logic::config_repo::url::UrlPolicy;
use crate::logic::values::url_prefix::Prefixes;

/// `--config-repo-max-bytes` unless set: 32 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 32 << 20;

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
    /// Git URL prefixes ConfigRepos may fetch besides public `https://` hosts (repeat, or
    /// comma-separate), as `scheme://host[:port]/path-prefix` with `*` for any port: an
    /// in-cluster Gitea, or a loopback server in a test. Unset: only https hosts whose every
    /// address is public.
    #[arg(long, env = "LEDGEROPS_CONFIG_REPO_URL_ALLOW", value_delimiter = ',')]
    pub config_repo_url_allow: Vec<String>,
    /// The most bytes one fetch of a ConfigRepo may download, and its cache may take on disk
    /// (size the cache volume for this times the number of ConfigRepos).
    #[arg(long, env = "LEDGEROPS_CONFIG_REPO_MAX_BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    pub config_repo_max_bytes: u64,
}

impl ConfigRepoArgs {
    /// The Git URL policy these flags make, or what is wrong with an entry.
    pub fn url_policy(&self) -> Result<UrlPolicy, String> {
        let allowed = Prefixes::parse(&self.config_repo_url_allow).map_err(|(entry, shape)| {
            format!(
                "{} {entry:?}: {shape}",
                crate::logic::config_repo::url::FLAG
            )
        })?;
        Ok(UrlPolicy::new(allowed, self.config_repo_file_root.clone()))
    }

    /// What one ConfigRepo may make the controller download, store and read.
    pub fn limits(&self) -> Limits {
        Limits {
            repo_bytes: self.config_repo_max_bytes,
            ..Limits::default()
        }
    }
}
