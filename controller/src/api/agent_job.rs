//! `AgentJob`: one `/agent` command received from a Gitea webhook, and its state machine.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// One `/agent` command from a Gitea comment. The webhook endpoint creates it; its spec records
/// what was received and never changes.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "AgentJob",
    namespaced,
    status = "AgentJobStatus",
    shortname = "aj",
    category = "ledgerops",
    doc = "One /agent command from a Gitea comment. The webhook endpoint creates it; its spec records what was received and never changes.",
    printcolumn(name = "Seq", type_ = "integer", json_path = ".spec.sequence"),
    printcolumn(name = "Repository", type_ = "string", json_path = ".spec.repository"),
    printcolumn(name = "Issue", type_ = "integer", json_path = ".spec.issueNumber"),
    printcolumn(name = "Author", type_ = "string", json_path = ".spec.author"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Stage",
        type_ = "string",
        json_path = ".status.stage",
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new("self == oldSelf").message("an AgentJob records a received command and cannot be edited"))]
#[serde(rename_all = "camelCase")]
pub struct AgentJobSpec {
    /// Gitea's `X-Gitea-Delivery` id of the webhook that brought the command.
    #[schemars(length(min = 1, max = 128))]
    pub delivery_id: String,
    /// Whether the comment was on an issue or a pull request.
    pub event: CommentEvent,
    /// `owner/name` of the repository.
    #[schemars(length(min = 3, max = 512))]
    pub repository: String,
    /// Number of the issue or pull request.
    #[schemars(range(min = 1))]
    pub issue_number: i64,
    /// Gitea id of the comment that holds the command.
    #[schemars(range(min = 1))]
    pub comment_id: i64,
    /// Login of the comment's author.
    #[schemars(length(min = 1, max = 255))]
    pub author: String,
    /// The comment's text as received, unparsed; at most 4096 bytes (a longer comment is kept
    /// cut, and refused).
    #[schemars(length(min = 1, max = 4096))]
    pub command: String,
    /// The comment's length in bytes when it was longer than the 4096 kept: such a command is
    /// refused, never run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 4097))]
    pub truncated_from: Option<i64>,
    /// Receive order: jobs execute in increasing sequence.
    #[schemars(range(min = 1))]
    pub sequence: i64,
    /// When the webhook was received.
    pub received_at: Time,
}

/// The webhook event a command arrived with.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum CommentEvent {
    /// A comment on an issue (`X-Gitea-Event-Type: issue_comment`).
    IssueComment,
    /// A comment on a pull request (`X-Gitea-Event-Type: pull_request_comment`).
    PullRequestComment,
}

/// The job's place in its state machine.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AgentJobStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready` once finished, `Interrupted` when a restart cut execution short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// The state: Received, Queued, Running, Succeeded, Rejected or Failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<JobPhase>,
    /// The command's name once parsed (after the permission check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_name: Option<String>,
    /// What the job is doing, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// Why it was rejected or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The latest error seen while handling the job: a failed permission or comment check
    /// (retried within a bound), a status comment that could not be published, or the final
    /// error. Kept after the job recovers, so the last problem stays visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// Gitea id of the bot's status comment for this job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_comment_id: Option<i64>,
    /// The final comment body a successful job produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Ids of the events already applied, so that a retried effect never applies twice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub applied_events: Vec<String>,
    /// When execution started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When the job reached a final state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Why the job is where it is, in one word (`PermissionDenied`, `InvalidCommand`,
    /// `Interrupted`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The commenter's permission on the repository, as Gitea answered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<String>,
    /// Hash of the status comment body last published, so that an unchanged state is not
    /// published twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment_hash: Option<String>,
    /// The branch a command creates in the repository, recorded before it is created: a job
    /// that fails afterwards still knows it, and the pull request opened from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The pull request a command opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request_url: Option<String>,
    /// For a job that failed or was rejected after creating its branch: whether the branch and
    /// its pull request were removed, or left because someone else committed to the branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<String>,
}

/// An error and when it was seen.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LastError {
    /// What went wrong.
    #[schemars(length(max = 1000))]
    pub message: String,
    /// When it was seen.
    pub time: Time,
}

/// An AgentJob's state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum JobPhase {
    /// Stored; waiting for the permission check.
    Received,
    /// Allowed and parsed; waiting its turn.
    Queued,
    /// Executing; a restart now fails it as Interrupted rather than run it twice.
    Running,
    /// Done.
    Succeeded,
    /// Refused: a repository not allowed, a comment Gitea does not have as claimed, no
    /// permission (or a permission check that kept failing), a malformed command, or a failed
    /// precondition.
    Rejected,
    /// Broke, or was interrupted.
    Failed,
}
