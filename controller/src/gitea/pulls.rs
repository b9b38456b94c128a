//! Finding a rule proposal's pull request, reading it, and closing it: how a proposal
//! interrupted after its pull request was opened is completed, never opened twice, and how one
//! whose branch came to hold what ledgerops did not write is withdrawn. Also the pull request a
//! commit was merged from: where feedback goes, and whose change a revision brings.

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::branches::plain_branch;
use super::commits::checked_sha;
use super::{GiteaClient, GiteaError, PullRequest, login_ok, split_repo};

#[derive(Deserialize)]
struct PullDto {
    number: i64,
    html_url: String,
    state: String,
    head: RefDto,
    base: RefDto,
    user: super::UserDto,
}

#[derive(Deserialize)]
struct RefDto {
    #[serde(rename = "ref")]
    name: String,
}

/// A pull request as Gitea answers one.
pub(super) fn pull_request_of(v: &Value, call: &str) -> Result<PullRequest, GiteaError> {
    let pr = PullDto::deserialize(v).map_err(|e| GiteaError::Decode {
        call: call.to_owned(),
        detail: e.to_string(),
    })?;
    Ok(PullRequest {
        number: pr.number,
        url: pr.html_url,
        open: pr.state == "open",
        head: pr.head.name,
        base: pr.base.name,
        author: pr.user.login,
    })
}

impl GiteaClient {
    /// The open pull request `author` opened from `head` into `base`, if there is one (among
    /// the first 50 of theirs into `base`). `None` too when a name cannot be put in a query.
    pub async fn open_pull_request_from(
        &self,
        repo: &str,
        base: &str,
        head: &str,
        author: &str,
    ) -> Result<Option<PullRequest>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !plain_branch(base) || !login_ok(author) {
            return Ok(None);
        }
        let path =
            format!("/repos/{o}/{n}/pulls?state=open&base_branch={base}&poster={author}&limit=50");
        let v = self.call(Method::GET, &path, None).await?;
        let list = v.as_array().ok_or_else(|| GiteaError::Decode {
            call: path.clone(),
            detail: "not a list".into(),
        })?;
        for pr in list {
            let pr = pull_request_of(pr, &path)?;
            if pr.open && pr.head == head && pr.base == base && pr.author == author {
                return Ok(Some(pr));
            }
        }
        Ok(None)
    }

    /// Pull request `number`.
    pub async fn pull_request(&self, repo: &str, number: i64) -> Result<PullRequest, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/pulls/{number}");
        let v = self.call(Method::GET, &path, None).await?;
        pull_request_of(&v, &path)
    }

    /// The pull request that was merged as commit `sha`, if one was.
    pub async fn merged_pull_request(
        &self,
        repo: &str,
        sha: &str,
    ) -> Result<Option<PullRequest>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/commits/{}/pull", checked_sha(sha)?);
        match self.call(Method::GET, &path, None).await {
            Ok(v) => pull_request_of(&v, &path).map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Closes pull request `number` (its branch stays).
    pub async fn close_pull_request(&self, repo: &str, number: i64) -> Result<(), GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/pulls/{number}");
        self.call(Method::PATCH, &path, Some(&json!({"state": "closed"})))
            .await?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "pulls_tests.rs"]
mod tests;
