//! Reading the YAML files under a path of a fetched commit, within [`Limits`]: every object is
//! measured by its header before it is inflated, and the tree's entries are counted as they are
//! walked.

use std::path::Path;

use git2::{ObjectType, Odb, Oid, Repository, TreeWalkMode, TreeWalkResult};

use super::{GitError, Limits, summary};
use crate::logic::config_repo::documents::File;

const SMALLER_PATH: &str = "split the repository, or point spec.path at a smaller directory";

/// The YAML blobs under `path` of `commit`, sorted by path.
pub(super) fn files(
    repo: &Repository,
    commit: Oid,
    path: &str,
    revision: &str,
    limits: &Limits,
) -> Result<Vec<File>, GitError> {
    let read = |e: git2::Error| GitError::Read(summary(&e));
    let odb = repo.odb().map_err(read)?;
    let object = |id: Oid, name: &str| object_size(&odb, id, name, revision, limits);
    object(commit, "the commit")?;
    let mut tree = repo.find_commit(commit).map_err(read)?.tree_id();
    object(tree, "the top directory")?;
    let not_found = || GitError::PathNotFound {
        revision: revision.to_owned(),
        path: path.to_owned(),
    };
    let dir: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    for (depth, name) in dir.iter().enumerate() {
        let entry = repo
            .find_tree(tree)
            .map_err(read)?
            .get_path(Path::new(name))
            .map_err(|_| not_found())?;
        if entry.kind() != Some(ObjectType::Tree) {
            return Err(not_found());
        }
        tree = entry.id();
        object(tree, &format!("directory {}", dir[..=depth].join("/")))?;
    }
    let prefix: String = dir.iter().map(|c| format!("{c}/")).collect();
    let blobs = yaml_blobs(repo, &odb, tree, &prefix, path, revision, limits)?;
    let mut total = 0;
    let mut files = Vec::with_capacity(blobs.len());
    for (file, id) in blobs {
        let size = object(id, &file)?;
        total += size;
        if total > limits.total_bytes {
            return Err(GitError::TooLarge {
                what: format!(
                    "the YAML files under {path} of revision {revision} pass {} bytes at {file}",
                    limits.total_bytes
                ),
                limit: format!("{} bytes in all", limits.total_bytes),
                remedy: SMALLER_PATH,
            });
        }
        let blob = repo.find_blob(id).map_err(read)?;
        let text = std::str::from_utf8(blob.content())
            .map_err(|_| GitError::NotText { file: file.clone() })?
            .to_owned();
        files.push(File { path: file, text });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The size of object `id` from its header, refused over the limit of one object before
/// anything inflates it (a blob of zeros packs a thousand times smaller than it inflates).
fn object_size(
    odb: &Odb<'_>,
    id: Oid,
    name: &str,
    revision: &str,
    limits: &Limits,
) -> Result<usize, GitError> {
    let (size, _) = odb
        .read_header(id)
        .map_err(|e| GitError::Read(summary(&e)))?;
    if size > limits.file_bytes {
        return Err(GitError::TooLarge {
            what: format!("{name} of revision {revision} is {size} bytes"),
            limit: format!("{} bytes a file or directory listing", limits.file_bytes),
            remedy: SMALLER_PATH,
        });
    }
    Ok(size)
}

/// The regular `*.yaml` / `*.yml` files of the tree `root` (path in the repository, blob),
/// walked with every entry counted: the walk stops at the first entry past the limit, and at a
/// directory whose listing is over the limit of one object.
fn yaml_blobs(
    repo: &Repository,
    odb: &Odb<'_>,
    root: Oid,
    prefix: &str,
    path: &str,
    revision: &str,
    limits: &Limits,
) -> Result<Vec<(String, Oid)>, GitError> {
    let tree = repo
        .find_tree(root)
        .map_err(|e| GitError::Read(summary(&e)))?;
    let mut blobs = Vec::new();
    let mut entries = 0;
    let mut refused = None;
    let walked = tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        entries += 1;
        let name = format!("{prefix}{parent}{}", entry.name().unwrap_or_default());
        if entries > limits.tree_entries {
            refused = Some(GitError::TooLarge {
                what: format!(
                    "{path} of revision {revision} holds more than {} files and directories, passed at {name}",
                    limits.tree_entries
                ),
                limit: format!("{} entries", limits.tree_entries),
                remedy: SMALLER_PATH,
            });
            return TreeWalkResult::Abort;
        }
        match entry.kind() {
            Some(ObjectType::Tree) => {
                if let Err(e) = object_size(odb, entry.id(), &name, revision, limits) {
                    refused = Some(e);
                    return TreeWalkResult::Abort;
                }
            }
            // Regular files only: symlinks and submodules are never followed.
            _ if matches!(entry.filemode(), 0o100644 | 0o100755)
                && (name.ends_with(".yaml") || name.ends_with(".yml")) =>
            {
                blobs.push((name, entry.id()));
            }
            _ => {}
        }
        TreeWalkResult::Ok
    });
    if let Some(e) = refused {
        return Err(e);
    }
    walked.map_err(|e| GitError::Read(summary(&e)))?;
    Ok(blobs)
}
