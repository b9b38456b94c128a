//! What a job that did not succeed leaves behind in Gitea. A command that creates a branch and
//! opens a pull request from it can fail or be refused half-way (Gitea down, permission revoked,
//! the process killed); its branch, and the pull request it may have opened without recording,
//! would then stay for good. The cleanup removes them, but only what the bot alone made: a
//! branch someone else committed to, and its pull request, are theirs now and are left.

use super::escape;
use super::state::JobState;
use crate::api::agent_job::JobPhase;

/// The branch a command of job `job` creates: derived from the job, so that the branch of an
/// interrupted job is found again, and so that only this name is ever cleaned up.
pub fn branch_of(job: &str) -> String {
    format!("ledgerops/{job}")
}

/// The branch of job `job` that ended without success and is not cleaned up yet. Only the
/// name the job itself creates: a recorded branch of any other name is never removed, whoever
/// managed to record it.
pub fn needed<'a>(job: &str, state: &'a JobState) -> Option<&'a str> {
    let ended = matches!(state.phase, JobPhase::Failed | JobPhase::Rejected);
    match (&state.branch, &state.cleanup) {
        (Some(branch), None) if ended && *branch == branch_of(job) => Some(branch),
        _ => None,
    }
}

/// What Gitea holds of the job's branch, read right before the cleanup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The open pull request from the branch that the bot opened: its number and address.
    pub pull_request: Option<(i64, String)>,
    /// Who authored each commit of the branch beyond its base (None: Gitea knows no user for
    /// it); None when the branch does not exist.
    pub commit_authors: Option<Vec<Option<String>>>,
}

/// What to do, and the sentence the job's comment and status say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleanup {
    pub close_pull_request: Option<i64>,
    pub delete_branch: bool,
    pub note: String,
}

/// The cleanup of `branch`, which `bot` created for the job, given what `found` holds.
pub fn plan(branch: &str, bot: &str, found: &Found) -> Cleanup {
    let name = escape::code(branch);
    let Some(authors) = &found.commit_authors else {
        // A pull request needs its head branch: without one, nothing is left to close.
        return Cleanup {
            close_pull_request: None,
            delete_branch: false,
            note: format!("The branch {name} it created is gone; nothing was left behind."),
        };
    };
    if authors.iter().any(|a| a.as_deref() != Some(bot)) {
        let left = match &found.pull_request {
            Some((_, url)) => format!(
                "The branch {name} and the pull request {} were left as they are",
                escape::code(url)
            ),
            None => format!("The branch {name} was left as it is"),
        };
        return Cleanup {
            close_pull_request: None,
            delete_branch: false,
            note: format!("{left}: the branch holds commits ledgerops did not make."),
        };
    }
    match &found.pull_request {
        Some((number, url)) => Cleanup {
            close_pull_request: Some(*number),
            delete_branch: true,
            note: format!(
                "Cleaned up: closed the pull request {} and deleted the branch {name}.",
                escape::code(url)
            ),
        },
        None => Cleanup {
            close_pull_request: None,
            delete_branch: true,
            note: format!("Cleaned up: deleted the branch {name}."),
        },
    }
}

#[cfg(test)]
#[path = "cleanup_tests.rs"]
mod tests;
