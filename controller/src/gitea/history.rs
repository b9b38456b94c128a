//! The commits between two revisions of a branch, with who wrote them and the pull request each
//! was merged from: what a ConfigRepo's sync names as the authors of what it applies.

use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use super::commits::checked_sha;
use super::{GiteaClient, GiteaError, UserDto, split_repo};
use crate::logic::config_repo::authorship::RangeCommit;

/// Gitea's page size for commit listings (its `[git] COMMITS_RANGE_SIZE` default).
const PAGE: usize = 50;

#[derive(Deserialize)]
struct CommitDto {
    sha: String,
    #[serde(default)]
    parents: Vec<Value>,
    author: Option<UserDto>,
    #[serde(default)]
    files: Option<Vec<FileDto>>,
}

#[derive(Deserialize)]
struct FileDto {
    filename: String,
}

/// One page of a commit listing: each commit's id and what the sync needs of it.
fn page_of(v: Value, call: &str) -> Result<Vec<(String, RangeCommit)>, GiteaError> {
    let list: Vec<CommitDto> = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
        call: call.to_owned(),
        detail: e.to_string(),
    })?;
    Ok(list
        .into_iter()
        .map(|c| {
            let commit = RangeCommit {
                parents: c.parents.len(),
                author: c.author.map(|a| a.login),
                files: c
                    .files
                    .unwrap_or_default()
                    .into_iter()
                    .map(|f| f.filename)
                    .collect(),
                pull_author: None,
            };
            (c.sha, commit)
        })
        .collect())
}

impl GiteaClient {
    /// The commits of `head` that `since` does not have (all of `head`'s history when there is
    /// no `since`), newest first, each with the author of the pull request merged as it. `None`
    /// when there are more than `max`.
    pub async fn history(
        &self,
        repo: &str,
        head: &str,
        since: Option<&str>,
        max: usize,
    ) -> Result<Option<Vec<RangeCommit>>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let head = checked_sha(head)?;
        let not = match since {
            Some(s) => format!("&not={}", checked_sha(s)?),
            None => String::new(),
        };
        let mut listed = Vec::new();
        for page in 1.. {
            let path = format!(
                "/repos/{o}/{n}/commits?sha={head}{not}&stat=false&verification=false&files=true&limit={PAGE}&page={page}"
            );
            let commits = page_of(self.call(Method::GET, &path, None).await?, &path)?;
            let last = commits.len() < PAGE;
            listed.extend(commits);
            if listed.len() > max {
                return Ok(None);
            }
            if last {
                break;
            }
        }
        let mut out = Vec::with_capacity(listed.len());
        for (sha, mut commit) in listed {
            let pull = self.merged_pull_request(repo, &sha).await?;
            commit.pull_author = pull.map(|p| p.author);
            out.push(commit);
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
