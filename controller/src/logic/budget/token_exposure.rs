//! Who besides the controller and a Budget's owners may read the Secret that holds its token.
//! Anyone who may read Secrets in a namespace (Kubernetes' built-in `edit` role does) can take
//! the token and write to YNAB around every approval. The adapter lists the subjects bound to
//! roles there and asks the authorizer about each; this decides who is a reader who should not
//! be, and what the Budget's `TokenProtected` condition says. It warns; it never stops a sync.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::logic::status::announce::Announcement;
use crate::logic::status::conditions::{self, Observed, Status};

/// The condition type: True when only the controller and the owners read the token's Secret.
pub const TOKEN_PROTECTED: &str = "TokenProtected";
/// The reason when someone else may read it.
pub const READABLE_BY_OTHERS: &str = "ReadableByOthers";
/// How many offending subjects a message names.
const NAMED: usize = 5;

/// Someone a RoleBinding or ClusterRoleBinding grants to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

impl Subject {
    /// A binding's subject (`kind`, `name`, `namespace`) in a binding of namespace `binding_ns`
    /// (`None` for a ClusterRoleBinding); `None` for a kind RBAC does not know.
    pub fn of_binding(
        kind: &str,
        name: &str,
        namespace: Option<&str>,
        binding_ns: Option<&str>,
    ) -> Option<Subject> {
        match kind {
            "User" => Some(Subject::User(name.to_owned())),
            "Group" => Some(Subject::Group(name.to_owned())),
            // RBAC reads a ServiceAccount without a namespace as one of the binding's.
            "ServiceAccount" => namespace.or(binding_ns).map(|ns| Subject::ServiceAccount {
                namespace: ns.to_owned(),
                name: name.to_owned(),
            }),
            _ => None,
        }
    }

    /// The user name and groups to ask the authorizer about, as the API server would
    /// authenticate this subject (a group alone for a Group).
    pub fn identity(&self) -> (Option<String>, Vec<String>) {
        const AUTHENTICATED: &str = "system:authenticated";
        match self {
            Subject::User(name) => (Some(name.clone()), vec![AUTHENTICATED.into()]),
            Subject::Group(name) => (None, vec![name.clone()]),
            Subject::ServiceAccount { namespace, name } => (
                Some(format!("system:serviceaccount:{namespace}:{name}")),
                vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{namespace}"),
                    AUTHENTICATED.into(),
                ],
            ),
        }
    }

    /// The Kubernetes component itself (a `system:` user such as the controller manager, or a
    /// ServiceAccount of kube-system): whoever controls these controls the cluster.
    fn is_cluster_component(&self) -> bool {
        match self {
            Subject::User(name) => name.strip_prefix("system:serviceaccount:").map_or_else(
                || name.starts_with("system:"),
                |sa| sa.starts_with("kube-system:"),
            ),
            Subject::ServiceAccount { namespace, .. } => namespace == "kube-system",
            Subject::Group(_) => false,
        }
    }
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::User(name) => write!(f, "User {name}"),
            Subject::Group(name) => write!(f, "Group {name}"),
            Subject::ServiceAccount { namespace, name } => {
                write!(f, "ServiceAccount {namespace}/{name}")
            }
        }
    }
}

/// The subjects worth asking about, each once, in order: neither the controller (user name
/// `controller`) nor the cluster's own components.
pub fn to_ask(subjects: impl IntoIterator<Item = Subject>, controller: &str) -> Vec<Subject> {
    let unique: BTreeSet<Subject> = subjects
        .into_iter()
        .filter(|s| !s.is_cluster_component())
        .filter(|s| s.identity().0.as_deref() != Some(controller))
        .collect();
    unique.into_iter().collect()
}

/// What the authorizer answered about one subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub subject: Subject,
    /// May get Secrets in the token's namespace.
    pub reads: bool,
    /// Holds `govern` on Budgets in the Budget's namespace: an owner.
    pub governs: bool,
}

/// Where the token lies, for the messages.
pub struct Place<'a> {
    pub secret: &'a str,
    pub secret_namespace: &'a str,
    pub budget_namespace: &'a str,
}

/// The `TokenProtected` condition for `answers`: False naming who may read the Secret without
/// being an owner, True otherwise (saying how many owners may read it).
pub fn verdict(place: &Place<'_>, answers: &[Answer]) -> Observed {
    let Place {
        secret,
        secret_namespace: sns,
        budget_namespace: bns,
    } = place;
    let others: Vec<&Subject> = answers
        .iter()
        .filter(|a| a.reads && !a.governs)
        .map(|a| &a.subject)
        .collect();
    if others.is_empty() {
        let owners = answers.iter().filter(|a| a.reads && a.governs).count();
        return Observed::new(
            TOKEN_PROTECTED,
            true,
            "OnlyOwnersRead",
            format!(
                "Secret {secret} in namespace {sns} may be read only by the controller, {owners} subject(s) bound there or cluster-wide who govern Budgets in namespace {bns} (owners and cluster administrators), and Kubernetes' own components"
            ),
        );
    }
    let mut named: Vec<String> = others.iter().take(NAMED).map(|s| s.to_string()).collect();
    if others.len() > NAMED {
        named.push(format!("and {} more", others.len() - NAMED));
    }
    let move_it = if sns == bns {
        "Move the Secret to a namespace only the controller and the owners can read (e.g. ledgerops-tokens, one of the controller's --token-namespace)".to_owned()
    } else {
        format!(
            "Take their access to Secrets in {sns} away, or move the Secret to a namespace only the controller and the owners can read (e.g. ledgerops-tokens, one of the controller's --token-namespace)"
        )
    };
    Observed::new(
        TOKEN_PROTECTED,
        false,
        READABLE_BY_OTHERS,
        format!(
            "Secret {secret} in namespace {sns} holds this Budget's YNAB token and may be read by {} who do not govern Budgets in namespace {bns}: {}; any of them can take the token and write to YNAB without asking. {move_it}: create it there labelled ledgerops.dev/ynab-token=true and annotated ledgerops.dev/allowed-namespaces={bns}, set spec.tokenSecretRef.namespace, and delete the copy here",
            others.len(),
            named.join(", ")
        ),
    )
}

/// The condition when the authorizer could not be asked: what failed and what to grant.
pub fn unknown(place: &Place<'_>, error: &str) -> Observed {
    Observed::new(
        TOKEN_PROTECTED,
        Status::Unknown,
        "CheckFailed",
        format!(
            "could not tell who may read Secret {} in namespace {}: {error}; the controller needs get and list on rolebindings and clusterrolebindings, and create on subjectaccessreviews",
            place.secret, place.secret_namespace
        ),
    )
}

/// A Warning Event when the token becomes readable by others, or by other others: `None` while
/// the condition says what it said.
pub fn announcement(previous: &[Condition], next: &Observed) -> Option<Announcement> {
    if next.status != Status::False {
        return None;
    }
    let said = conditions::get(previous, TOKEN_PROTECTED)
        .is_some_and(|c| c.status == "False" && c.message == next.message);
    (!said).then(|| Announcement {
        warning: true,
        reason: next.reason.to_string(),
        note: next.message.clone(),
    })
}

#[cfg(test)]
#[path = "token_exposure_tests.rs"]
mod tests;
