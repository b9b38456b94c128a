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
mod tests {
    use super::*;

    fn body(git_ref: &str) -> Vec<u8> {
        serde_json::json!({
            "ref": git_ref,
            "after": "abc",
            "repository": {
                "full_name": "household/config",
                "clone_url": "http://127.0.0.1:3000/household/config.git",
                "html_url": "http://127.0.0.1:3000/household/config",
            },
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn matches_the_configured_repository_and_branch_however_spelled() {
        let push = parse(&body("refs/heads/main")).unwrap();
        let rows = [
            ("http://127.0.0.1:3000/household/config.git", "main", true),
            ("http://127.0.0.1:3000/household/config", "main", true),
            ("HTTP://127.0.0.1:3000/household/config/", "main", true),
            ("http://127.0.0.1:3000/household/config.git", "dev", false),
            ("http://127.0.0.1:3000/household/other.git", "main", false),
            ("http://127.0.0.1:3001/household/config.git", "main", false),
            ("file:///srv/household/config", "main", false),
        ];
        for (url, branch, want) in rows {
            assert_eq!(concerns(&push, url, branch), want, "{url} {branch}");
        }
    }

    #[test]
    fn a_tag_push_concerns_no_branch() {
        let push = parse(&body("refs/tags/main")).unwrap();
        assert_eq!(pushed_branch(&push), None);
        assert!(!concerns(
            &push,
            "http://127.0.0.1:3000/household/config.git",
            "main"
        ));
    }

    #[test]
    fn anything_else_is_not_a_push() {
        assert_eq!(parse(b"{}"), None);
        assert_eq!(parse(b"not json"), None);
        assert_eq!(parse(br#"{"ref":"refs/heads/main"}"#), None);
    }
}
