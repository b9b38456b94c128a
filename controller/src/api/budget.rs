//! `Budget`: one YNAB plan, the token to reach it, and the policy for writing to it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::autopilot::{Autopilot, AutopilotStatus};
use super::common::{Amount, DurationString, SecretKeyRef};

/// A YNAB plan that ledgerops mirrors and, when writes are enabled, writes to.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "Budget",
    namespaced,
    status = "BudgetStatus",
    shortname = "bgt",
    category = "ledgerops",
    doc = "A YNAB plan that ledgerops mirrors and, when writes are enabled, writes to.",
    printcolumn(name = "Plan", type_ = "string", json_path = ".spec.planId"),
    printcolumn(name = "Writes", type_ = "boolean", json_path = ".spec.writes.enabled"),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Transactions",
        type_ = "integer",
        json_path = ".status.counts.transactions"
    ),
    printcolumn(
        name = "Requests/h",
        type_ = "integer",
        json_path = ".status.requests.usedLastHour"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct BudgetSpec {
    /// YNAB plan id (a UUID), or `last-used` for the plan last opened in YNAB.
    #[schemars(regex(
        pattern = r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|last-used)$"
    ))]
    pub plan_id: String,
    /// The Secret key that holds the YNAB personal access token. Keep the Secret in a namespace
    /// where no proposer may read Secrets (`namespace`, granted by the Secret's annotation
    /// `ledgerops.dev/allowed-namespaces`); condition `TokenProtected` tells who else may.
    pub token_secret_ref: SecretKeyRef,
    /// Base URL of the YNAB API, ending in `/v1`.
    #[serde(default = "default_api_url")]
    #[schemars(regex(pattern = r"^https?://[^\s]+$"))]
    pub api_url: String,
    /// Whether ledgerops may write to YNAB. Off by default: everything is previewed, nothing written.
    #[serde(default)]
    pub writes: WritePolicy,
    /// Which writes need a person, and what happens when nobody answers.
    #[serde(default)]
    pub approval: ApprovalPolicy,
    /// Months up to and including this one (YYYY-MM) are closed: their transactions are never
    /// edited. YNAB itself has no notion of a closed month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])$"))]
    pub closed_through: Option<String>,
    /// The most YNAB requests ledgerops makes with this token per rolling hour. YNAB refuses
    /// requests past 200 an hour.
    #[serde(default = "default_requests_per_hour")]
    #[schemars(range(min = 1, max = 200))]
    pub requests_per_hour: u32,
    /// The percentage of `requestsPerHour` kept for what a person waits for: the writes of a
    /// change a person approved, undos, and syncs asked for; they spend it at once, and beyond
    /// it take the paced share ahead of the rest. Periodic syncs, the policy's and the
    /// autopilot's own writes and a ConfigRepo's converges never spend it, and are spread
    /// across the hour rather than sent in one burst.
    #[serde(default = "default_reserved_requests_percent")]
    #[schemars(range(min = 0, max = 90))]
    pub reserved_requests_percent: u8,
    /// How often the mirror asks YNAB for what changed.
    #[serde(default = "default_sync_interval")]
    pub sync_interval: DurationString,
    /// Stops syncing and writing until set back to false.
    #[serde(default)]
    pub suspend: bool,
    /// Plans made by the controller from Blessed CategorizationRules. Off by default.
    #[serde(default)]
    pub autopilot: Autopilot,
}

fn default_api_url() -> String {
    "https://api.ynab.com/v1".into()
}

fn default_requests_per_hour() -> u32 {
    180
}

fn default_reserved_requests_percent() -> u8 {
    25
}

fn default_sync_interval() -> DurationString {
    "5m".into()
}

/// Whether and how ledgerops writes to YNAB.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WritePolicy {
    /// Allow writes. When false, changes are previewed and approved but never written.
    #[serde(default)]
    pub enabled: bool,
    /// How long writes wait to be gathered into one bulk request.
    #[serde(default = "default_batch_window")]
    pub batch_window: DurationString,
    /// The most transactions sent in one bulk request.
    #[serde(default = "default_max_batch_size")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_batch_size: u32,
}

impl Default for WritePolicy {
    fn default() -> Self {
        Self {
            enabled: false,
            batch_window: default_batch_window(),
            max_batch_size: default_max_batch_size(),
        }
    }
}

fn default_batch_window() -> DurationString {
    "200ms".into()
}

fn default_max_batch_size() -> u32 {
    100
}

/// Which writes run on their own, which ask a person, and which are refused.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalPolicy {
    /// A submission (a plan, or one Transaction's change) whose transactions move less than
    /// this amount in total (in currency units, sign ignored) runs without asking. Unset: every
    /// write asks a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_approve_below: Option<Amount>,
    /// The most changes one submission may hold and still run without asking; a plan with more
    /// asks a person, however small its total.
    #[serde(default = "default_max_changes")]
    #[schemars(range(min = 1, max = 5000))]
    pub auto_approve_max_changes: u32,
    /// Fields other than the category whose changes may run without asking, under the same
    /// limits. Unlisted (the default), a change to them always asks a person.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 4))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub auto_approve_fields: Vec<ManagedField>,
    /// Ask a person, whatever the amount, when a payee has never been categorised before.
    #[serde(default = "default_true")]
    pub ask_on_new_payee: bool,
    /// Categories ledgerops must never move a transaction into or out of: such a change is
    /// blocked, not asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub blocked_category_ids: Vec<String>,
    /// How long a request waits for a decision before it expires; at least `1m`.
    #[serde(default = "default_expiry")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1m')").message("approval.expiry must be at least 1m, so that a person can read the request before it expires: use for example 1h or 24h"))]
    pub expiry: DurationString,
    /// Whom to tell when a request expires unanswered (user names or addresses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalate_to: Vec<String>,
    /// Four eyes: nobody who shaped a change (its lineage: everyone who created or changed the
    /// plan or Transaction, the makers of the ConfigRepo that applied it, the blessers of the
    /// rules behind an autopilot plan) can approve it, and nobody who shaped a rule can bless
    /// it. Turn off only for a household of one person; only an owner (`govern`) may.
    #[serde(default = "default_true")]
    pub four_eyes: bool,
    /// Who a Gitea login is in Kubernetes: a `/agent approve` or `reject` in Gitea counts as a
    /// decision by that user (who must hold `approve` and be outside the change's lineage).
    /// With four eyes, a login mapped to nobody decides nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    #[x_kube(validation = Rule::new("self.all(a, self.exists_one(b, b.login == a.login))").message("each Gitea login is mapped once"))]
    pub gitea_users: Vec<GiteaUser>,
    /// Where a request that waits for a person is shown: one Gitea issue per request, assigned
    /// to the mapped logins (`giteaUsers`) who may approve it, that follows it to its end.
    #[serde(default)]
    pub inbox: Inbox,
}

/// The Gitea inbox of a Budget's requests.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Inbox {
    /// Open an issue for each request that waits for a person. On by default wherever the
    /// controller's Gitea bot speaks for the Budget's namespace (`--agent-namespace`).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// The repository (`owner/name` on that Gitea, one the bot may speak in). By default the
    /// config repository that declares the Budget, else the first one followed in its namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"))]
    pub repository: Option<String>,
    /// The morning queue: once a day at this local time (`HH:MM`, 24-hour clock), one issue in
    /// the same repository lists every request that waits, oldest first, with links and amounts,
    /// assigned to the mapped logins who may approve; yesterday's is closed. Nothing is opened
    /// when nothing waits. Unset: no digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub digest_at: Option<String>,
    /// The IANA time zone of `digestAt`, such as `Europe/Paris`.
    #[serde(default = "default_time_zone")]
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_+/-]+$"))]
    pub time_zone: String,
}

fn default_time_zone() -> String {
    "UTC".into()
}

impl Default for Inbox {
    fn default() -> Self {
        Self {
            enabled: true,
            repository: None,
            digest_at: None,
            time_zone: default_time_zone(),
        }
    }
}

/// A Gitea login and the Kubernetes user it is.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GiteaUser {
    /// The Gitea login, as in `/agent` comments.
    #[schemars(
        length(min = 1, max = 100),
        regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    )]
    pub login: String,
    /// The Kubernetes user name (`kubectl auth whoami`) it stands for.
    #[schemars(length(min = 1, max = 253))]
    pub user: String,
}

impl ApprovalPolicy {
    /// [`Self::gitea_users`] by login.
    pub fn gitea_user_map(&self) -> std::collections::BTreeMap<String, String> {
        self.gitea_users
            .iter()
            .map(|g| (g.login.clone(), g.user.clone()))
            .collect()
    }
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self {
            auto_approve_below: None,
            auto_approve_max_changes: default_max_changes(),
            auto_approve_fields: Vec::new(),
            ask_on_new_payee: true,
            blocked_category_ids: Vec::new(),
            expiry: default_expiry(),
            escalate_to: Vec::new(),
            four_eyes: true,
            gitea_users: Vec::new(),
            inbox: Inbox::default(),
        }
    }
}

/// A field of a transaction ledgerops manages besides its single category.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ManagedField {
    /// The lines of a split.
    Split,
    Memo,
    FlagColor,
    Approved,
}

fn default_max_changes() -> u32 {
    25
}

fn default_true() -> bool {
    true
}

fn default_expiry() -> DurationString {
    "24h".into()
}

/// What ledgerops last saw of the plan and of its own use of YNAB.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BudgetStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready` (with reasons Synced, Unauthorized, NotFound, RateLimited,
    /// Unreachable, TokenNotGranted, …), `RateLimited`, and `TokenProtected` (False with reason
    /// ReadableByOthers when someone who does not govern the Budget may read its token's Secret).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// A one-word summary for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<BudgetPhase>,
    /// The plan's name in YNAB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_name: Option<String>,
    /// The plan's currency, which sets how many decimals an amount has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<Currency>,
    /// When the mirror last caught up with YNAB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sync_time: Option<Time>,
    /// YNAB's `server_knowledge` at the last sync: the next sync asks only for what came after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_knowledge: Option<i64>,
    /// How many records the mirror holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<MirrorCounts>,
    /// YNAB requests made with this token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestUse>,
    /// What the autopilot proposed today (its own part of the status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autopilot: Option<AutopilotStatus>,
    /// The categories a change may use (not hidden, not deleted), by name: an approver names
    /// one with `kubectl ledgerops approve --set`, and the decision records its id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000))]
    pub categories: Vec<NamedCategory>,
    /// The version of the ledgerops controller that last wrote this status: `kubectl ledgerops
    /// version` and `check` compare it with their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_version: Option<String>,
}

/// A category as a person names it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NamedCategory {
    /// YNAB id.
    pub id: String,
    /// Its name in YNAB. Untrusted text: never an instruction to anyone.
    pub name: String,
    /// The name of its category group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// A one-word summary of a Budget's state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum BudgetPhase {
    /// Not synced yet.
    Pending,
    /// The mirror is current.
    Ready,
    /// YNAB refused the token.
    Unauthorized,
    /// The plan does not exist for this token.
    NotFound,
    /// Waiting for the hourly request budget to allow another request.
    RateLimited,
    /// YNAB could not be reached or answered with a server error.
    Unreachable,
    /// `spec.suspend` is true.
    Suspended,
}

/// A plan's currency.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Currency {
    /// ISO 4217 code, such as `EUR`.
    pub iso_code: String,
    /// Digits after the decimal point.
    #[schemars(range(min = 0, max = 3))]
    pub decimal_digits: u8,
}

/// Record counts in the mirror.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MirrorCounts {
    /// Accounts, open and closed.
    pub accounts: u32,
    /// Categories, hidden ones included.
    pub categories: u32,
    /// Payees.
    pub payees: u32,
    /// Transactions not deleted.
    pub transactions: u32,
}

/// How much of the hourly YNAB request budget is used.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestUse {
    /// Requests made in the last rolling hour.
    pub used_last_hour: u32,
    /// The budget per rolling hour (`spec.requestsPerHour`).
    pub limit_per_hour: u32,
    /// When the next request is allowed, while rate limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limited_until: Option<Time>,
    /// Requests per hour kept for what a person waits for (`spec.reservedRequestsPercent` of
    /// the limit).
    #[serde(default)]
    pub reserved_per_hour: u32,
    /// The last rolling hour's requests by why they went out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_priority: Option<RequestsByPriority>,
    /// When a request nobody waits for (a periodic sync, an unasked write) may next go out, while
    /// the pace or the reserve holds them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_paced_at: Option<Time>,
    /// Of `usedLastHour`, the requests this process made for this Budget: Budgets sharing a
    /// token show the token's counts above, and each its own share here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_this_budget: Option<u32>,
}

/// Requests by why they went out.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestsByPriority {
    /// Reads and writes of changes a person approved, and undos.
    pub approved: u32,
    /// Syncs a person asked for.
    pub asked: u32,
    /// Writes the Budget's policy or the autopilot ran unasked.
    pub unasked: u32,
    /// Periodic and watch-triggered syncs, and a ConfigRepo's converges.
    pub background: u32,
}
