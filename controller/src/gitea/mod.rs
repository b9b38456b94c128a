//! The Gitea REST client (`/api/v1`), authenticated as the bot user. The only code that talks to
//! Gitea.

use std::fmt;
use std::time::Duration;

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::logic::job::check::Failure;
use crate::logic::job::render::IssueComment;
use crate::logic::job::trust::{FetchedComment, issue_number_of};

pub mod branches;
pub mod commits;
pub mod history;
pub mod issues;
pub mod pulls;

/// A bot token; never printed.
#[derive(Clone)]
pub struct GiteaToken(String);

impl GiteaToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into().trim().to_owned())
    }
}

impl fmt::Debug for GiteaToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GiteaToken(<redacted>)")
    }
}

/// A failed Gitea call.
#[derive(Debug, thiserror::Error)]
pub enum GiteaError {
    #[error("Gitea {call}: not found")]
    NotFound { call: String },
    /// Only the status: Gitea's body is outside text and never reaches a status or comment.
    #[error("Gitea {call}: HTTP {status}")]
    Status { call: String, status: StatusCode },
    #[error("Gitea {call}: {source}")]
    Transport {
        call: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("Gitea {call}: unexpected answer: {detail}")]
    Decode { call: String, detail: String },
    #[error("`{0}` is not a repository name of the form owner/name")]
    BadRepository(String),
    #[error("`{0}` is not a full commit id (40 hexadecimal digits)")]
    BadCommit(String),
}

impl GiteaError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, GiteaError::NotFound { .. })
    }

    /// Whether asking again may help: an impossible repository name or a request Gitea refused
    /// as malformed will not; a 5xx, 401/403/429, a transport or decoding failure may.
    pub fn failure(&self) -> Failure {
        match self {
            GiteaError::BadRepository(_) | GiteaError::BadCommit(_) => Failure::Definite,
            GiteaError::Status { status, .. }
                if status.is_client_error()
                    && !matches!(status.as_u16(), 401 | 403 | 408 | 429) =>
            {
                Failure::Definite
            }
            _ => Failure::Transient,
        }
    }
}

/// The client.
#[derive(Clone, Debug)]
pub struct GiteaClient {
    api: String,
    token: GiteaToken,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct CommentDto {
    id: i64,
    body: String,
    user: UserDto,
    #[serde(default)]
    html_url: String,
}

#[derive(Deserialize)]
struct UserDto {
    login: String,
}

/// A pull request, as far as ledgerops looks at one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    pub number: i64,
    pub url: String,
    /// Neither closed nor merged.
    pub open: bool,
    /// The branch it is from, and the one it is into.
    pub head: String,
    pub base: String,
    /// Who opened it.
    pub author: String,
}

/// `owner/name` split, each part checked to be a plain Gitea name so it is safe in a path.
fn split_repo(repo: &str) -> Result<(&str, &str), GiteaError> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && s != "."
            && s != ".."
    };
    match repo.split_once('/') {
        Some((o, n)) if ok(o) && ok(n) => Ok((o, n)),
        _ => Err(GiteaError::BadRepository(repo.to_owned())),
    }
}

fn login_ok(login: &str) -> bool {
    !login.is_empty()
        && login
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl GiteaClient {
    /// A client for the Gitea at `base_url` (e.g. `https://git.example.com`).
    pub fn new(base_url: &str, token: GiteaToken) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(5))
            .build()?;
        Ok(Self {
            api: format!("{}/api/v1", base_url.trim_end_matches('/')),
            token,
            http,
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, GiteaError> {
        let call = format!("{method} {path}");
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("Authorization", format!("token {}", self.token.0));
        if let Some(body) = body {
            req = req.json(body);
        }
        let resp = req.send().await.map_err(|source| GiteaError::Transport {
            call: call.clone(),
            source,
        })?;
        let status = resp.status();
        let text = resp.text().await.map_err(|source| GiteaError::Transport {
            call: call.clone(),
            source,
        })?;
        if status == StatusCode::NOT_FOUND {
            return Err(GiteaError::NotFound { call });
        }
        if !status.is_success() {
            return Err(GiteaError::Status { call, status });
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        // serde's message can quote the body: say only where it broke.
        serde_json::from_str(&text).map_err(|e| GiteaError::Decode {
            call,
            detail: format!(
                "not the JSON expected (line {}, column {})",
                e.line(),
                e.column()
            ),
        })
    }

    /// `user`'s permission on `repo`: `none`, `read`, `write`, `admin` or `owner`. Gitea answers
    /// this to site admins, repository admins and the user themself, so the bot must be a
    /// repository admin. An unknown user has `none`.
    pub async fn permission(&self, repo: &str, user: &str) -> Result<String, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !login_ok(user) {
            return Ok("none".into());
        }
        let path = format!("/repos/{o}/{n}/collaborators/{user}/permission");
        match self.call(Method::GET, &path, None).await {
            Ok(v) => {
                v["permission"]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| GiteaError::Decode {
                        call: path,
                        detail: "no permission field".into(),
                    })
            }
            Err(e) if e.is_not_found() => Ok("none".into()),
            Err(e) => Err(e),
        }
    }

    /// Every comment of issue or pull request `issue`, oldest first.
    pub async fn list_comments(
        &self,
        repo: &str,
        issue: i64,
    ) -> Result<Vec<IssueComment>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/{issue}/comments");
        let v = self.call(Method::GET, &path, None).await?;
        let list: Vec<CommentDto> = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
            call: path,
            detail: e.to_string(),
        })?;
        Ok(list
            .into_iter()
            .map(|c| IssueComment {
                id: c.id,
                author: c.user.login,
                body: c.body,
            })
            .collect())
    }

    /// Posts a comment; returns its id.
    pub async fn create_comment(
        &self,
        repo: &str,
        issue: i64,
        body: &str,
    ) -> Result<i64, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/{issue}/comments");
        let v = self
            .call(Method::POST, &path, Some(&json!({ "body": body })))
            .await?;
        v["id"].as_i64().ok_or_else(|| GiteaError::Decode {
            call: path,
            detail: "no id".into(),
        })
    }

    /// Replaces the body of comment `id`; `NotFound` when it was deleted.
    pub async fn edit_comment(&self, repo: &str, id: i64, body: &str) -> Result<(), GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/comments/{id}");
        self.call(Method::PATCH, &path, Some(&json!({ "body": body })))
            .await?;
        Ok(())
    }

    /// Comment `id`'s author and body; `NotFound` when it was deleted.
    pub async fn get_comment(&self, repo: &str, id: i64) -> Result<IssueComment, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/comments/{id}");
        let v = self.call(Method::GET, &path, None).await?;
        if v.is_null() {
            // 204: Gitea answers so for a comment that is not a plain comment.
            return Err(GiteaError::NotFound { call: path });
        }
        let c: CommentDto = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
            call: path,
            detail: e.to_string(),
        })?;
        Ok(IssueComment {
            id: c.id,
            author: c.user.login,
            body: c.body,
        })
    }

    /// Comment `id` of `repo` as the authenticity check needs it; None when Gitea has no such
    /// comment in that repository (404, or 204 for a comment that is not a plain comment).
    pub async fn fetch_comment(
        &self,
        repo: &str,
        id: i64,
    ) -> Result<Option<FetchedComment>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/comments/{id}");
        let v = match self.call(Method::GET, &path, None).await {
            Ok(v) if v.is_null() => return Ok(None),
            Ok(v) => v,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let c: CommentDto = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
            call: path,
            detail: e.to_string(),
        })?;
        Ok(Some(FetchedComment {
            author: c.user.login,
            body: c.body,
            issue_number: issue_number_of(&c.html_url),
        }))
    }

    /// The repository's default branch.
    pub async fn default_branch(&self, repo: &str) -> Result<String, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}");
        let v = self.call(Method::GET, &path, None).await?;
        v["default_branch"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| GiteaError::Decode {
                call: path,
                detail: "no default_branch".into(),
            })
    }

    /// Commits a new file `path` on a new branch `new_branch` made from `base`.
    pub async fn create_file_on_new_branch(
        &self,
        repo: &str,
        file: &str,
        content: &str,
        message: &str,
        base: &str,
        new_branch: &str,
    ) -> Result<(), GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/contents/{file}");
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode(content),
            "message": message,
            "branch": base,
            "new_branch": new_branch,
        });
        self.call(Method::POST, &path, Some(&body)).await?;
        Ok(())
    }

    /// Opens a pull request from `head` into `base`.
    pub async fn create_pull_request(
        &self,
        repo: &str,
        head: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<PullRequest, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/pulls");
        let req = json!({"head": head, "base": base, "title": title, "body": body});
        let v = self.call(Method::POST, &path, Some(&req)).await?;
        pulls::pull_request_of(&v, &path)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
