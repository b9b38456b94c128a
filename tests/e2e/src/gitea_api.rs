//! Calls to the test Gitea's API as one of its users, for suites that set up repositories,
//! comments and webhooks the way a person would.

use base64::Engine;
use ledgerops_testenv::gitea::{Gitea, User};
use reqwest::Method;
use serde_json::{Value, json};

/// `method path` on the shared Gitea's `/api/v1` as `user`, with an optional JSON body; panics
/// on anything but success, and returns the JSON answer (`Null` for an empty one).
pub async fn call(method: Method, path: &str, user: &User, body: Option<Value>) -> Value {
    try_call(method, path, user, body)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`call`], the failure (a transport error or an answer other than success) returned.
pub async fn try_call(
    method: Method,
    path: &str,
    user: &User,
    body: Option<Value>,
) -> Result<Value, String> {
    let gitea = Gitea::shared();
    let mut req = reqwest::Client::new()
        .request(method.clone(), format!("{}/api/v1{path}", gitea.url()))
        .header("Authorization", format!("token {}", user.token()));
    if let Some(b) = &body {
        req = req.json(b);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    if !status.is_success() {
        return Err(format!("{method} {path}: HTTP {status}: {text}"));
    }
    Ok(if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).map_err(|e| format!("{method} {path}: {e}: {text}"))?
    })
}

/// A comment as Gitea lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub id: i64,
    pub author: String,
    pub body: String,
}

/// Creates the repository `household/<name>` (with a `main` branch), makes each of `members`
/// a collaborator with its permission, and returns its full name.
pub async fn create_repo(name: &str, members: &[(&User, &str)]) -> String {
    let gitea = Gitea::shared();
    let created = call(
        Method::POST,
        "/orgs/household/repos",
        gitea.admin(),
        Some(json!({"name": name, "private": true, "auto_init": true, "default_branch": "main"})),
    )
    .await;
    let repo = created["full_name"].as_str().unwrap().to_owned();
    // A merge's post-receive hook can lose a race for Gitea's SQLite store and leave the pull
    // request open with its commits already on main; Gitea's own checker then marks it merged
    // only where manual merges are detected.
    call(
        Method::PATCH,
        &format!("/repos/{repo}"),
        gitea.admin(),
        Some(json!({"autodetect_manual_merge": true})),
    )
    .await;
    for (user, permission) in members {
        call(
            Method::PUT,
            &format!("/repos/{repo}/collaborators/{}", user.login()),
            gitea.admin(),
            Some(json!({"permission": permission})),
        )
        .await;
    }
    repo
}

/// Sends `repo`'s comment events to `url`, signed with `secret`.
pub async fn add_hook(repo: &str, url: &str, secret: &str, events: &[&str]) {
    call(
        Method::POST,
        &format!("/repos/{repo}/hooks"),
        Gitea::shared().admin(),
        Some(json!({
            "type": "gitea", "active": true, "events": events,
            "config": {"url": url, "content_type": "json", "secret": secret},
        })),
    )
    .await;
}

/// Opens an issue in `repo` as the writer; returns its number.
pub async fn open_issue(repo: &str, title: &str) -> i64 {
    let v = call(
        Method::POST,
        &format!("/repos/{repo}/issues"),
        Gitea::shared().writer(),
        Some(json!({"title": title})),
    )
    .await;
    v["number"].as_i64().unwrap()
}

/// Comments `body` on issue `issue` of `repo` as `user`; returns the comment's id.
pub async fn comment(repo: &str, user: &User, issue: i64, body: &str) -> i64 {
    let v = call(
        Method::POST,
        &format!("/repos/{repo}/issues/{issue}/comments"),
        user,
        Some(json!({"body": body})),
    )
    .await;
    v["id"].as_i64().unwrap()
}

/// Every comment of issue `issue` of `repo`, oldest first.
pub async fn comments(repo: &str, issue: i64) -> Vec<Comment> {
    let v = call(
        Method::GET,
        &format!("/repos/{repo}/issues/{issue}/comments"),
        Gitea::shared().admin(),
        None,
    )
    .await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| Comment {
            id: c["id"].as_i64().unwrap(),
            author: c["user"]["login"].as_str().unwrap().to_owned(),
            body: c["body"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The name of the AgentJob that comment `comment_id` on issue `issue` of `repo` becomes (names
/// are derived from where the comment is, nothing else).
pub fn job_name(repo: &str, issue: i64, comment_id: i64) -> String {
    ledgerops::logic::job::webhook::Incoming {
        delivery_id: "x".into(),
        event: ledgerops::api::agent_job::CommentEvent::IssueComment,
        repository: repo.to_owned(),
        issue_number: issue,
        comment_id,
        author: "x".into(),
        command: "x".into(),
        truncated_from: None,
    }
    .job_name()
}

/// The number at the end of a pull request's web address.
pub fn pull_number(url: &str) -> i64 {
    let last = url.rsplit('/').next().unwrap_or_default();
    last.parse()
        .unwrap_or_else(|_| panic!("not a pull request's address: {url}"))
}

/// Pull request `number` of `repo`, as the admin reads it.
pub async fn pull_request(repo: &str, number: i64) -> Value {
    let path = format!("/repos/{repo}/pulls/{number}");
    call(Method::GET, &path, Gitea::shared().admin(), None).await
}

/// The paths of the files pull request `number` of `repo` changes.
pub async fn pull_request_files(repo: &str, number: i64) -> Vec<String> {
    let path = format!("/repos/{repo}/pulls/{number}/files");
    let files = call(Method::GET, &path, Gitea::shared().admin(), None).await;
    let files = files.as_array().cloned().unwrap_or_default();
    files
        .iter()
        .map(|f| f["filename"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Commits a new file `path` holding `content` on `branch` of `repo` as `user`; with `from`,
/// `branch` is made from that branch first.
pub async fn push_file(
    repo: &str,
    user: &User,
    path: &str,
    content: &str,
    branch: &str,
    from: Option<&str>,
) {
    let encoded = base64::engine::general_purpose::STANDARD.encode(content);
    let mut body = json!({"content": encoded, "message": "not ledgerops", "branch": branch});
    if let Some(from) = from {
        body["branch"] = json!(from);
        body["new_branch"] = json!(branch);
    }
    call(
        Method::POST,
        &format!("/repos/{repo}/contents/{path}"),
        user,
        Some(body),
    )
    .await;
}

/// Opens a pull request from `head` into `main` of `repo` as `user`; its number.
pub async fn open_pull(repo: &str, user: &User, head: &str, title: &str) -> i64 {
    let v = call(
        Method::POST,
        &format!("/repos/{repo}/pulls"),
        user,
        Some(json!({"head": head, "base": "main", "title": title})),
    )
    .await;
    v["number"].as_i64().unwrap()
}

/// Merges pull request `number` of `repo` as `user`; the merge commit.
pub async fn merge(repo: &str, user: &User, number: i64) -> String {
    call(
        Method::POST,
        &format!("/repos/{repo}/pulls/{number}/merge"),
        user,
        Some(json!({"Do": "merge"})),
    )
    .await;
    // Gitea may answer the merge before the pull request shows its merge commit.
    let mut sha = None;
    crate::wait::eventually(
        &format!("pull request {number} shows its merge commit"),
        crate::scenario::WAIT,
        async || {
            sha = pull_request(repo, number).await["merge_commit_sha"]
                .as_str()
                .map(str::to_owned);
            sha.is_some()
        },
    )
    .await;
    sha.expect("the merge commit")
}
