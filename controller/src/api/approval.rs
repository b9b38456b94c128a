//! `ApprovalRequest`: one decision a person makes on one exact preview.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::{CategoryChange, Edits, LocalRef, Review};

/// The label that ties an ApprovalRequest to the object it asks about.
pub const SUBJECT_UID: &str = "ledgerops.dev/subject-uid";

/// One decision a person makes on one exact preview. `kubectl get approvalrequests` lists the
/// waiting ones; a person answers by setting `spec.decision`.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "ApprovalRequest",
    namespaced,
    status = "ApprovalRequestStatus",
    shortname = "apr",
    category = "ledgerops",
    doc = "One decision a person makes on one exact preview. kubectl get approvalrequests lists the waiting ones; a person answers by setting spec.decision.",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Subject", type_ = "string", json_path = ".spec.subject.name"),
    printcolumn(name = "Summary", type_ = "string", json_path = ".spec.summary"),
    printcolumn(name = "Changes", type_ = "integer", json_path = ".spec.changeCount"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(name = "Expires", type_ = "string", json_path = ".spec.expiresAt")
)]
#[x_kube(validation = Rule::new("!has(oldSelf.decision) || (has(self.decision) && self.decision == oldSelf.decision)").message("a decision, once made, cannot be changed or withdrawn"))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestSpec {
    /// The Budget the change would be written to.
    #[x_kube(validation = Rule::new("self == oldSelf").message("budgetRef is set by ledgerops and cannot change"))]
    pub budget_ref: LocalRef,
    /// What asks for the decision.
    #[x_kube(validation = Rule::new("self == oldSelf").message("subject is set by ledgerops and cannot change"))]
    pub subject: Subject,
    /// Hash of the exact preview this request is about; an approval applies to it and nothing else.
    #[schemars(length(min = 1, max = 128))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("previewHash is set by ledgerops and cannot change"))]
    pub preview_hash: String,
    /// One line saying what would change.
    #[schemars(length(min = 1, max = 200))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("summary is set by ledgerops and cannot change"))]
    pub summary: String,
    /// Why a person is asked (the policy that decided it).
    #[schemars(length(min = 1, max = 500))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("reason is set by ledgerops and cannot change"))]
    pub reason: String,
    /// The first changes the approval covers (at most 100), before and after; the preview hash
    /// binds all of them, and `changeCount` counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("changes are set by ledgerops and cannot change"))]
    pub changes: Vec<CategoryChange>,
    /// Every change summed up for one screen: groups, totals per category, the lines to look
    /// at first, and what the review asks besides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self == oldSelf").message("review is set by ledgerops and cannot change"))]
    pub review: Option<Review>,
    /// How many changes the approval covers in all.
    #[serde(default)]
    #[x_kube(validation = Rule::new("self == oldSelf").message("changeCount is set by ledgerops and cannot change"))]
    pub change_count: u32,
    /// After this time the request expires and the change is not applied.
    #[x_kube(validation = Rule::new("self == oldSelf").message("expiresAt is set by ledgerops and cannot change"))]
    pub expires_at: Time,
    /// Whom to tell if it expires.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalate_to: Vec<String>,
    /// Everyone who shaped the change (its lineage when the request was opened: the subject's
    /// authors, the makers of the ConfigRepo that applied it, the blessers of the rules behind
    /// an autopilot plan): with `fourEyes`, none of them can approve it.
    #[serde(default, deserialize_with = "lineage")]
    #[schemars(length(max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("proposedBy is set by ledgerops and cannot change"))]
    pub proposed_by: Vec<String>,
    /// The Budget asked for four eyes when the request was opened: its proposer cannot decide it.
    #[serde(default)]
    #[x_kube(validation = Rule::new("self == oldSelf").message("fourEyes is set by ledgerops and cannot change"))]
    pub four_eyes: bool,
    /// The person's answer. Set once; it cannot be changed afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// `proposedBy` as a list, or as the one name requests opened before lineages were kept hold.
fn lineage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(name) if name.is_empty() => Vec::new(),
        OneOrMany::One(name) => vec![name],
        OneOrMany::Many(names) => names,
    })
}

/// The object whose change needs approval.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// Its kind.
    pub kind: SubjectKind,
    /// Its name, in this namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Kinds that ask for approval.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum SubjectKind {
    CategorizationPlan,
    Transaction,
}

/// A person's answer.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[x_kube(validation = Rule::new("self.verdict == 'Approve' || (has(self.comment) && size(self.comment.trim()) > 0)").message("a rejection needs a comment that says why"))]
#[x_kube(validation = Rule::new("self.verdict == 'Approve' || !has(self.edits)").message("only an approval carries edits: a rejection rejects the whole proposal"))]
#[x_kube(validation = Rule::new("!has(self.edits) || (has(self.edits.drop) && size(self.edits.drop) > 0) || (has(self.edits.set) && size(self.edits.set) > 0)").message("edits must drop or set at least one transaction; approve without edits otherwise"))]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// `Approve` or `Reject`.
    pub verdict: Verdict,
    /// Who decides: the authenticated user name, or `gitea:<login>` for a decision made through a
    /// Gitea comment. An admission policy refuses any other value.
    #[schemars(length(min = 1, max = 253))]
    pub by: String,
    /// The decider's groups, as the API server authenticated them: admission accepts only
    /// exactly the sender's own, so roles bound to a group count when ledgerops asks the
    /// authorizer. Without them the user name alone is checked. `kubectl ledgerops approve`
    /// records them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64), inner(length(min = 1, max = 253)))]
    pub groups: Vec<String>,
    /// Why; required for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub comment: Option<String>,
    /// With `Approve`: what the approver changed in the proposal, approved in the same act.
    /// ledgerops previews the edited proposal against fresh YNAB state and writes that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Edits>,
}

/// Approve or reject.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum Verdict {
    Approve,
    Reject,
}

/// Where the request stands.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready` once decided, expired or stale.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// A one-word summary for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<ApprovalPhase>,
    /// When ledgerops saw the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Time>,
    /// When the escalation was sent for an expired request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalated_at: Option<Time>,
    /// Written by ledgerops right after it created the request: the object and preview it asks
    /// about. A request without it, or bound to something else, authorizes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_for: Option<Issuance>,
    /// The one write this approval was spent on. An approval authorizes a single write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<ApprovalUse>,
}

/// What ledgerops created a request for.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Issuance {
    /// uid of the object that asks (a plan or a Transaction).
    pub subject_uid: String,
    /// The preview hash the request was created for.
    pub preview_hash: String,
    /// When ledgerops issued it.
    pub at: Time,
}

/// The write an approval was spent on.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalUse {
    /// The write attempt (also the journal's operation id for a plan).
    pub attempt_id: String,
    /// When the write started.
    pub started_at: Time,
    /// When its outcome was recorded; until then a restart resumes this very write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Time>,
    /// Whether YNAB holds the approved change afterwards; false when nothing was written
    /// because YNAB or the spec had changed.
    #[serde(default)]
    pub written: bool,
    /// The preview written under the approval: with edits, the edited one's hash (the
    /// request's `previewHash` is the proposal's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_hash: Option<String>,
}

/// Where an approval request stands.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum ApprovalPhase {
    /// Waiting for a person.
    Pending,
    /// Approved; the change goes ahead if the preview still holds.
    Approved,
    /// Rejected; nothing is written.
    Rejected,
    /// Nobody decided in time; nothing is written.
    Expired,
    /// YNAB or the plan changed since the preview; a new request follows.
    Stale,
    /// The approval was spent on its one write.
    Applied,
    /// Not a request ledgerops issued (or decided before ledgerops issued it): it authorizes
    /// nothing.
    Ignored,
}
