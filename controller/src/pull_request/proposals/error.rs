//! Why a rule could not be proposed.

use crate::gitea::GiteaError;

/// A proposal that could not be made; retried with backoff (a foreign branch: at the next
/// resync or push).
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    #[error(transparent)]
    Gitea(#[from] GiteaError),
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("writing rule {rule} as YAML: {source}")]
    Yaml {
        rule: String,
        source: serde_saphyr::SerializeError,
    },
    #[error(
        "branch {branch} of {repository} holds something other than rule {rule}'s file alone (found: {found}): ledgerops does not propose what it did not write; delete the branch (closing its pull request) to let it propose the rule again"
    )]
    Foreign {
        rule: String,
        repository: String,
        branch: String,
        found: String,
    },
}
