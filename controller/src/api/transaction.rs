//! `Transaction`: the end state one YNAB transaction should reach.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::{Amount, DecisionRecord, LocalRef, WriteIntent};

/// The end state of one YNAB transaction. Fields left out are not managed.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "Transaction",
    namespaced,
    status = "TransactionStatus",
    shortname = "ytx",
    category = "ledgerops",
    doc = "The end state of one YNAB transaction. Fields left out are not managed.",
    printcolumn(
        name = "Transaction",
        type_ = "string",
        json_path = ".spec.transactionId"
    ),
    printcolumn(
        name = "Category",
        type_ = "string",
        json_path = ".status.current.categoryName"
    ),
    printcolumn(
        name = "Amount",
        type_ = "string",
        json_path = ".status.current.amount"
    ),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new("!(has(self.categoryId) && has(self.split))").message("set categoryId or split, not both"))]
#[x_kube(validation = Rule::new("has(self.categoryId) || has(self.split) || has(self.memo) || has(self.approved) || has(self.flagColor)").message("declare at least one of categoryId, split, memo, approved or flagColor"))]
#[serde(rename_all = "camelCase")]
pub struct TransactionSpec {
    /// The Budget this transaction belongs to.
    #[x_kube(validation = Rule::new("self == oldSelf").message("budgetRef cannot change: create a new Transaction"))]
    pub budget_ref: LocalRef,
    /// YNAB id of the transaction.
    #[schemars(length(min = 1, max = 64))]
    #[x_kube(validation = Rule::new("self == oldSelf").message("transactionId cannot change: create a new Transaction"))]
    pub transaction_id: String,
    /// The one category the whole amount goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub category_id: Option<String>,
    /// A split across several categories; the lines must add up to the transaction's amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 50))]
    pub split: Option<Vec<SplitLine>>,
    /// The memo. Ledgerops writes it but does not treat a memo changed by someone else as a
    /// divergence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub memo: Option<String>,
    /// Whether the transaction is approved in YNAB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The flag; `none` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_color: Option<Flag>,
}

/// One line of a split.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct SplitLine {
    /// Amount of this line in currency units, with the transaction's sign.
    pub amount: Amount,
    /// Category of this line.
    #[schemars(length(min = 1, max = 64))]
    pub category_id: String,
    /// Memo of this line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub memo: Option<String>,
}

// Not YNAB's wire type (`ynab_model::FlagColor`, which has `""` and `null` where this has
// `none`): the CRDs' own spelling, converted in `logic::transaction::converge`. A plain comment, as the doc
// comment below is the schema's description.
/// A YNAB flag colour.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Flag {
    /// No flag.
    None,
    Red,
    Orange,
    Yellow,
    Green,
    Blue,
    Purple,
}

/// What ledgerops saw in YNAB and did about it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TransactionStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready`, `Converged`, `Diverged`, `Blocked`, `AwaitingApproval`,
    /// `Interrupted`, `Valid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// A one-word summary for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<TransactionPhase>,
    /// The transaction as YNAB showed it at the last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<ObservedTransaction>,
    /// What ledgerops last wrote, or adopted: an edit by someone else is measured against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<AppliedState>,
    /// YNAB's state when ledgerops first read the transaction for this generation, before it
    /// had written or adopted anything: the first write goes out only while YNAB still shows
    /// it, so an edit someone makes meanwhile is not written over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// A write that was started and whose outcome is not recorded yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<WriteIntent>,
    /// Set when a person kept YNAB's state over the spec (`ledgerops.dev/resolve: theirs`):
    /// the generation it holds for. Writing resumes when the spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_generation: Option<i64>,
    /// Set when YNAB refused the write itself (invalid, missing, in conflict): the generation
    /// it was refused at. Sending it again would fail the same way; writing resumes when the
    /// spec changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_generation: Option<i64>,
    /// Who decided the last write, kept after the ApprovalRequest is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionRecord>,
}

/// A one-word summary of a Transaction's state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum TransactionPhase {
    /// Not read from YNAB yet.
    Pending,
    /// YNAB holds the declared state.
    Converged,
    /// Writes are disabled on the Budget; the status shows what would change.
    WouldWrite,
    /// A person must approve the write first.
    AwaitingApproval,
    /// A write is in flight.
    Writing,
    /// Someone else changed the category: a person must say which side wins.
    Diverged,
    /// A guard forbids the write (reconciled, closed month, blocked category).
    Blocked,
    /// The spec cannot be applied as written.
    Invalid,
    /// A write was cut off and its outcome could not be settled.
    Interrupted,
}

/// A transaction as read from YNAB.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ObservedTransaction {
    /// Date, YYYY-MM-DD.
    pub date: String,
    /// Amount in currency units.
    pub amount: Amount,
    /// Account id.
    pub account_id: String,
    /// Payee name as YNAB shows it. Untrusted text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee_name: Option<String>,
    /// Category id; absent when uncategorized or split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<String>,
    /// Category name, or `Split` for a split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_name: Option<String>,
    /// Memo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
    /// Approved in YNAB.
    pub approved: bool,
    /// Flag colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_color: Option<Flag>,
    /// `cleared`, `uncleared` or `reconciled`.
    pub cleared: String,
    /// YNAB's server_knowledge when this state was read; syncs that leave the record as it
    /// is do not move it.
    pub server_knowledge: i64,
}

/// YNAB's state on the declared fields, as first read for one generation.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The generation it was read for.
    pub generation: i64,
    /// Hash of the state read.
    pub hash: String,
    /// When it was read.
    pub at: Time,
}

/// The end state ledgerops last wrote or adopted, and its hash.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AppliedState {
    /// Hash of this end state.
    pub hash: String,
    /// Category written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<String>,
    /// Split written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Vec<SplitLine>>,
    /// Memo written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
    /// Approved flag written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// Flag written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag_color: Option<Flag>,
    /// When it was written or adopted.
    pub at: Time,
}
