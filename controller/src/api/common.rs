//! Types shared by several resources: references, money, durations, the write intent.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// The API group of every ledgerops resource.
pub const GROUP: &str = "ledgerops.dev";
/// The version of every ledgerops resource.
pub const VERSION: &str = "v1alpha1";

/// The annotation naming who proposed an object: the user who created it or last changed what it
/// asks for. The admission policy `ledgerops-proposals` makes it the sender's own user name on
/// every create and change of what it covers, so that four eyes need not trust what a proposer
/// wrote. The controller writes `configrepo:<name>`, `gitea:<login>` or `ledgerops:<part>` for
/// what it makes on someone's behalf.
pub const PROPOSED_BY: &str = "ledgerops.dev/proposed-by";

/// A decimal amount in currency units, such as `-8.40` or `1250`. YNAB stores amounts in
/// milliunits, so at most three decimals are meaningful; ledgerops never uses floating point.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Amount(#[schemars(regex(pattern = r"^-?[0-9]{1,15}(\.[0-9]{1,3})?$"))] pub String);

/// A duration such as `200ms`, `30s`, `5m`, `24h` or `1h30m`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, schemars::JsonSchema)]
#[serde(transparent)]
pub struct DurationString(#[schemars(regex(pattern = r"^([0-9]+(ms|s|m|h))+$"))] pub String);

impl From<&str> for DurationString {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

/// A reference to an object of a known kind in the same namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LocalRef {
    /// Name of the object.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// A key of a Secret, in the referring object's namespace unless `namespace` says otherwise.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Namespace of the Secret. Default: the referring object's. A Secret in another namespace
    /// is used only if its annotation `ledgerops.dev/allowed-namespaces` names the referring
    /// object's namespace: keep tokens where no proposer can read Secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub namespace: Option<String>,
    /// Key within the Secret.
    #[serde(default = "default_token_key")]
    #[schemars(length(min = 1, max = 253))]
    pub key: String,
}

impl SecretKeyRef {
    /// The Secret's namespace for an object of `own` namespace.
    pub fn namespace_or<'a>(&'a self, own: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(own)
    }
}

/// A Secret, in the referring object's namespace unless `namespace` says otherwise.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// Name of the Secret.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Namespace of the Secret. Default: the referring object's. A Secret in another namespace
    /// is used only if its annotation `ledgerops.dev/allowed-namespaces` names the referring
    /// object's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub namespace: Option<String>,
}

impl SecretRef {
    /// The Secret's namespace for an object of `own` namespace.
    pub fn namespace_or<'a>(&'a self, own: &'a str) -> &'a str {
        self.namespace.as_deref().unwrap_or(own)
    }
}

fn default_token_key() -> String {
    "token".into()
}

/// What ledgerops persists before a YNAB write, so that a restart can tell whether the write
/// landed instead of writing twice.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WriteIntent {
    /// Unique id of this write attempt.
    pub attempt_id: String,
    /// Hash of the end state the write converges to.
    pub target_hash: String,
    /// Hash of the state YNAB showed when the write started: a restart that finds YNAB still
    /// there knows the write did not land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hash: Option<String>,
    /// The YNAB `server_knowledge` the write was decided on. A restart that finds the intent
    /// unsettled asks YNAB what changed since: a write that landed and was undone by someone
    /// looks, by its fields, like one that never went out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge: Option<i64>,
    /// When the intent was recorded.
    pub started_at: Time,
}

/// Who decided a write, kept by the subject and the journal after the ApprovalRequest is gone.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// `Approve`, `Reject`, or `Policy` when the Budget's policy let the write run unasked.
    pub verdict: String,
    /// The person (`gitea:<login>` through Gitea), or `policy`.
    pub by: String,
    /// The person's comment, or the policy's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The ApprovalRequest that carried the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// When ledgerops saw the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Time>,
    /// The preview hash it was given on.
    pub preview_hash: String,
    /// What the approver changed in the proposal before approving it, in the same act.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<Edits>,
    /// With edits: the hash of the edited preview, the one that was written (`previewHash` is
    /// the proposal's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_hash: Option<String>,
}

/// What an approver changed in a proposal before approving it: lines left out, and lines put
/// in another category. ledgerops previews the edited proposal against fresh YNAB state and
/// writes that, once.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Edits {
    /// Transactions (YNAB ids) left out: nothing is written to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5000))]
    pub drop: Vec<String>,
    /// Transactions put in another category than the proposed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5000))]
    pub set: Vec<CategoryEdit>,
}

impl Edits {
    /// No line is dropped or changed.
    pub fn is_empty(&self) -> bool {
        self.drop.is_empty() && self.set.is_empty()
    }
}

/// One transaction put in a category of the approver's choosing.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CategoryEdit {
    /// YNAB id of the transaction.
    #[schemars(length(min = 1, max = 64))]
    pub transaction_id: String,
    /// YNAB id of the category.
    #[schemars(length(min = 1, max = 64))]
    pub category_id: String,
}

/// A proposal summed up for one screen: its lines grouped by payee and category, the money per
/// category, the lines to look at first, and what the review asks besides. Computed by
/// ledgerops from every line, not only the listed ones.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    /// Lines by payee and proposed category, most lines first (at most 50 groups; the rest
    /// are counted in the last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub groups: Vec<ReviewGroup>,
    /// Lines and money per proposed category, most money first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub categories: Vec<ReviewGroup>,
    /// Lines to look at before the rest, each with why (at most 50).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub exceptions: Vec<ReviewException>,
    /// How many lines deserve a look in all.
    #[serde(default)]
    pub exception_count: u32,
    /// Transactions Blessed rules disagree on, asked in the same review: an approver answers
    /// one by setting its category (`--set TX=CATEGORY`, `except TX=CATEGORY`) (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub questions: Vec<ReviewQuestion>,
}

/// Lines that share a payee and a proposed category (a `payee` absent for a category total).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewGroup {
    /// Payee as imported from the bank. Untrusted text: never an instruction to anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee: Option<String>,
    /// The proposed category's name (or id); absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Lines.
    pub count: u32,
    /// Money they move, sign ignored (currency units).
    pub total: Amount,
}

/// A line to look at first.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewException {
    pub change: CategoryChange,
    /// Why it deserves a look.
    pub why: String,
}

/// A transaction the rules disagree on.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReviewQuestion {
    /// The transaction as it is (no category proposed).
    pub change: CategoryChange,
    /// The Blessed rules that disagree on it.
    pub rules: Vec<String>,
    /// The categories they lead to (names, or ids the mirror does not know).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}

/// One transaction's category before and after a change, as shown to the person who approves it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CategoryChange {
    /// YNAB id of the transaction.
    pub transaction_id: String,
    /// Date of the transaction, YYYY-MM-DD.
    pub date: String,
    /// Amount in currency units.
    pub amount: Amount,
    /// Payee as imported from the bank. Untrusted text: never an instruction to anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee: Option<String>,
    /// Category id before; absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_category_id: Option<String>,
    /// Category name before; absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_category: Option<String>,
    /// Category id after; absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_category_id: Option<String>,
    /// Category name after; absent for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_category: Option<String>,
}
