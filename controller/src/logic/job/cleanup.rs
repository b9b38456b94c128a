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
mod tests {
    use super::*;
    use crate::logic::job::state::{EventKind, JobEvent, next_state};
    use k8s_openapi::jiff::Timestamp;

    const BOT: &str = "ledgerops-bot";
    const JOB: &str = "aj-1";
    const BRANCH: &str = "ledgerops/aj-1";

    fn found(pr: bool, authors: Option<&[Option<&str>]>) -> Found {
        Found {
            pull_request: pr.then(|| (7, "http://gitea/o/r/pulls/7".into())),
            commit_authors: authors.map(|a| a.iter().map(|x| x.map(str::to_owned)).collect()),
        }
    }

    #[test]
    fn what_the_bot_alone_made_is_removed_anything_else_is_left() {
        let bot = Some(BOT);
        let cases: &[(Found, Option<i64>, bool, &str)] = &[
            (
                found(true, Some(&[bot])),
                Some(7),
                true,
                "Cleaned up: closed the pull request `http://gitea/o/r/pulls/7` and deleted the branch `ledgerops/aj-1`.",
            ),
            (
                found(false, Some(&[bot, bot])),
                None,
                true,
                "Cleaned up: deleted the branch `ledgerops/aj-1`.",
            ),
            // A branch made but never committed to (the file write failed) is still the bot's.
            (
                found(false, Some(&[])),
                None,
                true,
                "Cleaned up: deleted the branch `ledgerops/aj-1`.",
            ),
            (
                found(true, Some(&[bot, Some("alice")])),
                None,
                false,
                "The branch `ledgerops/aj-1` and the pull request `http://gitea/o/r/pulls/7` were left as they are: the branch holds commits ledgerops did not make.",
            ),
            // An author Gitea cannot name is not the bot.
            (
                found(false, Some(&[None])),
                None,
                false,
                "The branch `ledgerops/aj-1` was left as it is: the branch holds commits ledgerops did not make.",
            ),
            (
                found(false, None),
                None,
                false,
                "The branch `ledgerops/aj-1` it created is gone; nothing was left behind.",
            ),
        ];
        for (found, close, delete, note) in cases {
            let c = plan(BRANCH, BOT, found);
            assert_eq!(c.close_pull_request, *close, "{found:?}");
            assert_eq!(c.delete_branch, *delete, "{found:?}");
            assert_eq!(c.note, *note, "{found:?}");
        }
    }

    #[test]
    fn names_from_gitea_stay_inside_code_spans() {
        let found = Found {
            pull_request: Some((1, "http://e.vil/@root`<!-- x -->".into())),
            commit_authors: Some(vec![Some(BOT.into())]),
        };
        let note = plan("b`@root", BOT, &found).note;
        assert!(!note.contains(" @root"), "{note}");
        assert!(!note.contains("`<!--"), "{note}");
    }

    fn job(phase: JobPhase, branch: Option<&str>) -> JobState {
        let at = Timestamp::UNIX_EPOCH;
        let received = JobEvent::new(
            "received",
            at,
            EventKind::CommandReceived {
                text: "/agent suggest".into(),
                truncated_from: None,
                author: "alice".into(),
                sequence: 1,
                generation: Some(1),
            },
        );
        let mut s = next_state(None, &received).unwrap().state;
        s.phase = phase;
        s.branch = branch.map(str::to_owned);
        s
    }

    #[test]
    fn only_an_unsuccessful_job_with_a_branch_is_cleaned_up_once() {
        assert_eq!(branch_of(JOB), BRANCH);
        for phase in [
            JobPhase::Received,
            JobPhase::Queued,
            JobPhase::Running,
            JobPhase::Succeeded,
        ] {
            assert_eq!(needed(JOB, &job(phase, Some(BRANCH))), None, "{phase:?}");
        }
        for phase in [JobPhase::Failed, JobPhase::Rejected] {
            assert_eq!(
                needed(JOB, &job(phase, Some(BRANCH))),
                Some(BRANCH),
                "{phase:?}"
            );
            assert_eq!(needed(JOB, &job(phase, None)), None, "{phase:?}");
            let mut done = job(phase, Some(BRANCH));
            done.cleanup = Some("Cleaned up.".into());
            assert_eq!(needed(JOB, &done), None, "{phase:?}");
            // Another job's branch, or one nobody's job creates, is never removed.
            for foreign in ["main", "release-1.0", "ledgerops/aj-2", "ledgerops/aj-1/x"] {
                assert_eq!(needed(JOB, &job(phase, Some(foreign))), None, "{foreign}");
            }
        }
    }
}
