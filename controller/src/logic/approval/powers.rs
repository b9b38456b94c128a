//! Who holds which power, decided without trusting what a proposer wrote: the lineage an
//! object names (`ledgerops.dev/proposed-by`) lists the senders who shaped it, admission sees
//! to that.
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

/// A question for the authorizer: may `user` (in `groups`, where admission vouched for them)
/// use `power` on `resource` in the namespace?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub user: String,
    pub groups: Vec<String>,
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
        ) + if self.groups.is_empty() && self.power == Power::Approve {
            " Roles bound to a group count only when the decision records the decider's groups (spec.decision.groups; kubectl ledgerops approve records them)."
        } else {
            ""
        }
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

/// Whether the decision `by` on ApprovalRequest `request` may be followed, for a change whose
/// gathered lineage is `lineage` (see `lineage::gather`). A Gitea login counts as the
/// Kubernetes user `gitea_users` maps it to; with four eyes an unmapped login decides nothing,
/// since nobody could tell whether it shaped the change. Then four eyes against the lineage,
/// then the `approve` verb.
pub fn decision(
    request: &str,
    by: &str,
    gitea_users: &BTreeMap<String, String>,
    lineage: &[String],
    four_eyes: bool,
) -> DecisionCheck {
    let user = match actor(by) {
        Actor::Person(user) => user,
        Actor::Gitea(login) => match gitea_users.get(&login) {
            Some(user) => user.clone(),
            None if four_eyes => {
                return DecisionCheck::Refused(format!(
                    "ApprovalRequest {request} was decided in Gitea by {login}, a login the Budget maps to no Kubernetes user (spec.approval.giteaUsers), so four eyes cannot be checked and nothing is written. An owner maps it (giteaUsers: [{{login: {login}, user: <their Kubernetes user>}}]); then decide again in Gitea, or with kubectl ledgerops approve."
                ));
            }
            None => return DecisionCheck::Gitea,
        },
        Actor::ConfigRepo(_) | Actor::Controller(_) => {
            return DecisionCheck::Refused(format!(
                "ApprovalRequest {request} was decided by {by}, which is not a person: only a person decides. Nothing is written."
            ));
        }
    };
    if four_eyes && let Some(member) = lineage.iter().find(|m| **m == by || **m == user) {
        let who = if *member == by {
            by.to_owned()
        } else {
            format!("{by} (Kubernetes user {user})")
        };
        return DecisionCheck::Refused(format!(
            "{who} shaped the change that ApprovalRequest {request} asks about (its lineage: {}) and cannot also approve it (four eyes, spec.approval.fourEyes of the Budget). Nothing is written; another person holding approve, outside that lineage, must decide a new request: change the object to ask again.",
            lineage.join(", ")
        ));
    }
    DecisionCheck::Ask(Question {
        user,
        groups: Vec::new(),
        power: Power::Approve,
        resource: "approvalrequests",
    })
}

/// [`decision`] for `request`, whose subject's lineage is now `subject_lineage`: four eyes
/// hold when the Budget asks for them now (`four_eyes`) or did when the request was opened,
/// and count everyone the request recorded and everyone who shaped the subject since.
pub fn decision_on(
    request: &ApprovalRequest,
    subject_lineage: &[String],
    gitea_users: &BTreeMap<String, String>,
    four_eyes: bool,
) -> DecisionCheck {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    let Some(decided) = &request.spec.decision else {
        return DecisionCheck::Refused(format!("ApprovalRequest {name} has no decision"));
    };
    let mut lineage = request.spec.proposed_by.clone();
    for name in subject_lineage {
        if !lineage.contains(name) {
            lineage.push(name.clone());
        }
    }
    let check = decision(
        name,
        &decided.by,
        gitea_users,
        &lineage,
        four_eyes || request.spec.four_eyes,
    );
    // Admission took the recorded groups only as the sender's own, and only for a decision in
    // one's own name: a Gitea login's mapped user is asked by name alone.
    match check {
        DecisionCheck::Ask(q) if matches!(actor(&decided.by), Actor::Person(_)) => {
            DecisionCheck::Ask(Question {
                groups: decided.groups.clone(),
                ..q
            })
        }
        other => other,
    }
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

/// Whether the blessing `by` of rule `rule`, shaped by `lineage` (its authors, and for a
/// learned rule the people whose decisions taught it), counts.
pub fn blessing(rule: &str, by: &str, lineage: &[String], four_eyes: bool) -> BlessingCheck {
    // A merge blesses what the repository declares: the person who merged is Gitea's to know,
    // and its branch protection is where that four eyes lives.
    let person = matches!(actor(by), Actor::Person(_));
    if four_eyes && person && lineage.iter().any(|m| m == by) {
        return BlessingCheck::Refused(format!(
            "{by} shaped CategorizationRule {rule} (its lineage: {}) and cannot also bless it (four eyes, spec.approval.fourEyes of the Budget): another person holding bless must bless it",
            lineage.join(", ")
        ));
    }
    match actor(by) {
        Actor::Person(user) => BlessingCheck::Ask(Question {
            user,
            groups: Vec::new(),
            power: Power::Bless,
            resource: "categorizationrules",
        }),
        Actor::ConfigRepo(repo) => BlessingCheck::ConfigRepo(repo),
        Actor::Gitea(_) | Actor::Controller(_) => BlessingCheck::Refused(format!(
            "CategorizationRule {rule} carries a blessing by {by}, which only a person or a governing ConfigRepo gives"
        )),
    }
}

/// The users whose `govern` a ConfigRepo asking for `Govern` acts under (everyone who shaped
/// it: it has no more authority than the least of them), or why it cannot.
pub fn repo_governors(repo: &str, lineage: &[String]) -> Result<Vec<Question>, String> {
    if lineage.is_empty() {
        return Err(format!(
            "ConfigRepo {repo} names nobody ({PROPOSED_BY} is missing): it acts with Propose authority until an owner applies it again"
        ));
    }
    lineage
        .iter()
        .map(|name| match actor(name) {
            Actor::Person(user) => Ok(Question {
                user,
                groups: Vec::new(),
                power: Power::Govern,
                resource: "configrepos",
            }),
            _ => Err(format!(
                "ConfigRepo {repo} was changed by {name}, not by a person: it acts with Propose authority until an owner applies it again"
            )),
        })
        .collect()
}

#[cfg(test)]
#[path = "powers_tests.rs"]
mod tests;
