//! Whether a job may be believed: its repository is on the operator's allowlist, and the Gitea
//! comment it names exists, on its issue, written by its author, saying exactly its command.
//! An AgentJob is only a claim (anyone allowed to create one could have written it); Gitea's
//! answer, asked as the bot, is the evidence.

use super::webhook::kept_command;

/// The repositories whose comments may create jobs, as `owner/name`, compared without case
/// (Gitea's names are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowlist(Vec<String>);

impl Allowlist {
    /// Checks every entry is `owner/name`; an empty list is refused (fail closed).
    pub fn new<S: AsRef<str>>(entries: &[S]) -> Result<Self, String> {
        if entries.is_empty() {
            return Err("no repository is allowed: give --gitea-repository owner/name (repeatable) or LEDGEROPS_GITEA_REPOSITORIES".into());
        }
        let mut list = Vec::new();
        for e in entries {
            let e = e.as_ref().trim();
            if !is_repository_name(e) {
                return Err(format!(
                    "--gitea-repository `{e}` is not of the form owner/name"
                ));
            }
            list.push(e.to_ascii_lowercase());
        }
        Ok(Self(list))
    }

    /// Whether comments of `repository` may create jobs.
    pub fn allows(&self, repository: &str) -> bool {
        let r = repository.to_ascii_lowercase();
        self.0.contains(&r)
    }

    pub fn entries(&self) -> &[String] {
        &self.0
    }
}

/// `owner/name` with plain Gitea name characters in both parts.
pub fn is_repository_name(s: &str) -> bool {
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    matches!(s.split_once('/'), Some((o, n)) if ok(o) && ok(n))
}

/// A comment as Gitea returned it for the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedComment {
    pub author: String,
    pub body: String,
    /// The issue or pull request number, from the comment's web URL (None when it has none).
    pub issue_number: Option<i64>,
}

/// What the job claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    pub comment_id: i64,
    pub issue_number: i64,
    pub author: &'a str,
    pub command: &'a str,
    /// The comment's length when the job keeps it cut.
    pub truncated_from: Option<i64>,
}

/// Whether the comment Gitea returned (None: it does not exist) is the one the job claims.
/// Err holds the reason shown in the job's status.
pub fn comment_matches(claim: Claim<'_>, fetched: Option<&FetchedComment>) -> Result<(), String> {
    let id = claim.comment_id;
    let Some(c) = fetched else {
        return Err(format!(
            "comment {id} does not exist in the repository; an AgentJob is only run for a comment Gitea has"
        ));
    };
    if !c.author.eq_ignore_ascii_case(claim.author) {
        return Err(format!(
            "comment {id} was written by `{}`, not by `{}` as the AgentJob says",
            super::state::truncate(&c.author, 80),
            super::state::truncate(claim.author, 80)
        ));
    }
    if c.issue_number != Some(claim.issue_number) {
        return Err(format!(
            "comment {id} is not on issue {} as the AgentJob says",
            claim.issue_number
        ));
    }
    // The webhook keeps a long comment cut, with its length; compare what it would have kept.
    if kept_command(&c.body) != (claim.command.to_owned(), claim.truncated_from) {
        return Err(format!(
            "comment {id} does not say what the AgentJob says (edited since, or forged); send the command again"
        ));
    }
    Ok(())
}

/// The issue or pull request number at the end of a comment's web URL,
/// `…/issues/12#issuecomment-7` or `…/pulls/12#issuecomment-7`; None for anything else.
pub fn issue_number_of(html_url: &str) -> Option<i64> {
    let path = html_url.split('#').next()?;
    let mut parts = path.rsplit('/');
    let number = parts.next()?.parse::<i64>().ok()?;
    matches!(parts.next(), Some("issues" | "pulls")).then_some(number)
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
