//! What happens to an AgentJob: the events its state machine ([`super::state`]) applies, each
//! with the id that de-duplicates it and the time it was observed.

use k8s_openapi::jiff::Timestamp;

/// An event with the id that de-duplicates it and the time it was observed.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEvent {
    pub id: String,
    pub at: Timestamp,
    pub kind: EventKind,
}

impl JobEvent {
    pub fn new(id: impl Into<String>, at: Timestamp, kind: EventKind) -> Self {
        Self {
            id: id.into(),
            at,
            kind,
        }
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The webhook stored the command.
    CommandReceived {
        text: String,
        truncated_from: Option<i64>,
        author: String,
        sequence: i64,
        generation: Option<i64>,
    },
    /// Gitea says the commenter may write (`permission` is write, admin or owner).
    PermissionGranted { permission: String },
    /// Gitea says the commenter may not write.
    PermissionDenied { permission: String },
    /// The executor claimed the job; persisted before any effect of the command.
    JobStarted,
    /// The command moved on to another step.
    JobProgress { stage: String },
    /// The command created a branch; recorded before it is used, so it is never orphaned unseen.
    BranchCreated { branch: String },
    /// The command opened a pull request.
    PullRequestOpened { url: String },
    /// What the job that did not succeed left in Gitea was removed, or left to its owners;
    /// `note` says which (see [`super::cleanup`]).
    CleanedUp { note: String },
    /// The command finished; `result` is the comment body to show.
    JobCompleted { result: String },
    /// The command refused to act (a failed precondition).
    JobRejected { reason: String },
    /// The command broke.
    JobFailed { error: String },
    /// The process started again; a job that was running is failed, never replayed.
    ServiceRestarted,
    /// The status comment is `comment_id` and shows the body hashed as `body_hash`.
    CommentLinked { comment_id: i64, body_hash: String },
    /// The job may not run: its repository is not allowed, its comment is not what it claims,
    /// or its permission is denied or could not be checked within the bound. Legal until the
    /// job finishes (the executor checks again right before the command's effects).
    AuthorizationFailed { refusal: Refusal, error: String },
    /// Handling the job hit an error that is retried (or not fatal): kept as the latest error.
    /// Not remembered by id: applying it again sets the same value.
    ErrorObserved { error: String },
}

/// Why authorization refused a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The repository is not on `--gitea-repository`.
    UntrustedRepository,
    /// The Gitea comment does not exist, or another author, issue or text than the job says.
    UnverifiedComment,
    /// The author has no write permission (found when checking again before the effects).
    PermissionDenied,
    /// The check kept failing until the bound.
    PermissionCheckFailed,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::UntrustedRepository => "UntrustedRepository",
            Refusal::UnverifiedComment => "UnverifiedComment",
            Refusal::PermissionDenied => "PermissionDenied",
            Refusal::PermissionCheckFailed => "PermissionCheckFailed",
        }
    }
}

impl EventKind {
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::CommandReceived { .. } => "CommandReceived",
            EventKind::PermissionGranted { .. } => "PermissionGranted",
            EventKind::PermissionDenied { .. } => "PermissionDenied",
            EventKind::JobStarted => "JobStarted",
            EventKind::JobProgress { .. } => "JobProgress",
            EventKind::BranchCreated { .. } => "BranchCreated",
            EventKind::PullRequestOpened { .. } => "PullRequestOpened",
            EventKind::CleanedUp { .. } => "CleanedUp",
            EventKind::JobCompleted { .. } => "JobCompleted",
            EventKind::JobRejected { .. } => "JobRejected",
            EventKind::JobFailed { .. } => "JobFailed",
            EventKind::ServiceRestarted => "ServiceRestarted",
            EventKind::CommentLinked { .. } => "CommentLinked",
            EventKind::AuthorizationFailed { .. } => "AuthorizationFailed",
            EventKind::ErrorObserved { .. } => "ErrorObserved",
        }
    }
}
