//! Issues the bot opens itself: finding its open one again, and opening one.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{GiteaClient, GiteaError, login_ok, split_repo};

#[derive(Deserialize)]
struct IssueDto {
    number: i64,
    #[serde(default)]
    body: String,
    user: super::UserDto,
}

/// An issue, as far as ledgerops looks at one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub number: i64,
    pub author: String,
    pub body: String,
}

impl GiteaClient {
    /// The open issues (not pull requests) `author` opened in `repo`, the first 50, newest
    /// first. Empty when `author` cannot be put in a query.
    pub async fn open_issues_by(&self, repo: &str, author: &str) -> Result<Vec<Issue>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !login_ok(author) {
            return Ok(Vec::new());
        }
        let path =
            format!("/repos/{o}/{n}/issues?state=open&type=issues&created_by={author}&limit=50");
        let v = self.call(Method::GET, &path, None).await?;
        let list: Vec<IssueDto> = serde_json::from_value(v).map_err(|e| GiteaError::Decode {
            call: path,
            detail: e.to_string(),
        })?;
        Ok(list
            .into_iter()
            .map(|i| Issue {
                number: i.number,
                author: i.user.login,
                body: i.body,
            })
            .collect())
    }

    /// Opens an issue; returns its number.
    pub async fn create_issue(
        &self,
        repo: &str,
        title: &str,
        body: &str,
    ) -> Result<i64, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues");
        let v = self
            .call(
                Method::POST,
                &path,
                Some(&json!({"title": title, "body": body})),
            )
            .await?;
        v["number"].as_i64().ok_or_else(|| GiteaError::Decode {
            call: path,
            detail: "no number".into(),
        })
    }
}
