//! Who holds which power, decided without trusting what a proposer wrote: the proposer an
//! object names (`ledgerops.dev/proposed-by`) is the sender's own user name, admission sees to
//! that.
//!
//! Four powers are kept apart: proposing (RBAC `create`/`update`), approving (the custom verb
//! `approve` on `approvalrequests`), blessing (`bless` on `categorizationrules`) and governing
//! (`govern` on `budgets` and `configrepos`). Admission checks the verbs when a person acts; the
//! controller asks the API server's authorizer again (a SubjectAccessReview) right before a write,
//! from the names these functions pick. A name the controller wrote on someone's behalf
//! (`gitea:`, `configrepo:`, `ledgerops:`) is resolved to the authority it stands for.

use std::collections::BTreeMap;

use crate::api::approval::ApprovalRequest;
use crate::api::common::PROPOSED_BY;

/// A power beyond proposing, held through a custom verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Power {
    Approve,
    Bless,
    Govern,
}

impl Power {
    /// The custom verb the authorizer checks.
    pub fn verb(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Bless => "bless",
            Self::Govern => "govern",
        }
    }

    /// The shipped ClusterRole that grants it.
    pub fn role(self) -> &'static str {
        match self {
            Self::Approve | Self::Bless => "ledgerops-approver",
            Self::Govern => "ledgerops-owner",
        }
    }
}

/// Who a name written into a decision, blessing or `ledgerops.dev/proposed-by` stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// A Kubernetes user (or ServiceAccount): the authorizer answers for them.
    Person(String),
    /// A Gitea user, whose write permission on the repository was checked when the comment came.
    Gitea(String),
    /// The ConfigRepo of that name, in the same namespace: its own authority decides.
    ConfigRepo(String),
    /// ledgerops itself (the autopilot, rule learning): it proposes, never decides.
    Controller(String),
}

/// Reads `name` as written by admission (a person's own user name) or by the controller.
pub fn actor(name: &str) -> Actor {
    let prefixed = |prefix: &str| name.strip_prefix(prefix).map(str::to_owned);
    if let Some(login) = prefixed("gitea:") {
        Actor::Gitea(login)
    } else if let Some(repo) = prefixed("configrepo:") {
        Actor::ConfigRepo(repo)
    } else if let Some(part) = prefixed("ledgerops:") {
        Actor::Controller(part)
    } else {
        Actor::Person(name.to_owned())
    }
}

/// The proposer an object's annotations name, if any.
pub fn proposer(annotations: Option<&BTreeMap<String, String>>) -> Option<&str> {
    annotations?
        .get(PROPOSED_BY)
        .map(String::as_str)
        .filter(|p| !p.trim().is_empty())
}

/// A question for the authorizer: may `user` use `power` on `resource` in the namespace?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub user: String,
    pub power: Power,
    pub resource: &'static str,
}

impl Question {
    /// What status says when the answer is no: who, which verb, which role grants it.
    pub fn refusal(&self, namespace: &str, what: &str) -> String {
        format!(
            "{what}: user {} does not hold the verb {} on {} in namespace {namespace} (the ClusterRole {} grants it). Nothing is written; bind {} to them, or have someone who holds it act.",
            self.user,
            self.power.verb(),
            self.resource,
            self.power.role(),
            self.power.role(),
        )
    }
}

/// What must hold before a person's decision is followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecisionCheck {
    /// Ask the authorizer this, then follow the decision if it says yes.
    Ask(Question),
    /// Decided in Gitea by a commenter whose write permission was checked then.
    Gitea,
    /// Refused, with the message status shows.
    Refused(String),
}

/// Whether the decision `by` on ApprovalRequest `request` may be followed: four eyes against
/// everyone who proposed it (the proposer the request recorded and the subject's current one,
/// who may have changed it since), then the `approve` verb.
pub fn decision(request: &str, by: &str, proposers: &[&str], four_eyes: bool) -> DecisionCheck {
    if four_eyes && let Some(p) = proposers.iter().find(|p| **p == by) {
        return DecisionCheck::Refused(format!(
            "{by} proposed the change that ApprovalRequest {request} asks about ({PROPOSED_BY}: {p}) and cannot also approve it (four eyes, spec.approval.fourEyes of the Budget). Nothing is written; another person holding approve must decide a new request: change the object to ask again."
        ));
    }
    match actor(by) {
        Actor::Person(user) => DecisionCheck::Ask(Question {
            user,
            power: Power::Approve,
            resource: "approvalrequests",
        }),
        Actor::Gitea(_) => DecisionCheck::Gitea,
        Actor::ConfigRepo(_) | Actor::Controller(_) => DecisionCheck::Refused(format!(
            "ApprovalRequest {request} was decided by {by}, which is not a person: only a person decides. Nothing is written."
        )),
    }
}

/// [`decision`] for `request`, whose subject is now proposed by `subject_proposer`: four eyes
/// hold when the Budget asks for them now (`four_eyes`) or did when the request was opened, and
/// count both its recorded proposer and the subject's current one.
pub fn decision_on(
    request: &ApprovalRequest,
    subject_proposer: Option<&str>,
    four_eyes: bool,
) -> DecisionCheck {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    let Some(decided) = &request.spec.decision else {
        return DecisionCheck::Refused(format!("ApprovalRequest {name} has no decision"));
    };
    let proposers: Vec<&str> = [Some(request.spec.proposed_by.as_str()), subject_proposer]
        .into_iter()
        .flatten()
        .filter(|p| !p.is_empty())
        .collect();
    decision(
        name,
        &decided.by,
        &proposers,
        four_eyes || request.spec.four_eyes,
    )
}

/// What must hold before a blessing lets a rule speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlessingCheck {
    /// Ask the authorizer this.
    Ask(Question),
    /// Blessed by merging into the ConfigRepo of this name: it must govern.
    ConfigRepo(String),
    /// Not a blessing that counts, and why.
    Refused(String),
}

/// Whether the blessing `by` of rule `rule`, written by `proposer`, counts.
pub fn blessing(rule: &str, by: &str, proposer: Option<&str>, four_eyes: bool) -> BlessingCheck {
    // A merge blesses what the repository declares: the person who merged is Gitea's to know,
    // and its branch protection is where that four eyes lives.
    let person = matches!(actor(by), Actor::Person(_));
    if four_eyes && person && proposer == Some(by) {
        return BlessingCheck::Refused(format!(
            "{by} wrote CategorizationRule {rule} ({PROPOSED_BY}) and cannot also bless it (four eyes, spec.approval.fourEyes of the Budget): another person holding bless must bless it"
        ));
    }
    match actor(by) {
        Actor::Person(user) => BlessingCheck::Ask(Question {
            user,
            power: Power::Bless,
            resource: "categorizationrules",
        }),
        Actor::ConfigRepo(repo) => BlessingCheck::ConfigRepo(repo),
        Actor::Gitea(_) | Actor::Controller(_) => BlessingCheck::Refused(format!(
            "CategorizationRule {rule} carries a blessing by {by}, which only a person or a governing ConfigRepo gives"
        )),
    }
}

/// The user whose `govern` a ConfigRepo asking for `Govern` acts under, or why it cannot.
pub fn repo_governor(repo: &str, proposer: Option<&str>) -> Result<Question, String> {
    match proposer.map(|p| (p, actor(p))) {
        Some((_, Actor::Person(user))) => Ok(Question {
            user,
            power: Power::Govern,
            resource: "configrepos",
        }),
        Some((other, _)) => Err(format!(
            "ConfigRepo {repo} was last changed by {other}, not by a person: it acts with Propose authority until an owner applies it again"
        )),
        None => Err(format!(
            "ConfigRepo {repo} names nobody ({PROPOSED_BY} is missing): it acts with Propose authority until an owner applies it again"
        )),
    }
}

#[cfg(test)]
#[path = "powers_tests.rs"]
mod tests;
