//! The git2 adapter: fetches one branch of a ConfigRepo's remote into a bare cache and reads the
//! YAML files of a directory of that commit straight from the object database (nothing is
//! checked out, so a symlink in the repository can never reach the controller's disk).
//!
//! libgit2 blocks: call [`fetch`] from `spawn_blocking`.

pub mod options;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use git2::{Cred, CredentialType, FetchOptions, RemoteCallbacks, Repository, TreeWalkMode};

use crate::logic::config_repo::documents::File;

/// The local ref the fetched branch lands on (one cache directory per ConfigRepo).
const FETCHED: &str = "refs/ledgerops/fetched";
/// Limits on what a revision may hold, so a repository cannot exhaust the controller's memory.
const MAX_FILES: usize = 5_000;
const MAX_FILE_BYTES: usize = 1 << 20;
const MAX_TOTAL_BYTES: usize = 64 << 20;

/// HTTP basic-auth credentials from the ConfigRepo's Secret.
#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}

/// What one fetch found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The branch's commit, hex.
    pub commit: String,
    /// The `*.yaml` / `*.yml` files under the path, sorted by path.
    pub files: Vec<File>,
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
        "{url} has no branch {branch}: it was deleted or never pushed; push it, or set spec.branch to an existing branch"
    )]
    BranchNotFound { url: String, branch: String },
    #[error(
        "revision {revision} has no directory {path}: it was moved or removed; set spec.path to where the resources are"
    )]
    PathNotFound { revision: String, path: String },
    #[error("{file} is not UTF-8 text: resources must be UTF-8 YAML")]
    NotText { file: String },
    #[error("{what}: split the repository or point spec.path at a smaller directory")]
    TooLarge { what: String },
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
            GitError::BranchNotFound { .. } => "BranchNotFound",
            GitError::PathNotFound { .. } => "PathNotFound",
            GitError::NotText { .. } | GitError::TooLarge { .. } => "InvalidRepository",
        }
    }
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

/// Fetches `branch` of `url` into the bare repository `cache` (created if needed) and reads the
/// files under `path` of its commit. Asks the remote for the branch's commit first, and downloads
/// only when the cache does not have it: an unchanged branch costs one small request.
pub fn fetch(
    cache: &Path,
    url: &str,
    branch: &str,
    path: &str,
    credentials: Option<&Credentials>,
) -> Result<Fetched, GitError> {
    let repo = open_cache(cache)?;
    let wanted = format!("refs/heads/{branch}");
    let unreachable = |e: git2::Error| classify(e, url);
    let mut remote = repo.remote_anonymous(url).map_err(unreachable)?;
    let commit = {
        let tries = Cell::new(0);
        let connection = remote
            .connect_auth(
                git2::Direction::Fetch,
                Some(callbacks(credentials, &tries)),
                None,
            )
            .map_err(unreachable)?;
        let head = connection
            .list()
            .map_err(unreachable)?
            .iter()
            .find(|h| h.name() == wanted)
            .map(|h| h.oid());
        head.ok_or_else(|| GitError::BranchNotFound {
            url: url.to_owned(),
            branch: branch.to_owned(),
        })?
    };
    if repo.find_commit(commit).is_err() {
        let tries = Cell::new(0);
        let mut options = FetchOptions::new();
        options.remote_callbacks(callbacks(credentials, &tries));
        let refspec = format!("+{wanted}:{FETCHED}");
        remote
            .fetch(&[refspec.as_str()], Some(&mut options), None)
            .map_err(unreachable)?;
    }
    let revision = crate::logic::config_repo::revision(branch, &commit.to_string());
    let files = read_tree(&repo, commit, path, &revision)?;
    Ok(Fetched {
        commit: commit.to_string(),
        files,
    })
}

/// Removes the caches under `root` of ConfigRepos that no longer exist: every directory named
/// like a uid that is not in `keep`. Nothing else is touched, even if `root` is shared. What
/// cannot be removed is logged and left.
pub fn forget_caches(root: &Path, keep: &[String]) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_uid(&name) || keep.contains(&name) {
            continue;
        }
        if let Err(e) = std::fs::remove_dir_all(entry.path()) {
            tracing::warn!(cache = %entry.path().display(), error = %e, "cannot remove the cache of a deleted ConfigRepo");
        }
    }
}

/// Whether `name` is spelled like a Kubernetes uid (8-4-4-4-12 hex digits).
fn is_uid(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn open_cache(cache: &Path) -> Result<Repository, GitError> {
    let failed = |message: String| GitError::Cache {
        dir: cache.display().to_string(),
        message,
    };
    match Repository::open_bare(cache) {
        Ok(r) => Ok(r),
        Err(_) => {
            std::fs::create_dir_all(cache).map_err(|e| failed(e.to_string()))?;
            Repository::init_bare(cache).map_err(|e| failed(e.message().to_owned()))
        }
    }
}

/// Offers the credentials once: libgit2 asks again after a refusal, and would loop.
fn callbacks<'a>(
    credentials: Option<&'a Credentials>,
    tries: &'a Cell<u32>,
) -> RemoteCallbacks<'a> {
    let mut callbacks = RemoteCallbacks::new();
    callbacks.credentials(move |_url, _user, allowed| {
        tries.set(tries.get() + 1);
        match credentials {
            Some(c)
                if tries.get() == 1 && allowed.contains(CredentialType::USER_PASS_PLAINTEXT) =>
            {
                Cred::userpass_plaintext(&c.username, &c.password)
            }
            _ => Err(git2::Error::from_str("authentication required")),
        }
    });
    callbacks
}

fn classify(e: git2::Error, url: &str) -> GitError {
    if e.class() == git2::ErrorClass::Http && e.code() == git2::ErrorCode::Auth
        || e.message().contains("authentication required")
        || e.message().contains("status code: 401")
    {
        return GitError::Auth {
            url: url.to_owned(),
        };
    }
    GitError::Unreachable {
        url: url.to_owned(),
        message: e.message().to_owned(),
    }
}

/// The YAML blobs under `path` of `commit`, sorted by path.
fn read_tree(
    repo: &Repository,
    commit: git2::Oid,
    path: &str,
    revision: &str,
) -> Result<Vec<File>, GitError> {
    let read = |e: git2::Error| GitError::Read(e.message().to_owned());
    let root = repo
        .find_commit(commit)
        .map_err(read)?
        .tree()
        .map_err(read)?;
    let dir = PathBuf::from(path.trim_matches('/'));
    let tree = if dir.as_os_str().is_empty() || dir == Path::new(".") {
        root
    } else {
        let not_found = || GitError::PathNotFound {
            revision: revision.to_owned(),
            path: path.to_owned(),
        };
        let entry = root.get_path(&dir).map_err(|_| not_found())?;
        repo.find_tree(entry.id()).map_err(|_| not_found())?
    };
    let mut blobs = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        let name = entry.name().unwrap_or_default();
        // Regular files only: symlinks and submodules are never followed.
        let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
        if regular && (name.ends_with(".yaml") || name.ends_with(".yml")) {
            blobs.push((format!("{parent}{name}"), entry.id()));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(read)?;
    if blobs.len() > MAX_FILES {
        return Err(GitError::TooLarge {
            what: format!(
                "{} YAML files under {path} (at most {MAX_FILES})",
                blobs.len()
            ),
        });
    }
    let prefix = dir.to_string_lossy();
    let mut total = 0;
    let mut files = Vec::with_capacity(blobs.len());
    for (relative, id) in blobs {
        let file = if prefix.is_empty() || prefix == "." {
            relative
        } else {
            format!("{prefix}/{relative}")
        };
        let blob = repo.find_blob(id).map_err(read)?;
        let size = blob.size();
        total += size;
        if size > MAX_FILE_BYTES || total > MAX_TOTAL_BYTES {
            return Err(GitError::TooLarge {
                what: format!(
                    "{file} is {size} bytes (at most {MAX_FILE_BYTES} a file, {MAX_TOTAL_BYTES} in all)"
                ),
            });
        }
        let text = std::str::from_utf8(blob.content())
            .map_err(|_| GitError::NotText { file: file.clone() })?
            .to_owned();
        files.push(File { path: file, text });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
