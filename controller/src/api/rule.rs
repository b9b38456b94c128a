//! `CategorizationRule`: a match on a transaction's facts and the category it leads to, written
//! by a person (or merged through a config repo), and acted on only once a person blessed it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::LocalRef;

/// The most `*` wildcards a payee pattern may hold.
pub const MAX_WILDCARDS: usize = 4;

/// A match on a transaction's facts (payee, and optionally account, amount range, memo) and the
/// category it leads to. A rule acts only while a person's blessing stands: `kubectl get
/// categorizationrules` shows Candidate or Blessed.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "CategorizationRule",
    namespaced,
    status = "CategorizationRuleStatus",
    shortname = "crule",
    category = "ledgerops",
    doc = "A match on a transaction's facts and the category it leads to; it acts only while a person's blessing stands.",
    printcolumn(name = "Budget", type_ = "string", json_path = ".spec.budgetRef.name"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Payee", type_ = "string", json_path = ".status.payee"),
    printcolumn(name = "Category", type_ = "string", json_path = ".spec.categoryId"),
    printcolumn(
        name = "Confirmed",
        type_ = "integer",
        json_path = ".status.learning.confirmations"
    ),
    printcolumn(
        name = "Corrected",
        type_ = "integer",
        json_path = ".status.learning.corrections"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct CategorizationRuleSpec {
    /// The Budget whose transactions the rule is about.
    #[x_kube(validation = Rule::new("self == oldSelf").message("budgetRef cannot change; create a rule for the other Budget instead"))]
    pub budget_ref: LocalRef,
    /// What a transaction must look like for the rule to apply.
    #[serde(rename = "match")]
    pub matches: RuleMatch,
    /// The YNAB category id the rule leads to.
    #[schemars(length(min = 1, max = 64))]
    pub category_id: String,
    /// A person's blessing: while it stands, the rule may act (`/agent suggest` uses it before
    /// the payee's history). Set it in your own name; changing the match or the category of a
    /// blessed rule needs a new blessing in the name of whoever changes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blessing: Option<Blessing>,
}

/// What a transaction must look like. Every field given must hold.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[x_kube(validation = Rule::new("[has(self.payee), has(self.payeeNormalised), has(self.payeePattern)].filter(x, x).size() == 1").message("give exactly one of payee, payeeNormalised and payeePattern"))]
#[x_kube(validation = Rule::new("!has(self.payeePattern) || (self.payeePattern.split('*').size() - 1 <= 4 && self.payeePattern.replace('*', '').trim() != '')").message("payeePattern may hold at most 4 * wildcards, and some text besides them"))]
#[serde(rename_all = "camelCase")]
pub struct RuleMatch {
    /// The payee exactly as YNAB shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub payee: Option<String>,
    /// The merchant behind the payee, as `/agent suggest` normalises it (upper case, without
    /// card-processor prefixes, store numbers and punctuation; at most two words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub payee_normalised: Option<String>,
    /// A pattern on the normalised payee where `*` stands for any text (at most 4 of them);
    /// nothing else is special, so matching stays linear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub payee_pattern: Option<String>,
    /// Only transactions of this YNAB account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 64))]
    pub account_id: Option<String>,
    /// Only amounts in this range (decimal strings, outflows negative), both ends included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<AmountRange>,
    /// Only transactions whose memo contains this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 100))]
    pub memo_contains: Option<String>,
}

/// An amount range; either end may be left open.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AmountRange {
    /// The lowest amount, e.g. `-120.00`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^-?[0-9]{1,12}(\.[0-9]{1,3})?$"))]
    pub min: Option<String>,
    /// The highest amount, e.g. `-0.01`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^-?[0-9]{1,12}(\.[0-9]{1,3})?$"))]
    pub max: Option<String>,
}

/// A person's blessing of a rule.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Blessing {
    /// Who blesses: your own user name (an admission policy refuses any other), or
    /// `configrepo:<name>` for a rule merged into ConfigRepo `<name>` (ledgerops writes that one
    /// when it applies the rule).
    #[schemars(length(min = 1, max = 253))]
    pub by: String,
    /// When, as the person says: it tells one blessing from the next. A config repo's
    /// blessing has none (the merge is the act).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Time>,
}

/// Where a rule stands.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum RulePhase {
    /// Learned or written, not blessed: it never acts.
    Candidate,
    /// Blessed by a person: it may act.
    Blessed,
    /// A person recategorised by hand a transaction ledgerops wrote while the rule was Blessed:
    /// the blessing is withdrawn until a new one is given (or, for a config repo's rule, until
    /// a change to the rule is merged).
    Demoted,
}

/// What the controller observed of a rule.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CategorizationRuleStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready` is True while the rule is Blessed (it may act).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// Candidate, Blessed or Demoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<RulePhase>,
    /// The payee match in one line, for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee: Option<String>,
    /// What people's decisions say about the rule: the writes ledgerops made on their approval
    /// (plans and Transactions) that the rule matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning: Option<RuleLearning>,
    /// The last time a person overrode by hand what ledgerops wrote under the rule's blessing.
    /// It holds for the generation it names: a new blessing (or a merged change) lifts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demotion: Option<Demotion>,
    /// The pull request that proposed the rule to a config repository, once its confirmations
    /// reached the repository's `proposeRulesAfter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Proposal>,
}

/// A rule proposed as a pull request: merging it blesses the rule.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    /// The repository, `owner/name`.
    pub repository: String,
    pub pull_request_url: String,
    /// A hash of the match and category proposed: a rule changed since is proposed again.
    pub key: String,
    pub at: Time,
    /// The ConfigRepo that proposed it, and the branch its pull request goes to: only that
    /// ConfigRepo, following that branch, takes the merged rule over (while nobody blessed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Set when ledgerops closed the pull request because its branch came to hold something
    /// ledgerops did not write: the rule then no longer counts as proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Withdrawal>,
}

/// Why and when ledgerops closed a rule's pull request.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawal {
    pub at: Time,
    /// What was found on the branch, by name (never its content).
    #[schemars(length(max = 20))]
    pub found: Vec<String>,
}

/// What people's decisions say about a rule, counted afresh from the plans and Transactions the
/// cluster holds (so a restart neither loses nor doubles any).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RuleLearning {
    /// Approved writes the rule matches that gave its category.
    pub confirmations: u32,
    /// Approved writes the rule matches that gave another category, and writes in its category
    /// a person changed by hand in YNAB afterwards.
    pub corrections: u32,
    /// When the latest of those writes was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<Time>,
    /// The latest of those writes, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10))]
    pub evidence: Vec<Evidence>,
}

/// One write a rule was measured against.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// `CategorizationPlan/<name>` or `Transaction/<name>`.
    pub source: String,
    /// YNAB id of the transaction.
    pub transaction_id: String,
    /// The category ledgerops wrote.
    pub category_id: String,
    /// Who decided the write: a person, or `policy`.
    pub by: String,
    pub at: Time,
    /// `Confirmation`, `Correction` (another category was approved) or `Override` (a person
    /// changed it by hand in YNAB afterwards).
    pub verdict: String,
}

/// A person overrode by hand what ledgerops wrote under a rule's blessing.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Demotion {
    /// The rule's generation when it was demoted: the demotion holds while it is current.
    pub generation: i64,
    /// The blessing withdrawn.
    pub blessing: Blessing,
    /// YNAB id of the transaction the person recategorised.
    pub transaction_id: String,
    /// What ledgerops wrote (the rule's category), and what YNAB shows now (none: uncategorised).
    pub written_category_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_category_id: Option<String>,
    /// The write: `CategorizationPlan/<name>` or `Transaction/<name>`.
    pub source: String,
    /// When ledgerops saw the override.
    pub at: Time,
}
