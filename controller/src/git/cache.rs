//! The bare cache of each ConfigRepo: kept within `--config-repo-max-bytes` on disk, and removed
//! with its ConfigRepo. It is only a cache: whatever is over the bound is deleted and fetched
//! anew.

use std::path::Path;

use git2::{Oid, Repository};

use super::{FETCHED, FetchRequest, GitError, network, summary};

/// Fetches the branch into the request's cache, which stays within `limits.repo_bytes`: a cache
/// over it before the fetch is emptied; one over it after is removed, and the fetch tried once
/// more from nothing if it held an earlier history (which may be what filled it).
pub(super) fn fetch_within(request: &FetchRequest<'_>) -> Result<(Repository, Oid), GitError> {
    let limit = request.limits.repo_bytes;
    loop {
        if disk_usage(request.cache) > limit {
            remove(request.cache)?;
        }
        let repo = open(request.cache)?;
        let had_history = repo.find_reference(FETCHED).is_ok();
        let commit = network::fetch_branch(&repo, request)?;
        let used = disk_usage(request.cache);
        if used <= limit {
            return Ok((repo, commit));
        }
        drop(repo);
        remove(request.cache)?;
        if !had_history {
            return Err(GitError::TooLarge {
                what: format!(
                    "branch {} of {} takes {used} bytes on disk once fetched",
                    request.branch, request.url
                ),
                limit: format!("{limit} bytes a ConfigRepo, --config-repo-max-bytes"),
                remedy: "follow a repository with a smaller history, or ask the operator to raise --config-repo-max-bytes",
            });
        }
    }
}

fn open(cache: &Path) -> Result<Repository, GitError> {
    let failed = |message: String| GitError::Cache {
        dir: cache.display().to_string(),
        message,
    };
    match Repository::open_bare(cache) {
        Ok(r) => Ok(r),
        Err(_) => {
            std::fs::create_dir_all(cache).map_err(|e| failed(e.to_string()))?;
            Repository::init_bare(cache).map_err(|e| failed(summary(&e)))
        }
    }
}

fn remove(cache: &Path) -> Result<(), GitError> {
    std::fs::remove_dir_all(cache).map_err(|e| GitError::Cache {
        dir: cache.display().to_string(),
        message: e.to_string(),
    })
}

/// The bytes of the files under `dir` (symlinks are not followed; what cannot be read counts
/// nothing, and a missing directory is empty).
pub(super) fn disk_usage(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => disk_usage(&entry.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
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
