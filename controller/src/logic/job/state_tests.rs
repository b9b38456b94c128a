//! Table tests of `next_state`: every legal transition, a set of invalid ones, de-duplication,
//! determinism and immutability of the input.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::agent_job::{AgentJobSpec, AgentJobStatus, CommentEvent, JobPhase};
use crate::logic::job::command::{Command, HELP};
use crate::logic::job::event::*;
use crate::logic::job::persisted::*;
use crate::logic::status::conditions;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

fn ev(id: &str, secs: i64, kind: EventKind) -> JobEvent {
    JobEvent::new(id, at(secs), kind)
}

fn received_with(text: &str) -> JobState {
    let e = ev(
        "received",
        0,
        EventKind::CommandReceived {
            text: text.into(),
            truncated_from: None,
            author: "writer".into(),
            sequence: 7,
            generation: Some(1),
        },
    );
    next_state(None, &e).unwrap().state
}

fn received() -> JobState {
    received_with("/agent status")
}

/// A comment of `length` bytes, kept cut.
fn received_cut(length: i64) -> JobState {
    let e = ev(
        "received",
        0,
        EventKind::CommandReceived {
            text: "/agent status".into(),
            truncated_from: Some(length),
            author: "writer".into(),
            sequence: 7,
            generation: Some(1),
        },
    );
    next_state(None, &e).unwrap().state
}

fn apply(state: &JobState, e: JobEvent) -> Transition {
    let before = state.clone();
    let t = next_state(Some(state), &e).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(*state, before, "the input state was mutated");
    // Deterministic: the same input gives the same output.
    assert_eq!(next_state(Some(state), &e).unwrap(), t);
    t
}

fn granted() -> JobEvent {
    ev(
        "permission",
        1,
        EventKind::PermissionGranted {
            permission: "write".into(),
        },
    )
}

fn queued() -> JobState {
    apply(&received(), granted()).state
}

fn running() -> JobState {
    apply(&queued(), ev("started", 2, EventKind::JobStarted)).state
}

fn ready(s: &JobState) -> (String, String) {
    let c = conditions::get(&s.conditions, "Ready").expect("a Ready condition");
    (c.status.clone(), c.reason.clone())
}

#[test]
fn command_received_creates_a_received_job_to_authorize() {
    let e = ev(
        "received",
        0,
        EventKind::CommandReceived {
            text: "/agent status".into(),
            truncated_from: None,
            author: "writer".into(),
            sequence: 7,
            generation: Some(1),
        },
    );
    let t = next_state(None, &e).unwrap();
    assert!(t.changed);
    assert_eq!(t.effects, vec![Effect::Authorize]);
    assert_eq!(t.state.phase, JobPhase::Received);
    assert_eq!(t.state.sequence, 7);
    assert_eq!(t.state.received_at, at(0));
    assert_eq!(t.state.applied_events, vec!["received".to_owned()]);
    assert_eq!(
        t.state.command, None,
        "nothing is parsed before the permission check"
    );
    assert_eq!(ready(&t.state), ("False".into(), "Received".into()));
}

#[test]
fn every_legal_transition() {
    struct Case {
        name: &'static str,
        from: JobState,
        event: JobEvent,
        phase: JobPhase,
        effects: Vec<Effect>,
        check: fn(&JobState),
    }
    let cases = vec![
        Case {
            name: "granted + valid command -> queued",
            from: received(),
            event: granted(),
            phase: JobPhase::Queued,
            effects: vec![Effect::Execute, Effect::ReconcileComment],
            check: |s| {
                assert_eq!(s.command, Some(Command::Status));
                assert_eq!(s.permission.as_deref(), Some("write"));
            },
        },
        Case {
            name: "granted + over-long command -> rejected, nothing parsed",
            from: received_cut(70_000),
            event: granted(),
            phase: JobPhase::Rejected,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                let err = s.error.as_deref().unwrap();
                assert!(err.contains("70000 bytes") && err.contains("4096"), "{err}");
                assert_eq!(s.command, None);
                assert_eq!(s.reason, "CommandTooLong");
                assert_eq!(ready(s), ("False".into(), "CommandTooLong".into()));
            },
        },
        Case {
            name: "denied + over-long command -> the permission message only",
            from: received_cut(70_000),
            event: ev(
                "permission",
                1,
                EventKind::PermissionDenied {
                    permission: "read".into(),
                },
            ),
            phase: JobPhase::Rejected,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                let err = s.error.as_deref().unwrap();
                assert!(!err.contains("bytes"), "{err}");
                assert_eq!(s.reason, "PermissionDenied");
            },
        },
        Case {
            name: "granted + malformed command -> rejected with help",
            from: received_with("/agent frobnicate"),
            event: granted(),
            phase: JobPhase::Rejected,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                let err = s.error.as_deref().unwrap();
                assert!(err.contains("unknown command `frobnicate`"), "{err}");
                assert!(err.contains(HELP));
                assert_eq!(s.reason, "InvalidCommand");
                assert_eq!(s.finished_at, Some(at(1)));
            },
        },
        Case {
            name: "denied -> rejected with the permission message",
            from: received_with("/agent frobnicate"),
            event: ev(
                "permission",
                1,
                EventKind::PermissionDenied {
                    permission: "read".into(),
                },
            ),
            phase: JobPhase::Rejected,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                let err = s.error.as_deref().unwrap();
                assert!(err.contains("`read` permission"), "{err}");
                assert!(
                    !err.contains("unknown command"),
                    "syntax is not checked: {err}"
                );
                assert_eq!(s.reason, "PermissionDenied");
            },
        },
        Case {
            name: "started -> running",
            from: queued(),
            event: ev("started", 2, EventKind::JobStarted),
            phase: JobPhase::Running,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                assert_eq!(s.started_at, Some(at(2)));
                assert_eq!(s.stage, "starting");
            },
        },
        Case {
            name: "progress replaces the stage only",
            from: running(),
            event: ev(
                "progress:1",
                3,
                EventKind::JobProgress {
                    stage: "reading".into(),
                },
            ),
            phase: JobPhase::Running,
            effects: vec![Effect::ReconcileComment],
            check: |s| assert_eq!(s.stage, "reading"),
        },
        Case {
            name: "branch recorded",
            from: running(),
            event: ev(
                "branch",
                3,
                EventKind::BranchCreated {
                    branch: "ledgerops/x".into(),
                },
            ),
            phase: JobPhase::Running,
            effects: vec![],
            check: |s| assert_eq!(s.branch.as_deref(), Some("ledgerops/x")),
        },
        Case {
            name: "pull request recorded",
            from: running(),
            event: ev(
                "pull-request",
                3,
                EventKind::PullRequestOpened {
                    url: "http://g/pulls/2".into(),
                },
            ),
            phase: JobPhase::Running,
            effects: vec![],
            check: |s| assert_eq!(s.pull_request_url.as_deref(), Some("http://g/pulls/2")),
        },
        Case {
            name: "completed -> succeeded",
            from: running(),
            event: ev(
                "completed",
                4,
                EventKind::JobCompleted {
                    result: "all good".into(),
                },
            ),
            phase: JobPhase::Succeeded,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                assert_eq!(s.result.as_deref(), Some("all good"));
                assert_eq!(s.finished_at, Some(at(4)));
                assert_eq!(ready(s), ("True".into(), "Succeeded".into()));
            },
        },
        Case {
            name: "rejected while running",
            from: running(),
            event: ev(
                "rejected",
                4,
                EventKind::JobRejected {
                    reason: "no such ApprovalRequest".into(),
                },
            ),
            phase: JobPhase::Rejected,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                assert_eq!(s.reason, "PreconditionFailed");
                assert_eq!(ready(s), ("False".into(), "PreconditionFailed".into()));
            },
        },
        Case {
            name: "failed while running, error truncated",
            from: running(),
            event: ev(
                "failed",
                4,
                EventKind::JobFailed {
                    error: "x".repeat(5000),
                },
            ),
            phase: JobPhase::Failed,
            effects: vec![Effect::ReconcileComment],
            check: |s| assert_eq!(s.error.as_ref().unwrap().chars().count(), MAX_ERROR),
        },
        Case {
            name: "restart interrupts a running job",
            from: running(),
            event: ev("service-restarted", 9, EventKind::ServiceRestarted),
            phase: JobPhase::Failed,
            effects: vec![Effect::ReconcileComment],
            check: |s| {
                assert_eq!(s.reason, "Interrupted");
                let c = conditions::get(&s.conditions, "Interrupted").unwrap();
                assert_eq!(c.status, "True");
                assert_eq!(c.last_transition_time, Time(at(9)));
                assert!(s.error.as_deref().unwrap().contains("not run again"));
            },
        },
        Case {
            name: "comment linked on a terminal job",
            from: apply(
                &running(),
                ev(
                    "completed",
                    4,
                    EventKind::JobCompleted {
                        result: "ok".into(),
                    },
                ),
            )
            .state,
            event: ev(
                "comment:12:abc",
                5,
                EventKind::CommentLinked {
                    comment_id: 12,
                    body_hash: "abc".into(),
                },
            ),
            phase: JobPhase::Succeeded,
            effects: vec![],
            check: |s| {
                assert_eq!(s.status_comment_id, Some(12));
                assert_eq!(s.comment_hash.as_deref(), Some("abc"));
            },
        },
    ];
    for case in cases {
        let t = apply(&case.from, case.event.clone());
        assert!(t.changed, "{}", case.name);
        assert_eq!(t.state.phase, case.phase, "{}", case.name);
        assert_eq!(t.effects, case.effects, "{}", case.name);
        assert_eq!(
            t.state.applied_events.last(),
            Some(&case.event.id),
            "{}",
            case.name
        );
        (case.check)(&t.state);
    }
}

#[test]
fn comment_linked_applies_in_every_state_and_relinks() {
    for state in [received(), queued(), running()] {
        let t = apply(
            &state,
            ev(
                "comment:1:h1",
                5,
                EventKind::CommentLinked {
                    comment_id: 1,
                    body_hash: "h1".into(),
                },
            ),
        );
        assert_eq!(t.state.phase, state.phase);
        assert_eq!(t.state.status_comment_id, Some(1));
        // A deleted comment was replaced: the new id replaces the old one.
        let t2 = apply(
            &t.state,
            ev(
                "comment:2:h1",
                6,
                EventKind::CommentLinked {
                    comment_id: 2,
                    body_hash: "h1".into(),
                },
            ),
        );
        assert_eq!(t2.state.status_comment_id, Some(2));
        // The same id and body under another event id is still no change.
        let t3 = apply(
            &t2.state,
            ev(
                "comment:2:h1:again",
                7,
                EventKind::CommentLinked {
                    comment_id: 2,
                    body_hash: "h1".into(),
                },
            ),
        );
        assert!(!t3.changed);
    }
}

#[test]
fn an_applied_event_id_never_applies_twice() {
    let q = queued();
    // The permission check's event, retried after its status write was in doubt.
    let again = apply(&q, granted());
    assert!(!again.changed);
    assert!(again.effects.is_empty());
    assert_eq!(again.state, q);
    // Even a different outcome under the same id changes nothing.
    let denied = apply(
        &q,
        ev(
            "permission",
            3,
            EventKind::PermissionDenied {
                permission: "read".into(),
            },
        ),
    );
    assert!(!denied.changed);
    let r = running();
    let started_again = apply(&r, ev("started", 5, EventKind::JobStarted));
    assert_eq!(started_again.state, r);
}

#[test]
fn restart_is_a_no_op_unless_running() {
    let done = apply(
        &running(),
        ev(
            "completed",
            4,
            EventKind::JobCompleted {
                result: "ok".into(),
            },
        ),
    )
    .state;
    for state in [received(), queued(), done] {
        let t = apply(
            &state,
            ev("service-restarted", 9, EventKind::ServiceRestarted),
        );
        assert!(!t.changed, "{:?}", state.phase);
        assert_eq!(t.state, state);
        assert!(t.effects.is_empty());
    }
}

#[test]
fn invalid_pairs_are_errors() {
    let done = apply(
        &running(),
        ev(
            "completed",
            4,
            EventKind::JobCompleted {
                result: "ok".into(),
            },
        ),
    )
    .state;
    let failed = apply(
        &running(),
        ev("service-restarted", 9, EventKind::ServiceRestarted),
    )
    .state;
    let receive = EventKind::CommandReceived {
        text: "/agent help".into(),
        truncated_from: None,
        author: "w".into(),
        sequence: 1,
        generation: None,
    };
    let (received, queued, running) = (received(), queued(), running());
    let cases: Vec<(Option<&JobState>, EventKind)> = vec![
        (None, EventKind::JobStarted),
        (None, EventKind::ServiceRestarted),
        (
            None,
            EventKind::CommentLinked {
                comment_id: 1,
                body_hash: "h".into(),
            },
        ),
        (Some(&received), receive.clone()),
        (Some(&received), EventKind::JobStarted),
        (
            Some(&received),
            EventKind::JobCompleted { result: "r".into() },
        ),
        (
            Some(&queued),
            EventKind::PermissionGranted {
                permission: "write".into(),
            },
        ),
        (Some(&queued), EventKind::JobProgress { stage: "s".into() }),
        (Some(&queued), EventKind::JobFailed { error: "e".into() }),
        (Some(&running), EventKind::JobStarted),
        (
            Some(&running),
            EventKind::PermissionDenied {
                permission: "read".into(),
            },
        ),
        (Some(&done), EventKind::JobStarted),
        (Some(&done), EventKind::JobFailed { error: "e".into() }),
        (
            Some(&failed),
            EventKind::JobCompleted { result: "r".into() },
        ),
        (
            Some(&failed),
            EventKind::BranchCreated { branch: "b".into() },
        ),
        // Only a job that made a branch, and ended without success, is cleaned up.
        (Some(&failed), EventKind::CleanedUp { note: "n".into() }),
        (Some(&running), EventKind::CleanedUp { note: "n".into() }),
        (Some(&done), EventKind::CleanedUp { note: "n".into() }),
        (
            Some(&done),
            EventKind::AuthorizationFailed {
                refusal: Refusal::UnverifiedComment,
                error: "e".into(),
            },
        ),
        (None, EventKind::ErrorObserved { error: "e".into() }),
        (Some(&done), receive),
    ];
    for (state, kind) in cases {
        let before = state.cloned();
        let e = ev("new-event", 10, kind.clone());
        let err = next_state(state, &e).expect_err(&format!("{kind:?} should be invalid"));
        assert_eq!(err.event, kind.name());
        assert_eq!(state.cloned(), before);
    }
}

#[test]
fn persisted_status_round_trips() {
    let spec = AgentJobSpec {
        delivery_id: "d".into(),
        event: CommentEvent::IssueComment,
        repository: "o/r".into(),
        issue_number: 1,
        comment_id: 2,
        author: "writer".into(),
        command: "/agent status".into(),
        truncated_from: None,
        sequence: 7,
        received_at: Time(at(0)),
    };
    // No status yet: the state CommandReceived gives, from the spec alone.
    assert_eq!(from_persisted(&spec, None, Some(1)), received());
    let no_phase = AgentJobStatus::default();
    assert_eq!(from_persisted(&spec, Some(&no_phase), Some(1)), received());
    // Its event is already in it: deriving it again changes nothing.
    let again = next_state(
        Some(&received()),
        &crate::logic::job::persisted::received(&spec, Some(1)),
    )
    .unwrap();
    assert!(!again.changed);
    let with_error = apply(
        &received(),
        ev(
            "error",
            3,
            EventKind::ErrorObserved {
                error: "Gitea GET /x: HTTP 503".into(),
            },
        ),
    )
    .state;
    for state in [received(), queued(), running(), with_error, cleaned_up()] {
        let status = to_status(&state);
        assert_eq!(from_persisted(&spec, Some(&status), Some(1)), state);
    }
}

#[test]
fn authorization_failures_reject_until_the_job_finishes() {
    let refusals = [
        (Refusal::UntrustedRepository, "UntrustedRepository"),
        (Refusal::UnverifiedComment, "UnverifiedComment"),
        (Refusal::PermissionDenied, "PermissionDenied"),
        (Refusal::PermissionCheckFailed, "PermissionCheckFailed"),
    ];
    for from in [received(), queued(), running()] {
        for (refusal, reason) in refusals {
            let t = apply(
                &from,
                ev(
                    "authorization",
                    5,
                    EventKind::AuthorizationFailed {
                        refusal,
                        error: "comment 2 does not exist".into(),
                    },
                ),
            );
            let s = &t.state;
            assert_eq!(s.phase, JobPhase::Rejected, "{:?} {refusal:?}", from.phase);
            assert_eq!(s.reason, reason);
            assert_eq!(s.error.as_deref(), Some("comment 2 does not exist"));
            // The final error is the latest error too (seed 003, finding 2).
            assert_eq!(
                s.last_error,
                Some(("comment 2 does not exist".to_owned(), at(5)))
            );
            assert_eq!(ready(s), ("False".into(), reason.into()));
            assert_eq!(t.effects, vec![Effect::ReconcileComment]);
        }
    }
}

#[test]
fn the_latest_error_is_kept_in_any_phase_without_changing_it() {
    let observe = |secs, error: &str| {
        ev(
            "error",
            secs,
            EventKind::ErrorObserved {
                error: error.into(),
            },
        )
    };
    let done = apply(
        &running(),
        ev(
            "completed",
            4,
            EventKind::JobCompleted {
                result: "ok".into(),
            },
        ),
    )
    .state;
    for from in [received(), queued(), running(), done] {
        let t = apply(&from, observe(6, "HTTP 503"));
        assert!(t.changed && t.effects.is_empty());
        assert_eq!(t.state.phase, from.phase);
        assert_eq!(t.state.last_error, Some(("HTTP 503".to_owned(), at(6))));
        // Not remembered by id: the same id later carries a new error.
        assert_eq!(t.state.applied_events, from.applied_events);
        let again = apply(&t.state, observe(7, "HTTP 503"));
        assert!(!again.changed, "the same error is not written again");
        let newer = apply(&t.state, observe(8, "timeout"));
        assert_eq!(newer.state.last_error, Some(("timeout".to_owned(), at(8))));
    }
}

/// A job that made a branch, was interrupted, and was cleaned up.
fn cleaned_up() -> JobState {
    let branched = apply(
        &running(),
        ev(
            "branch",
            5,
            EventKind::BranchCreated {
                branch: "ledgerops/aj-1".into(),
            },
        ),
    )
    .state;
    let failed = apply(
        &branched,
        ev("service-restarted", 6, EventKind::ServiceRestarted),
    )
    .state;
    apply(
        &failed,
        ev(
            "cleanup",
            7,
            EventKind::CleanedUp {
                note: "Cleaned up: deleted the branch `ledgerops/aj-1`.".into(),
            },
        ),
    )
    .state
}

#[test]
fn a_failed_job_is_cleaned_up_once_and_its_comment_says_how() {
    let t = cleaned_up();
    assert_eq!(t.phase, JobPhase::Failed);
    assert_eq!(
        t.cleanup.as_deref(),
        Some("Cleaned up: deleted the branch `ledgerops/aj-1`.")
    );
    // The same event again changes nothing; another one is refused.
    let again = ev(
        "cleanup",
        8,
        EventKind::CleanedUp {
            note: "other".into(),
        },
    );
    assert!(!next_state(Some(&t), &again).unwrap().changed);
    let other = ev(
        "cleanup-2",
        8,
        EventKind::CleanedUp {
            note: "other".into(),
        },
    );
    assert!(next_state(Some(&t), &other).is_err());
    let body = crate::logic::job::render::render_comment("aj-1", &t).unwrap();
    assert!(
        body.ends_with("\n\nCleaned up: deleted the branch `ledgerops/aj-1`."),
        "{body}"
    );
    assert!(!body.contains("It had created"), "{body}");
    // A rejected job too.
    let branched = apply(
        &running(),
        ev("branch", 5, EventKind::BranchCreated { branch: "b".into() }),
    )
    .state;
    let rejected = apply(
        &branched,
        ev(
            "rejected",
            6,
            EventKind::JobRejected {
                reason: "no".into(),
            },
        ),
    )
    .state;
    let t = apply(
        &rejected,
        ev("cleanup", 7, EventKind::CleanedUp { note: "n".into() }),
    );
    assert_eq!(t.effects, [Effect::ReconcileComment]);
    assert_eq!(t.state.cleanup.as_deref(), Some("n"));
}
