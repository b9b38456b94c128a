//! The AgentJob state machine: `next_state(state, event) -> Transition`.
//!
//! Pure: the state is replaced, never mutated; time comes in with the event (the receiver or
//! listener that observed it owns the clock), so replaying the same events gives the same state,
//! timestamps and conditions included. Every applied event id is remembered: an event applied
//! again (a retried effect, a redelivered webhook) changes nothing and emits nothing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

use super::command::{self, Command, HELP};
use super::event::{EventKind, JobEvent};
use crate::api::agent_job::JobPhase;
use crate::logic::status::conditions::{self, Observed, Status};
use crate::logic::status::kstatus;

/// Permissions on the repository that may run commands.
pub const WRITE_PERMISSIONS: &[&str] = &["write", "admin", "owner"];

/// The longest error kept in the status and shown in the comment.
pub const MAX_ERROR: usize = 1000;

/// One job's state. Everything the status holds is here; the spec (what was received) is too,
/// so that the state machine never needs the object.
#[derive(Debug, Clone, PartialEq)]
pub struct JobState {
    pub phase: JobPhase,
    /// The comment's text as received.
    pub text: String,
    /// The comment's length in bytes when `text` holds only its first
    /// [`super::webhook::MAX_COMMAND`]: the command is refused.
    pub truncated_from: Option<i64>,
    pub author: String,
    pub sequence: i64,
    pub generation: Option<i64>,
    /// The parsed command, once permission was granted and it parsed.
    pub command: Option<Command>,
    pub stage: String,
    /// One word: why the job is where it is.
    pub reason: String,
    pub error: Option<String>,
    /// The latest error seen while handling the job (a failed check, a comment that could not
    /// be published, the final error), with when it was seen.
    pub last_error: Option<(String, Timestamp)>,
    pub permission: Option<String>,
    pub result: Option<String>,
    pub status_comment_id: Option<i64>,
    pub comment_hash: Option<String>,
    pub branch: Option<String>,
    pub pull_request_url: Option<String>,
    /// What became of the branch (and pull request) of a job that did not succeed.
    pub cleanup: Option<String>,
    pub applied_events: Vec<String>,
    pub received_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub finished_at: Option<Timestamp>,
    pub conditions: Vec<Condition>,
}

/// Work a transition asks the listeners to do. The persisted state implies the same work (a
/// Received job needs authorizing, a Queued one executing, a changed comment publishing), so
/// effects lost in a crash are found again from the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Authorize,
    Execute,
    ReconcileComment,
}

/// The complete replacement state and the effects to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub state: JobState,
    pub effects: Vec<Effect>,
    /// False when the event was already applied or is a no-op here: nothing to persist.
    pub changed: bool,
}

/// An event that does not apply to the state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{event} cannot apply to a job that is {state}")]
pub struct InvalidTransition {
    pub state: String,
    pub event: &'static str,
}

/// Whether `phase` is final.
pub fn is_terminal(phase: JobPhase) -> bool {
    matches!(
        phase,
        JobPhase::Succeeded | JobPhase::Rejected | JobPhase::Failed
    )
}

/// The message a commenter without write permission gets.
pub fn permission_message(author: &str, permission: &str) -> String {
    format!(
        "{} has {} permission on this repository; `/agent` commands need write permission.",
        super::escape::mention(author),
        super::escape::code(permission)
    )
}

/// Applies `event` to `state` (None: the job does not exist yet).
pub fn next_state(
    state: Option<&JobState>,
    event: &JobEvent,
) -> Result<Transition, InvalidTransition> {
    let Some(current) = state else {
        return received(event);
    };
    if current.applied_events.contains(&event.id) {
        return Ok(unchanged(current));
    }
    if let EventKind::ErrorObserved { error } = &event.kind {
        return Ok(error_observed(current, error, event.at));
    }
    let mut s = current.clone();
    let effects = match (&current.phase, &event.kind) {
        (JobPhase::Received, EventKind::PermissionGranted { permission }) => {
            permitted(current, &mut s, permission, event.at)
        }
        (JobPhase::Received, EventKind::PermissionDenied { permission }) => {
            s.permission = Some(permission.clone());
            let error = permission_message(&current.author, permission);
            finish(
                &mut s,
                JobPhase::Rejected,
                "PermissionDenied",
                error,
                event.at,
            );
            vec![Effect::ReconcileComment]
        }
        (JobPhase::Queued, EventKind::JobStarted) => started(&mut s, event.at),
        (JobPhase::Running, EventKind::JobProgress { stage }) => {
            s.stage = stage.clone();
            vec![Effect::ReconcileComment]
        }
        (JobPhase::Running, EventKind::BranchCreated { branch }) => {
            s.branch = Some(branch.clone());
            vec![]
        }
        (JobPhase::Running, EventKind::PullRequestOpened { url }) => {
            s.pull_request_url = Some(url.clone());
            vec![]
        }
        (JobPhase::Running, EventKind::JobCompleted { result }) => {
            completed(&mut s, result, event.at)
        }
        (JobPhase::Running, EventKind::JobRejected { reason }) => {
            finish(
                &mut s,
                JobPhase::Rejected,
                "PreconditionFailed",
                reason.clone(),
                event.at,
            );
            vec![Effect::ReconcileComment]
        }
        (JobPhase::Running, EventKind::JobFailed { error }) => {
            finish(&mut s, JobPhase::Failed, "Failed", error.clone(), event.at);
            vec![Effect::ReconcileComment]
        }
        (JobPhase::Running, EventKind::ServiceRestarted) => interrupted(&mut s, event.at),
        (
            JobPhase::Received | JobPhase::Queued | JobPhase::Running,
            EventKind::AuthorizationFailed { refusal, error },
        ) => {
            finish(
                &mut s,
                JobPhase::Rejected,
                refusal.reason(),
                error.clone(),
                event.at,
            );
            vec![Effect::ReconcileComment]
        }
        (JobPhase::Failed | JobPhase::Rejected, EventKind::CleanedUp { note })
            if current.branch.is_some() && current.cleanup.is_none() =>
        {
            s.cleanup = Some(truncate(note, MAX_ERROR));
            vec![Effect::ReconcileComment]
        }
        // Explicit no-op: only a running job is interrupted by a restart.
        (_, EventKind::ServiceRestarted) => return Ok(unchanged(current)),
        (
            _,
            EventKind::CommentLinked {
                comment_id,
                body_hash,
            },
        ) => {
            if current.status_comment_id == Some(*comment_id)
                && current.comment_hash.as_deref() == Some(body_hash)
            {
                return Ok(unchanged(current));
            }
            s.status_comment_id = Some(*comment_id);
            s.comment_hash = Some(body_hash.clone());
            vec![]
        }
        (phase, _) => return Err(invalid(&format!("{phase:?}"), event)),
    };
    Ok(applied(s, event, effects))
}

/// An error seen while the job runs, kept as its last (once: the same error again changes
/// nothing).
fn error_observed(current: &JobState, error: &str, at: Timestamp) -> Transition {
    let error = truncate(error, MAX_ERROR);
    if current
        .last_error
        .as_ref()
        .is_some_and(|(e, _)| *e == error)
    {
        return unchanged(current);
    }
    let mut s = current.clone();
    s.last_error = Some((error, at));
    Transition {
        state: s,
        effects: vec![],
        changed: true,
    }
}

/// A queued job that starts running.
fn started(s: &mut JobState, at: Timestamp) -> Vec<Effect> {
    s.phase = JobPhase::Running;
    s.stage = "starting".into();
    s.reason = "Running".into();
    s.started_at = Some(at);
    s.conditions = ready(s, Status::False, "Running", at);
    vec![Effect::ReconcileComment]
}

/// A running job that finished with `result`.
fn completed(s: &mut JobState, result: &str, at: Timestamp) -> Vec<Effect> {
    s.phase = JobPhase::Succeeded;
    s.stage = "completed".into();
    s.reason = "Succeeded".into();
    s.result = Some(result.to_owned());
    s.finished_at = Some(at);
    s.conditions = ready(s, Status::True, "Succeeded", at);
    vec![Effect::ReconcileComment]
}

/// A new job, from the command that creates it; any other event cannot apply to no job.
fn received(event: &JobEvent) -> Result<Transition, InvalidTransition> {
    match &event.kind {
        EventKind::CommandReceived {
            text,
            truncated_from,
            author,
            sequence,
            generation,
        } => {
            let mut s = JobState {
                phase: JobPhase::Received,
                text: text.clone(),
                truncated_from: *truncated_from,
                author: author.clone(),
                sequence: *sequence,
                generation: *generation,
                command: None,
                stage: "checking permission".into(),
                reason: "Received".into(),
                error: None,
                last_error: None,
                permission: None,
                result: None,
                status_comment_id: None,
                comment_hash: None,
                branch: None,
                pull_request_url: None,
                cleanup: None,
                applied_events: Vec::new(),
                received_at: event.at,
                started_at: None,
                finished_at: None,
                conditions: Vec::new(),
            };
            s.conditions = ready(&s, Status::False, "Received", event.at);
            Ok(applied(s, event, vec![Effect::Authorize]))
        }
        _ => Err(invalid("absent", event)),
    }
}

/// A received command whose author may run it: queued, or rejected when it does not parse.
fn permitted(current: &JobState, s: &mut JobState, permission: &str, at: Timestamp) -> Vec<Effect> {
    s.permission = Some(permission.to_owned());
    let parsed = match current.truncated_from {
        Some(length) => Err(too_long(length)),
        None => {
            command::parse(&current.text).map_err(|e| ("InvalidCommand", format!("{e}\n\n{HELP}")))
        }
    };
    match parsed {
        Ok(cmd) => {
            s.phase = JobPhase::Queued;
            s.stage = "waiting for its turn".into();
            s.reason = "Queued".into();
            s.command = Some(cmd);
            s.conditions = ready(s, Status::False, "Queued", at);
            vec![Effect::Execute, Effect::ReconcileComment]
        }
        Err((reason, error)) => {
            finish(s, JobPhase::Rejected, reason, error, at);
            vec![Effect::ReconcileComment]
        }
    }
}

/// A running job when ledgerops restarted: failed, never run again.
fn interrupted(s: &mut JobState, at: Timestamp) -> Vec<Effect> {
    let error = format!(
        "ledgerops restarted while this command was running (stage: {}); it was not run again. Check its effects, then send the command again if needed.",
        s.stage
    );
    finish(s, JobPhase::Failed, "Interrupted", error, at);
    s.conditions = conditions::set(
        &s.conditions,
        Observed::new(
            "Interrupted",
            true,
            "ServiceRestarted",
            "ledgerops restarted while the command ran; it is never replayed",
        ),
        s.generation,
        at,
    );
    vec![Effect::ReconcileComment]
}

/// Why a command cut at [`super::webhook::MAX_COMMAND`] bytes is refused.
fn too_long(length: i64) -> (&'static str, String) {
    (
        "CommandTooLong",
        format!(
            "The comment is {length} bytes long; an `/agent` command may be at most {} bytes, so nothing was run. Send a shorter command.",
            super::webhook::MAX_COMMAND
        ),
    )
}

fn finish(s: &mut JobState, phase: JobPhase, reason: &str, error: String, at: Timestamp) {
    s.phase = phase;
    s.reason = reason.into();
    s.error = Some(truncate(&error, MAX_ERROR));
    s.last_error = s.error.clone().map(|e| (e, at));
    s.finished_at = Some(at);
    s.conditions = ready(s, Status::False, reason_static(reason), at);
}

/// Condition reasons must be `'static`; the reasons used here are a closed set.
fn reason_static(reason: &str) -> &'static str {
    match reason {
        "InvalidCommand" => "InvalidCommand",
        "CommandTooLong" => "CommandTooLong",
        "PermissionDenied" => "PermissionDenied",
        "PreconditionFailed" => "PreconditionFailed",
        "Interrupted" => "Interrupted",
        "UntrustedRepository" => "UntrustedRepository",
        "UnverifiedComment" => "UnverifiedComment",
        "PermissionCheckFailed" => "PermissionCheckFailed",
        _ => "Failed",
    }
}

fn ready(s: &JobState, status: Status, reason: &'static str, at: Timestamp) -> Vec<Condition> {
    let message = match s.phase {
        JobPhase::Received => "waiting for the permission check".to_owned(),
        JobPhase::Queued => format!("queued as #{}", s.sequence),
        JobPhase::Running => "running".to_owned(),
        JobPhase::Succeeded => "done".to_owned(),
        JobPhase::Rejected | JobPhase::Failed => s
            .error
            .as_deref()
            .and_then(|e| e.lines().next())
            .unwrap_or("failed")
            .to_owned(),
    };
    let c = conditions::set(
        &s.conditions,
        Observed::new(conditions::READY, status, reason, message),
        s.generation,
        at,
    );
    kstatus::summarize(&c, "AgentJob", kstatus::job(s.phase), s.generation, at)
}

fn applied(mut s: JobState, event: &JobEvent, effects: Vec<Effect>) -> Transition {
    s.applied_events.push(event.id.clone());
    Transition {
        state: s,
        effects,
        changed: true,
    }
}

fn unchanged(s: &JobState) -> Transition {
    Transition {
        state: s.clone(),
        effects: vec![],
        changed: false,
    }
}

fn invalid(state: &str, event: &JobEvent) -> InvalidTransition {
    InvalidTransition {
        state: state.to_owned(),
        event: event.kind.name(),
    }
}

/// At most `max` characters, marked when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
