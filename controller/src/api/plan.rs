//! `CategorizationPlan`: many category assignments applied together, or the undo of a plan.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::{CategoryChange, DecisionRecord, LocalRef, Review, WriteIntent};

/// A batch of category assignments, previewed, approved by a person and applied in one request;
/// or, with `undoOf`, the revert of an applied plan.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "CategorizationPlan",
    namespaced,
    status = "CategorizationPlanStatus",
    shortname = "cplan",
    category = "ledgerops",
    doc = "A batch of category assignments, previewed, approved by a person and applied in one request; or, with undoOf, the revert of an applied plan.",
    printcolumn(name = "Budget", type_ = "string", json_path = ".spec.budgetRef.name"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Changes",
        type_ = "integer",
        json_path = ".status.preview.changeCount"
    ),
    printcolumn(
        name = "Unchanged",
        type_ = "integer",
        json_path = ".status.preview.unchangedCount"
    ),
    printcolumn(
        name = "Written",
        type_ = "integer",
        json_path = ".status.progress.written",
        priority = 1
    ),
    printcolumn(
        name = "Operation",
        type_ = "string",
        json_path = ".status.operationId",
        priority = 1
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new("has(self.assignments) != has(self.undoOf)").message("set either assignments or undoOf, not both"))]
#[serde(rename_all = "camelCase")]
pub struct CategorizationPlanSpec {
    /// The Budget the transactions belong to.
    #[x_kube(validation = Rule::new("self == oldSelf").message("budgetRef cannot change: create a new plan"))]
    pub budget_ref: LocalRef,
    /// One assignment per transaction. A transaction listed twice is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 5000))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["transactionId".into()]))]
    pub assignments: Option<Vec<Assignment>>,
    /// Name of an applied plan in this namespace to revert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub undo_of: Option<String>,
    /// Why this plan exists, for the person who approves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
}

/// Put one transaction in one category.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    /// YNAB id of the transaction.
    #[schemars(length(min = 1, max = 64))]
    pub transaction_id: String,
    /// YNAB id of the category.
    #[schemars(length(min = 1, max = 64))]
    pub category_id: String,
}

/// The plan's preview, approval and outcome.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CategorizationPlanStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready`, `Valid`, `AwaitingApproval`, `Blocked`, `Interrupted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// A one-word summary for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<PlanPhase>,
    /// What applying the plan would change, computed from current YNAB state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
    /// The ApprovalRequest for the current preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_request: Option<String>,
    /// A write that was started and whose outcome is not recorded yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<WriteIntent>,
    /// Journal id of the applied operation; `undoOf` plans revert it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// When the plan was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_at: Option<Time>,
    /// The generation of the spec whose write finished (Applied, PartiallyApplied or Failed):
    /// an edit after it is previewed anew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_generation: Option<i64>,
    /// How far the write of the current operation got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// Who decided the applied (or rejected) preview, kept after the ApprovalRequest is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
}

/// A one-word summary of a plan's state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum PlanPhase {
    /// Not previewed yet.
    Pending,
    /// The plan cannot be applied as written; see the `Valid` condition.
    Invalid,
    /// Every assignment already holds.
    NothingToDo,
    /// Waiting for a person to decide on the preview.
    AwaitingApproval,
    /// Approved, but the Budget has writes disabled.
    ReadOnly,
    /// The bulk write is in flight.
    Applying,
    /// Written to YNAB and journaled.
    Applied,
    /// Some changes were written and journaled, then the write stopped; see the conditions.
    PartiallyApplied,
    /// A person rejected it.
    Rejected,
    /// Nobody decided in time.
    Expired,
    /// A policy forbids it.
    Blocked,
    /// The write failed; see the conditions.
    Failed,
}

/// How many of an operation's changes YNAB holds.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// Changes YNAB holds.
    pub written: u32,
    /// Changes in the operation.
    pub total: u32,
    /// Chunks (bulk updates of at most the Budget's maxBatchSize) sent so far, and in all.
    pub chunks_done: u32,
    pub chunks: u32,
}

/// What a plan would change.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// Hash over exactly what will be written and the YNAB state it was computed from.
    pub hash: String,
    /// YNAB server_knowledge the preview was computed at.
    pub server_knowledge: i64,
    /// Number of transactions that change.
    pub change_count: u32,
    /// The first changes (at most 100), before and after; `changeCount` counts them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub changes: Vec<CategoryChange>,
    /// Assignments that already hold and are skipped.
    pub unchanged_count: u32,
    /// For an undo: transactions changed since the operation, left alone (at most 100 listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub conflicts: Vec<String>,
    /// Every change summed up for one screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}
