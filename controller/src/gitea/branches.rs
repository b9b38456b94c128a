//! What a branch holds: its commits that are not on a base and who wrote them, a commit's tree,
//! a file's text; and deleting one. How ledgerops sees whether a rule proposal's branch holds
//! only what ledgerops wrote, and removes the branch a failed job left.

use base64::Engine;
use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use super::commits::checked_sha;
use super::{GiteaClient, GiteaError, split_repo};
use crate::logic::rule::vouch::{BranchCommit, TreeEntry};

/// The most pages of a tree read (Gitea gives at most 1000 entries a page): a config
/// repository larger than that is not one ledgerops proposes to.
const MAX_TREE_PAGES: u32 = 10;

/// A branch name Gitea's route takes as one path segment: letters, digits, `.`, `_`, `-`.
pub(super) fn plain_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with('.')
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A branch name of plain segments joined by `/` (`ledgerops/aj-1`): Gitea's branch and
/// compare routes take the rest of the path as the name.
fn branch_path(branch: &str) -> bool {
    branch.split('/').all(plain_branch)
}

#[derive(Deserialize)]
struct CompareDto {
    #[serde(default)]
    commits: Vec<CommitDto>,
}

#[derive(Deserialize)]
struct CommitDto {
    sha: String,
    #[serde(default)]
    parents: Vec<ParentDto>,
    /// The Gitea user whose email the commit's author has; null when none has it.
    #[serde(default)]
    author: Option<super::UserDto>,
}

#[derive(Deserialize)]
struct ParentDto {
    sha: String,
}

#[derive(Deserialize)]
struct TreeDto {
    #[serde(default)]
    tree: Vec<EntryDto>,
    #[serde(default)]
    truncated: bool,
}

#[derive(Deserialize)]
struct EntryDto {
    path: String,
    mode: String,
    #[serde(rename = "type")]
    kind: String,
    sha: String,
}

fn decode<T: serde::de::DeserializeOwned>(v: Value, call: &str) -> Result<T, GiteaError> {
    serde_json::from_value(v).map_err(|e| GiteaError::Decode {
        call: call.to_owned(),
        detail: e.to_string(),
    })
}

/// The commits of a comparison as Gitea answers one.
fn branch_commits_of(compare: CompareDto) -> Vec<BranchCommit> {
    compare
        .commits
        .into_iter()
        .map(|c| BranchCommit {
            sha: c.sha,
            parents: c.parents.into_iter().map(|p| p.sha).collect(),
        })
        .collect()
}

/// One page of a tree as Gitea answers it: its files, symlinks and submodules, and whether
/// more pages follow.
fn tree_page_of(v: Value, call: &str) -> Result<(Vec<TreeEntry>, bool), GiteaError> {
    let page: TreeDto = decode(v, call)?;
    let entries = page
        .tree
        .into_iter()
        .filter(|e| e.kind != "tree")
        .map(|e| TreeEntry {
            path: e.path,
            mode: e.mode,
            sha: e.sha,
        })
        .collect();
    Ok((entries, page.truncated))
}

impl GiteaClient {
    /// The commits on `head` that are not on `base` (from their merge base), each with its
    /// parents; `None` when `head` is not there (or a name cannot go into a path).
    pub async fn branch_commits(
        &self,
        repo: &str,
        base: &str,
        head: &str,
    ) -> Result<Option<Vec<BranchCommit>>, GiteaError> {
        Ok(self.compare(repo, base, head).await?.map(branch_commits_of))
    }

    /// Who authored each commit on `head` that is not on `base`: the Gitea user with the
    /// author's email, None when no user has it. `None` when `head` is not there.
    pub async fn branch_authors(
        &self,
        repo: &str,
        base: &str,
        head: &str,
    ) -> Result<Option<Vec<Option<String>>>, GiteaError> {
        let compare = self.compare(repo, base, head).await?;
        Ok(compare.map(|c| {
            c.commits
                .into_iter()
                .map(|c| c.author.map(|a| a.login))
                .collect()
        }))
    }

    async fn compare(
        &self,
        repo: &str,
        base: &str,
        head: &str,
    ) -> Result<Option<CompareDto>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !plain_branch(base) || !branch_path(head) {
            return Ok(None);
        }
        // Neither the files of each commit nor their signatures are read: spared to Gitea.
        let path = format!("/repos/{o}/{n}/compare/{base}...{head}?files=false&verification=false");
        match self.call(Method::GET, &path, None).await {
            Ok(v) => decode(v, &path).map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes `branch`; false when it was not there (or its name cannot go into a path).
    pub async fn delete_branch(&self, repo: &str, branch: &str) -> Result<bool, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !branch_path(branch) {
            return Ok(false);
        }
        let path = format!("/repos/{o}/{n}/branches/{branch}");
        match self.call(Method::DELETE, &path, None).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every file, symlink and submodule of commit `sha`'s tree.
    pub async fn tree(&self, repo: &str, sha: &str) -> Result<Vec<TreeEntry>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let sha = checked_sha(sha)?;
        let mut entries = Vec::new();
        for page in 1..=MAX_TREE_PAGES {
            let path =
                format!("/repos/{o}/{n}/git/trees/{sha}?recursive=true&per_page=1000&page={page}");
            let v = self.call(Method::GET, &path, None).await?;
            let (more, truncated) = tree_page_of(v, &path)?;
            entries.extend(more);
            if !truncated {
                return Ok(entries);
            }
        }
        Err(GiteaError::Decode {
            call: format!("GET /repos/{o}/{n}/git/trees/{sha}"),
            detail: format!("more than {MAX_TREE_PAGES} pages of entries"),
        })
    }

    /// The text of `file` on branch (or at commit) `branch`; `None` when it is not there (or
    /// the name is not a plain one).
    pub async fn file_on_branch(
        &self,
        repo: &str,
        file: &str,
        branch: &str,
    ) -> Result<Option<String>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !plain_branch(branch) {
            return Ok(None);
        }
        let path = format!("/repos/{o}/{n}/contents/{file}?ref={branch}");
        let v = match self.call(Method::GET, &path, None).await {
            Ok(v) => v,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        // Gitea wraps the base64 text in lines.
        let encoded: String = v["content"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| GiteaError::Decode {
                call: path.clone(),
                detail: format!("content: {e}"),
            })?;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }
}

#[cfg(test)]
#[path = "branches_tests.rs"]
mod tests;
