//! Gitea push deliveries: which ConfigRepos a push concerns, so they sync at once instead of at
//! their next interval (and which repository a push to a rule proposal's branch went to, so its
//! pull request is looked at again). A push only wakes; what is acted on is always read anew.

use serde::Deserialize;

/// A push, as far as a ConfigRepo cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push {
    /// `refs/heads/<branch>`.
    pub git_ref: String,
    /// The repository's clone and web URLs, normalised.
    pub urls: Vec<String>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "ref")]
    git_ref: String,
    repository: Repository,
}

#[derive(Deserialize)]
struct Repository {
    #[serde(default)]
    clone_url: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

/// The push in a `push` delivery's body; `None` when it is not one.
pub fn parse(body: &[u8]) -> Option<Push> {
    let p: Payload = serde_json::from_slice(body).ok()?;
    let urls = [p.repository.clone_url, p.repository.html_url]
        .into_iter()
        .flatten()
        .map(|u| normalise(&u))
        .collect();
    Some(Push {
        git_ref: p.git_ref,
        urls,
    })
}

/// Whether `push` moved `branch` of the repository at `url`.
pub fn concerns(push: &Push, url: &str, branch: &str) -> bool {
    pushed_branch(push) == Some(branch) && to_repository(push, url)
}

/// The branch `push` moved; `None` for a tag.
pub fn pushed_branch(push: &Push) -> Option<&str> {
    push.git_ref.strip_prefix("refs/heads/")
}

/// Whether `push` went to the repository at `url`.
pub fn to_repository(push: &Push, url: &str) -> bool {
    push.urls.iter().any(|u| *u == normalise(url))
}

/// The same repository however its URL is spelled: case of scheme and host, a trailing `/` or
/// `.git`.
fn normalise(url: &str) -> String {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    match url::Url::parse(trimmed) {
        Ok(u) => u.as_str().trim_end_matches('/').to_owned(),
        Err(_) => trimmed.to_owned(),
    }
}

#[cfg(test)]
#[path = "push_tests.rs"]
mod tests;
