//! Commit statuses: how a ConfigRepo reports what became of a plan back to the repository it
//! came from.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{GiteaClient, GiteaError, split_repo};

/// A commit's latest status of one context, as Gitea shows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CommitStatus {
    pub context: String,
    #[serde(rename = "status")]
    pub state: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Deserialize)]
struct CombinedDto {
    #[serde(default)]
    statuses: Option<Vec<CommitStatus>>,
}

/// A full commit id, checked before it is put in a path.
pub(super) fn checked_sha(sha: &str) -> Result<&str, GiteaError> {
    if sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(sha)
    } else {
        Err(GiteaError::BadCommit(sha.to_owned()))
    }
}

impl GiteaClient {
    /// The latest status of `context` on commit `sha`, if it has one.
    pub async fn commit_status(
        &self,
        repo: &str,
        sha: &str,
        context: &str,
    ) -> Result<Option<CommitStatus>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/commits/{}/status", checked_sha(sha)?);
        let v = match self.call(Method::GET, &path, None).await {
            Ok(v) => v,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let combined: CombinedDto = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
            call: path,
            detail: e.to_string(),
        })?;
        Ok(combined
            .statuses
            .unwrap_or_default()
            .into_iter()
            .find(|s| s.context == context))
    }

    /// Sets the status of `context` on commit `sha`.
    pub async fn set_commit_status(
        &self,
        repo: &str,
        sha: &str,
        context: &str,
        state: &str,
        description: &str,
    ) -> Result<(), GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/statuses/{}", checked_sha(sha)?);
        let body = json!({"context": context, "state": state, "description": description});
        self.call(Method::POST, &path, Some(&body)).await?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "commits_tests.rs"]
mod tests;
