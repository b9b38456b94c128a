//! Issues the bot opens itself: finding them again, opening one, and editing one (title, body,
//! state and assignees in one request).

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{GiteaClient, GiteaError, login_ok, split_repo};

/// Issues asked for per page.
const PAGE: usize = 50;

#[derive(Deserialize)]
struct IssueDto {
    number: i64,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
    user: super::UserDto,
    #[serde(default)]
    state: String,
    #[serde(default)]
    assignees: Option<Vec<super::UserDto>>,
}

/// An issue, as far as ledgerops looks at one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub number: i64,
    pub author: String,
    pub title: String,
    pub body: String,
    pub open: bool,
    /// Logins, sorted.
    pub assignees: Vec<String>,
}

/// What an issue should say and be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueContent<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub open: bool,
    pub assignees: &'a [String],
}

impl IssueContent<'_> {
    fn json(&self, assignees: bool) -> Value {
        let mut v = json!({
            "title": self.title,
            "body": self.body,
            "state": if self.open { "open" } else { "closed" },
        });
        if assignees {
            v["assignees"] = json!(self.assignees);
        }
        v
    }
}

/// Whether Gitea refused the assignees themselves (a login that does not exist, or that cannot
/// be assigned in the repository), so that the issue is worth sending without them.
fn assignees_refused(e: &GiteaError) -> bool {
    matches!(e, GiteaError::Status { status, .. }
        if *status == StatusCode::UNPROCESSABLE_ENTITY || *status == StatusCode::FORBIDDEN)
}

impl GiteaClient {
    /// The issues (not pull requests), open or closed, that `author` opened in `repo` and that
    /// changed at or after `since` (RFC 3339), at most `max_pages` pages of 50. Empty when
    /// `author` cannot be put in a query.
    pub async fn issues_by(
        &self,
        repo: &str,
        author: &str,
        since: &str,
        max_pages: usize,
    ) -> Result<Vec<Issue>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !login_ok(author) {
            return Ok(Vec::new());
        }
        let since = urlencoding(since);
        let mut all = Vec::new();
        for page in 1..=max_pages {
            let path = format!(
                "/repos/{o}/{n}/issues?state=all&type=issues&created_by={author}&since={since}&limit={PAGE}&page={page}"
            );
            let v = self.call(Method::GET, &path, None).await?;
            let list: Vec<IssueDto> =
                serde_json::from_value(v).map_err(|e| GiteaError::Decode {
                    call: path,
                    detail: e.to_string(),
                })?;
            let last = list.len() < PAGE;
            all.extend(list.into_iter().map(|i| {
                let mut assignees: Vec<String> = i
                    .assignees
                    .unwrap_or_default()
                    .into_iter()
                    .map(|u| u.login)
                    .collect();
                assignees.sort();
                Issue {
                    number: i.number,
                    author: i.user.login,
                    title: i.title,
                    body: i.body,
                    open: i.state != "closed",
                    assignees,
                }
            }));
            if last {
                break;
            }
        }
        Ok(all)
    }

    /// Opens an issue; returns its number and whether its assignees were taken (a login Gitea
    /// cannot assign leaves the issue unassigned rather than unopened).
    pub async fn open_issue(
        &self,
        repo: &str,
        content: &IssueContent<'_>,
    ) -> Result<(i64, bool), GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues");
        let mut body = content.json(true);
        // Gitea opens issues open; the state is set by an edit.
        if let Some(b) = body.as_object_mut() {
            b.remove("state");
        }
        let (v, assigned) = match self.call(Method::POST, &path, Some(&body)).await {
            Ok(v) => (v, true),
            Err(e) if !content.assignees.is_empty() && assignees_refused(&e) => {
                if let Some(b) = body.as_object_mut() {
                    b.remove("assignees");
                }
                (self.call(Method::POST, &path, Some(&body)).await?, false)
            }
            Err(e) => return Err(e),
        };
        let number = v["number"].as_i64().ok_or_else(|| GiteaError::Decode {
            call: path,
            detail: "no number".into(),
        })?;
        Ok((number, assigned))
    }

    /// Sets an issue's title, body, state and assignees; returns whether the assignees were
    /// taken.
    pub async fn edit_issue(
        &self,
        repo: &str,
        number: i64,
        content: &IssueContent<'_>,
    ) -> Result<bool, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/issues/{number}");
        match self
            .call(Method::PATCH, &path, Some(&content.json(true)))
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if !content.assignees.is_empty() && assignees_refused(&e) => {
                self.call(Method::PATCH, &path, Some(&content.json(false)))
                    .await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

/// `since` for a query string: an RFC 3339 time holds `+` and `:`.
fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => {
                char::from(b).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}
