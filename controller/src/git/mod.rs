//! The git2 adapter: fetches one branch of a ConfigRepo's remote into a bare cache and reads the
//! YAML files of a directory of that commit straight from the object database (nothing is
//! checked out, so a symlink in the repository can never reach the controller's disk).
//!
//! Whoever can push to the branch or create a ConfigRepo chooses what this reads, so every
//! amount is bounded by [`Limits`] before the work it bounds: the download as it arrives, the
//! cache on disk, each object by the size in its header, and the entries of the tree as they are
//! walked.
//!
//! libgit2 blocks: call [`fetch`] from `spawn_blocking`.

mod cache;
mod network;
pub mod options;
mod read;

use std::net::IpAddr;
use std::path::Path;

use crate::logic::config_repo::documents::File;
use crate::logic::values::git_credentials::Credentials;
use crate::logic::values::outside_text;

pub use cache::forget_caches;

/// The local ref the fetched branch lands on (one cache directory per ConfigRepo).
const FETCHED: &str = "refs/ledgerops/fetched";

/// How much one ConfigRepo may make the controller download, store and read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one object read: a YAML file, a directory listing, the commit.
    pub file_bytes: usize,
    /// Bytes of all the YAML files read of a revision.
    pub total_bytes: usize,
    /// Entries (files and directories, at any depth) under the path of a revision.
    pub tree_entries: usize,
    /// Bytes of one fetch's download, and of the ConfigRepo's cache on disk.
    pub repo_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: 1 << 20,
            total_bytes: 16 << 20,
            tree_entries: 20_000,
            repo_bytes: options::DEFAULT_MAX_BYTES,
        }
    }
}

/// What to fetch, where to, and within which bounds.
#[derive(Debug, Clone, Copy)]
pub struct FetchRequest<'a> {
    /// The ConfigRepo's bare cache (created if needed).
    pub cache: &'a Path,
    pub url: &'a str,
    pub branch: &'a str,
    /// The directory of the revision whose YAML files are read.
    pub path: &'a str,
    pub credentials: Option<&'a Credentials>,
    /// Refuse a host that resolves to any address that is not public.
    pub public_only: bool,
    /// The commit applied before, hex: whether the new one descends from it.
    pub previous: Option<&'a str>,
    pub limits: &'a Limits,
}

/// What one fetch found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The branch's commit, hex.
    pub commit: String,
    /// The `*.yaml` / `*.yml` files under the path, sorted by path.
    pub files: Vec<File>,
    /// The commit is the previous one or descends from it (true when there was none): false
    /// after a force-push that rewrote or rewound the branch.
    pub fast_forward: bool,
}

/// Why a fetch gave nothing. Messages never carry credentials: libgit2's own messages name the
/// URL as written in the spec, which admission keeps free of them.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot prepare the cache directory {dir}: {message}")]
    Cache { dir: String, message: String },
    #[error(
        "{url} refused the credentials of spec.secretRef (or needs some): check the Secret's username and password or token"
    )]
    Auth { url: String },
    #[error("cannot fetch {url}: {message}; the controller tries again at the next interval")]
    Unreachable { url: String, message: String },
    #[error(
        "spec.url {url}: host {host} resolves to {address}, which is not a public address, and this ConfigRepo may reach public hosts only; use a public host (an operator can allow this one with --config-repo-url-allow)"
    )]
    NotPublic {
        url: String,
        host: String,
        address: IpAddr,
    },
    #[error(
        "{url} has no branch {branch}: it was deleted or never pushed; push it, or set spec.branch to an existing branch"
    )]
    BranchNotFound { url: String, branch: String },
    #[error(
        "revision {revision} has no directory {path}: it was moved or removed; set spec.path to where the resources are"
    )]
    PathNotFound { revision: String, path: String },
    #[error("{file} is not UTF-8 text: resources must be UTF-8 YAML")]
    NotText { file: String },
    #[error("{what} (at most {limit}): {remedy}")]
    TooLarge {
        what: String,
        limit: String,
        remedy: &'static str,
    },
    #[error("reading the fetched commit: {0}")]
    Read(String),
}

impl GitError {
    /// The `Ready` reason.
    pub fn reason(&self) -> &'static str {
        match self {
            GitError::Cache { .. } | GitError::Read(_) => "FetchFailed",
            GitError::Auth { .. } => "AuthenticationFailed",
            GitError::Unreachable { .. } => "Unreachable",
            GitError::NotPublic { .. } => "UrlNotAllowed",
            GitError::BranchNotFound { .. } => "BranchNotFound",
            GitError::PathNotFound { .. } => "PathNotFound",
            GitError::NotText { .. } | GitError::TooLarge { .. } => "InvalidRepository",
        }
    }
}

/// libgit2's message in a few words: it may carry what a server said.
fn summary(e: &git2::Error) -> String {
    outside_text::sanitize(e.message(), outside_text::MAX_CHARS)
}

/// Sets libgit2's network timeouts, so that a silent server fails a sync instead of holding it.
/// Call before any thread is started (libgit2 keeps them in unsynchronised globals).
pub fn set_timeouts() {
    // SAFETY: called from `main` before the runtime starts any thread.
    unsafe {
        let _ = git2::opts::set_server_connect_timeout_in_milliseconds(10_000);
        let _ = git2::opts::set_server_timeout_in_milliseconds(30_000);
    }
}

/// Fetches the branch of the request into its cache and reads the files under its path. An
/// unchanged branch costs the remote's listing only: libgit2 asks for no pack when the cache
/// already has the commit.
pub fn fetch(request: &FetchRequest<'_>) -> Result<Fetched, GitError> {
    if request.public_only {
        network::check_public(request.url)?;
    }
    let (repo, commit) = cache::fetch_within(request)?;
    let revision = crate::logic::config_repo::revision(request.branch, &commit.to_string());
    let files = read::files(&repo, commit, request.path, &revision, request.limits)?;
    Ok(Fetched {
        commit: commit.to_string(),
        files,
        fast_forward: fast_forward(&repo, request.previous, commit),
    })
}

/// Whether `commit` is `previous` or descends from it. A previous commit the cache lacks is no
/// ancestor: the fetch brought the whole history of `commit`.
fn fast_forward(repo: &git2::Repository, previous: Option<&str>, commit: git2::Oid) -> bool {
    let Some(previous) = previous else {
        return true;
    };
    match git2::Oid::from_str(previous) {
        Ok(p) => p == commit || repo.graph_descendant_of(commit, p).unwrap_or(false),
        Err(_) => false,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
