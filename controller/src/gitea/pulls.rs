//! Finding a pull request by its branches: how a proposal interrupted after its branch was
//! pushed is completed, never opened twice.

use reqwest::Method;

use super::{GiteaClient, GiteaError, PullRequest, split_repo};

/// A branch name Gitea's route takes as one path segment: letters, digits, `.`, `_`, `-`.
fn plain_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with('.')
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl GiteaClient {
    /// The pull request from `head` into `base`, open or not, if there is one. `None` too when
    /// either branch name cannot be looked up this way (not a plain name).
    pub async fn pull_request_between(
        &self,
        repo: &str,
        base: &str,
        head: &str,
    ) -> Result<Option<PullRequest>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !plain_branch(base) || !plain_branch(head) {
            return Ok(None);
        }
        let path = format!("/repos/{o}/{n}/pulls/{base}/{head}");
        match self.call(Method::GET, &path, None).await {
            Ok(v) => match (v["number"].as_i64(), v["html_url"].as_str()) {
                (Some(number), Some(url)) => Ok(Some(PullRequest {
                    number,
                    url: url.to_owned(),
                })),
                _ => Err(GiteaError::Decode {
                    call: path,
                    detail: "no number or html_url".into(),
                }),
            },
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_branch_name_goes_into_a_path() {
        for ok in ["main", "ledgerops-rule-rail-co-0123abcd", "release_1.2"] {
            assert!(plain_branch(ok), "{ok}");
        }
        for bad in ["", "a/b", "..", ".hidden", "a?b", "a b", "a%2Fb"] {
            assert!(!plain_branch(bad), "{bad}");
        }
    }
}
