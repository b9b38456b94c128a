//! Unit tests of `logic/job/cleanup.rs`.

use super::*;
use crate::logic::job::event::{EventKind, JobEvent};
use crate::logic::job::state::next_state;
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
