//! `ConfigRepo`: a Git repository whose resources ledgerops applies and prunes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::{DurationString, SecretRef};

/// A Git repository holding ledgerops resources. They are applied with server-side apply, and
/// the ones it no longer declares are pruned.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "ledgerops.dev",
    version = "v1alpha1",
    kind = "ConfigRepo",
    namespaced,
    status = "ConfigRepoStatus",
    shortname = "crepo",
    category = "ledgerops",
    doc = "A Git repository holding ledgerops resources. They are applied with server-side apply, and the ones it no longer declares are pruned.",
    printcolumn(name = "URL", type_ = "string", json_path = ".spec.url"),
    printcolumn(name = "Branch", type_ = "string", json_path = ".spec.branch"),
    printcolumn(
        name = "Revision",
        type_ = "string",
        json_path = ".status.lastAppliedRevision"
    ),
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRepoSpec {
    /// Clone URL (`https://`, `http://`, `ssh://` or `file://`).
    #[schemars(regex(pattern = r"^(https?|ssh|file)://[^\s]+$"))]
    pub url: String,
    /// Branch to follow.
    #[serde(default = "default_branch")]
    #[schemars(length(min = 1, max = 255))]
    pub branch: String,
    /// Directory in the repository that holds the resources.
    #[serde(default = "default_path")]
    #[schemars(length(min = 1, max = 1024))]
    #[x_kube(validation = Rule::new("!self.contains('..')").message("path must stay inside the repository: remove '..'"))]
    pub path: String,
    /// How often to fetch: 30s or more (a shorter interval would make the controller a load
    /// generator against the Git server).
    #[serde(default = "default_interval")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('30s')").message("interval must be 30s or more"))]
    pub interval: DurationString,
    /// Secret with `username` and `password` (or `token`) for HTTP(S) remotes. It must carry the
    /// label `ledgerops.dev/git-credentials: "true"` and name the URL prefixes it serves in the
    /// annotation `ledgerops.dev/git-url-prefixes`: a ConfigRepo cannot send just any Secret of
    /// its namespace, or a Git Secret to any server, by naming them. A Secret in another
    /// namespace must also name the ConfigRepo's in `ledgerops.dev/allowed-namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
    /// Delete what this repository applied before and no longer declares.
    #[serde(default = "default_true")]
    pub prune: bool,
    /// Revisions that together prune more than this percentage of the objects a person last
    /// confirmed (`status.pruneBaseline`), or all of the inventory, are held (`Ready=False`,
    /// reason `PruneGuard`) until a person confirms with the annotation
    /// `ledgerops.dev/confirm-prune: <revision>`.
    #[serde(default = "default_max_prune_percent")]
    #[schemars(range(max = 100))]
    pub max_prune_percent: u8,
    /// Stops fetching and applying until set back to false.
    #[serde(default)]
    pub suspend: bool,
    /// A ServiceAccount of this namespace that the repository's objects are dry-run, applied and
    /// pruned as (impersonated, as Flux does), so the repository can do only what that account
    /// may. Unset: the controller's own rights, which reach only ledgerops kinds in this
    /// namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Once a learned Candidate CategorizationRule of this namespace has this many
    /// confirmations and no correction, ledgerops proposes it as a pull request on this
    /// repository (with the `/agent` Gitea integration, for a repository of that Gitea); merging
    /// it blesses the rule. 0: never.
    #[serde(default = "default_propose_rules_after")]
    #[schemars(range(max = 1000))]
    pub propose_rules_after: u32,
    /// What the repository may do. `Propose` (the default): Transactions, CategorizationPlans
    /// and unblessed CategorizationRules, which still pass the Budget's approval policy.
    /// `Govern`: also Budgets, and merged rules are blessed. Only an owner (the verb `govern` on
    /// configrepos) may set `Govern`, or change or delete a ConfigRepo that has it.
    #[serde(default)]
    pub authority: RepoAuthority,
}

/// What a ConfigRepo's repository may declare.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema,
)]
pub enum RepoAuthority {
    /// Proposals only: Transactions, CategorizationPlans, unblessed CategorizationRules.
    #[default]
    Propose,
    /// Also Budgets, and rules blessed by the merge.
    Govern,
}

fn default_propose_rules_after() -> u32 {
    5
}

fn default_branch() -> String {
    "main".into()
}

fn default_path() -> String {
    ".".into()
}

fn default_interval() -> DurationString {
    "1m".into()
}

fn default_max_prune_percent() -> u8 {
    50
}

fn default_true() -> bool {
    true
}

/// What was fetched and applied.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRepoStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Current state: `Ready` when the last revision is applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// A one-word summary for `kubectl get`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<RepoPhase>,
    /// Commit whose resources are applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_revision: Option<String>,
    /// Commit last fetched, applied or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_revision: Option<String>,
    /// When a fetch last changed this status (an unchanged revision writes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fetch_time: Option<Time>,
    /// Every object applied from the repository: what prune compares against, and the only
    /// objects the repository may change or delete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inventory: Vec<InventoryEntry>,
    /// How many objects the inventory held when a person last confirmed a prune (or when the
    /// first revision was applied): what the prune guard measures against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune_baseline: Option<u32>,
    /// Objects pruned since then, across revisions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pruned_since_baseline: u32,
    /// Rules of the repository demoted by a person's override: applied without the merge's
    /// blessing while the repository declares them unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub demoted: Vec<DemotedRule>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A rule a person's override demoted, by what it says.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct DemotedRule {
    /// The CategorizationRule's name.
    pub name: String,
    /// A hash of its match and category: a changed rule is a new one.
    pub key: String,
}

/// A ConfigRepo's state.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
pub enum RepoPhase {
    /// Not fetched yet.
    Pending,
    /// The latest revision is applied.
    Ready,
    /// The remote could not be fetched.
    FetchFailed,
    /// A resource in the repository was refused.
    ApplyFailed,
    /// The revision would prune too much of the inventory; waiting for a person to confirm.
    PruneHeld,
    /// The branch was rewritten (the revision does not descend from the applied one); waiting
    /// for a person to confirm.
    RewriteHeld,
    /// `spec.suspend` is true.
    Suspended,
}

/// One object applied from the repository.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InventoryEntry {
    /// Kind of the object.
    pub kind: String,
    /// Name of the object, in the ConfigRepo's namespace.
    pub name: String,
    /// Digest of the document applied: an unchanged document is not applied again.
    #[serde(default)]
    pub digest: String,
    /// The object's generation after the apply: another value means someone changed its spec,
    /// and the document is applied again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// The commit the document was last applied from: where what became of it is reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The object's uid once applied: an object of the same name someone else made is not this
    /// repository's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}
