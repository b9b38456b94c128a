//! A Budget's autopilot: new uncategorised transactions that Blessed rules agree on become a
//! CategorizationPlan the controller makes, which the Budget's approval policy treats like any
//! other plan. A daily circuit breaker bounds what it proposes.

use serde::{Deserialize, Serialize};

use super::common::Amount;
use kube::KubeSchema;

/// Marks the plans the autopilot makes (value: the Budget's name), for people to select them
/// with (`kubectl get categorizationplans -l ledgerops.dev/autopilot`). A label anyone with
/// `edit` could set or remove: ledgerops never reads it. It knows its own plans by
/// [`AUTOPILOT_PROPOSER`] in their lineage.
pub const AUTOPILOT_LABEL: &str = "ledgerops.dev/autopilot";

/// The name the autopilot signs its plans' lineage (`ledgerops.dev/proposed-by`) with. Admission
/// lets nobody but the controller add a name other than their own to a lineage, nor remove one,
/// so a plan whose lineage holds it was made by the autopilot, and every plan it made holds it.
pub const AUTOPILOT_PROPOSER: &str = "ledgerops:autopilot";

/// Whether, and how much, the autopilot may propose (`spec.autopilot`). Off by default.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Autopilot {
    /// Turn uncategorised transactions that Blessed rules agree on into plans. The plans still
    /// pass `spec.approval` (run, ask or block) like any plan.
    #[serde(default)]
    pub enabled: bool,
    /// The circuit breaker: the most transactions the autopilot puts into plans per day (UTC).
    /// Past it the autopilot stops for the day and says so in the Budget's status and Events.
    #[serde(default = "default_max_transactions")]
    #[schemars(range(min = 1, max = 5000))]
    pub max_transactions_per_day: u32,
    /// The circuit breaker: the most money (currency units, sign ignored) the autopilot's plans
    /// may move per day (UTC).
    #[serde(default = "default_max_amount")]
    pub max_amount_per_day: Amount,
}

impl Default for Autopilot {
    fn default() -> Self {
        Self {
            enabled: false,
            max_transactions_per_day: default_max_transactions(),
            max_amount_per_day: default_max_amount(),
        }
    }
}

fn default_max_transactions() -> u32 {
    20
}

fn default_max_amount() -> Amount {
    Amount("500".into())
}

/// What the autopilot proposed today (`status.autopilot`), written before each plan it makes:
/// a crash between the two counts a plan that was never made, never the reverse.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AutopilotStatus {
    /// The day counted, YYYY-MM-DD (UTC).
    pub day: String,
    /// Transactions put into plans that day.
    pub transactions: u32,
    /// Money those plans move, sign ignored (currency units).
    pub amount: Amount,
    /// The plans made that day, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub plans: Vec<String>,
    /// Why the circuit breaker stopped the autopilot for the day, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tripped: Option<String>,
    /// Transactions that Blessed rules disagree on: left alone, and asked about once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub disagreements: Vec<Disagreement>,
}

/// Blessed rules that lead one transaction to different categories.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Disagreement {
    pub transaction_id: String,
    /// The rules, sorted.
    pub rules: Vec<String>,
    /// The categories (ids) they lead to, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
}
