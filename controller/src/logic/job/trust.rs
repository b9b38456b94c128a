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
mod tests {
    use super::*;

    #[test]
    fn allowlist_entries_and_matches() {
        assert!(Allowlist::new::<&str>(&[]).is_err());
        assert!(Allowlist::new(&["household"]).is_err());
        assert!(Allowlist::new(&["a/b/c"]).is_err());
        assert!(Allowlist::new(&["../x"]).is_err());
        let list = Allowlist::new(&["Household/Ledger-Config", " other/repo "]).unwrap();
        let cases = [
            ("household/ledger-config", true),
            ("HOUSEHOLD/LEDGER-CONFIG", true),
            ("other/repo", true),
            ("household/ledger-config2", false),
            ("evil/ledger-config", false),
            ("household", false),
            ("", false),
        ];
        for (repo, want) in cases {
            assert_eq!(list.allows(repo), want, "{repo}");
        }
    }

    #[test]
    fn issue_numbers_from_web_urls() {
        let cases = [
            ("http://g/o/r/issues/12#issuecomment-7", Some(12)),
            ("http://g/o/r/pulls/3#issuecomment-9", Some(3)),
            ("http://g/o/r/issues/12", Some(12)),
            ("http://g/o/r/commit/12#x", None),
            ("http://g/o/r/issues/x#issuecomment-7", None),
            ("", None),
        ];
        for (url, want) in cases {
            assert_eq!(issue_number_of(url), want, "{url}");
        }
    }

    #[test]
    fn a_comment_matches_only_its_claim() {
        let claim = Claim {
            comment_id: 7,
            issue_number: 4,
            author: "writer",
            command: "/agent approve apr-1",
            truncated_from: None,
        };
        let c = |author: &str, body: &str, issue| FetchedComment {
            author: author.into(),
            body: body.into(),
            issue_number: issue,
        };
        let cases: [(Option<FetchedComment>, Result<(), &str>); 7] = [
            (Some(c("writer", "/agent approve apr-1", Some(4))), Ok(())),
            (Some(c("Writer", "/agent approve apr-1", Some(4))), Ok(())),
            (None, Err("does not exist")),
            (
                Some(c("admin", "/agent approve apr-1", Some(4))),
                Err("written by `admin`"),
            ),
            (
                Some(c("writer", "/agent approve apr-2", Some(4))),
                Err("does not say what"),
            ),
            (
                Some(c("writer", "/agent approve apr-1", Some(5))),
                Err("not on issue 4"),
            ),
            (
                Some(c("writer", "/agent approve apr-1", None)),
                Err("not on issue 4"),
            ),
        ];
        let long = format!("/agent status {}", "x".repeat(5000));
        let (kept, length) = kept_command(&long);
        let cut = Claim {
            command: &kept,
            truncated_from: length,
            ..claim
        };
        let fetched = c("writer", &long, Some(4));
        assert_eq!(comment_matches(cut, Some(&fetched)), Ok(()));
        let longer = c("writer", &format!("{long}x"), Some(4));
        assert!(
            comment_matches(cut, Some(&longer)).is_err(),
            "same cut, other length"
        );
        let uncut = Claim {
            truncated_from: None,
            ..cut
        };
        assert!(
            comment_matches(uncut, Some(&fetched)).is_err(),
            "a cut not claimed"
        );
        for (fetched, want) in cases {
            let got = comment_matches(claim, fetched.as_ref());
            match want {
                Ok(()) => assert_eq!(got, Ok(()), "{fetched:?}"),
                Err(part) => {
                    let e = got.expect_err("a mismatch");
                    assert!(e.contains(part), "{e} ({fetched:?})");
                    assert!(e.contains("comment 7"), "{e}");
                }
            }
        }
    }
}
