//! What a ConfigRepo does with a fetched revision: which documents it may apply, what to apply
//! and prune, when to hold a revision for a person, the status to write, and which ConfigRepos a
//! Gitea push concerns.

pub mod address;
pub mod authorship;
pub mod decide;
pub mod demotion;
pub mod documents;
pub mod feedback;
pub mod inventory;
pub mod ownership;
pub mod push;
pub mod status;
pub mod url;
pub mod yaml;

/// The kinds a repository may declare. Nothing else: a repository never creates Secrets, RBAC,
/// ApprovalRequests (only the controller opens those, and a person answers them) or AgentJobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RepoKind {
    Budget,
    Transaction,
    CategorizationPlan,
    CategorizationRule,
}

impl RepoKind {
    pub const ALL: [RepoKind; 4] = [
        RepoKind::Budget,
        RepoKind::Transaction,
        RepoKind::CategorizationPlan,
        RepoKind::CategorizationRule,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RepoKind::Budget => "Budget",
            RepoKind::Transaction => "Transaction",
            RepoKind::CategorizationPlan => "CategorizationPlan",
            RepoKind::CategorizationRule => "CategorizationRule",
        }
    }

    pub fn parse(kind: &str) -> Option<RepoKind> {
        RepoKind::ALL.into_iter().find(|k| k.as_str() == kind)
    }
}

/// The revision reported in status and Events: `<branch>@sha1:<commit>`, as Flux spells it.
pub fn revision(branch: &str, commit: &str) -> String {
    format!("{branch}@sha1:{commit}")
}

/// The commit of `last_applied` (a [`revision`]) when it is of `branch`: what a new revision of
/// the branch must descend from. Another branch's commit says nothing about this one's history.
pub fn applied_commit<'a>(last_applied: Option<&'a str>, branch: &str) -> Option<&'a str> {
    last_applied?
        .strip_prefix(branch)?
        .strip_prefix("@sha1:")
        .filter(|c| !c.is_empty())
}

/// The annotation a person sets to the held revision to let its prune go ahead.
pub const CONFIRM_PRUNE: &str = "ledgerops.dev/confirm-prune";
/// The annotation a person sets to a revision that rewrote the branch to let it be applied.
pub const CONFIRM_REWRITE: &str = "ledgerops.dev/confirm-rewrite";
/// The annotation that keeps an object when the repository stops declaring it (value `disabled`).
pub const PRUNE: &str = "ledgerops.dev/prune";

/// What the API server holds of one object of a repository kind in the namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub kind: RepoKind,
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    pub generation: Option<i64>,
    /// It carries `ledgerops.dev/prune: disabled`.
    pub opted_out: bool,
    /// Its write is in flight (see [`decide::write_in_flight`]).
    pub applying: bool,
    /// A rule's content key while a demotion is in force at its generation.
    pub demoted: Option<String>,
    /// The Gitea repository (`owner/name`) a learned rule was proposed to, and the ConfigRepo
    /// and branch that proposed it, as its status says, while the proposal stands and nobody
    /// blessed the rule.
    pub proposed_to: Option<Proposed>,
    /// Its `ledgerops.dev/proposed-by` and when it was made (see [`ownership::Maker`]).
    pub made: Option<(String, k8s_openapi::jiff::Timestamp)>,
}

/// Where a learned rule was proposed, by whom (see [`Live::proposed_to`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    /// The Gitea repository, `owner/name`.
    pub repository: String,
    /// The ConfigRepo that proposed it.
    pub config_repo: String,
    /// The branch its pull request goes to.
    pub branch: String,
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
