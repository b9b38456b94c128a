//! Finding a pull request by its branches, and reading what it changes: how a proposal
//! interrupted after its branch was pushed is completed, never opened twice, and never vouches
//! for a branch someone else wrote.

use base64::Engine;
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

    /// The paths pull request `number` changes (the first 50: more is already too many for a
    /// proposal).
    pub async fn pull_request_files(
        &self,
        repo: &str,
        number: i64,
    ) -> Result<Vec<String>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        let path = format!("/repos/{o}/{n}/pulls/{number}/files?limit=50");
        let v = self.call(Method::GET, &path, None).await?;
        let files = v.as_array().ok_or_else(|| GiteaError::Decode {
            call: path.clone(),
            detail: "not a list".into(),
        })?;
        Ok(files
            .iter()
            .filter_map(|f| f["filename"].as_str().map(str::to_owned))
            .collect())
    }

    /// The text of `file` on branch `branch`; `None` when it is not there (or the branch name
    /// is not a plain one).
    pub async fn file_on_branch(
        &self,
        repo: &str,
        file: &str,
        branch: &str,
    ) -> Result<Option<String>, GiteaError> {
        let (o, n) = split_repo(repo)?;
        if !plain_branch(branch) {
            return Ok(None);
        }
        let path = format!("/repos/{o}/{n}/contents/{file}?ref={branch}");
        let v = match self.call(Method::GET, &path, None).await {
            Ok(v) => v,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        // Gitea wraps the base64 text in lines.
        let encoded: String = v["content"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| GiteaError::Decode {
                call: path.clone(),
                detail: format!("content: {e}"),
            })?;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
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
