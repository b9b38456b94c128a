//! Why an operation of the `/agent` runtime failed: a store operation (the AgentJobs, and the
//! receive sequence's ConfigMap, whose writers share it) and a reconcile of a job. Apart from
//! both, so that the store, the sequence, the reconciler and the cleanup depend on it rather
//! than on each other.

use crate::gitea::GiteaError;
use crate::logic::job::state::InvalidTransition;

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Invalid(#[from] InvalidTransition),
    #[error("the sequence ConfigMap holds `{0}`, not a number")]
    BadSequence(String),
    #[error("the sequence ConfigMap: {0}")]
    BadRetired(String),
    #[error("gave up after {0} conflicting writes")]
    Contention(u32),
    #[error("the command was not stored ({0}); Gitea may deliver it again")]
    NotStored(String),
}

/// A reconcile that could not finish; retried with capped backoff, never abandoned.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Gitea(#[from] GiteaError),
}

impl AgentError {
    /// The `reason` label of the reconcile error metric.
    pub fn reason(&self) -> &'static str {
        match self {
            AgentError::Store(_) => "KubeApi",
            AgentError::Gitea(_) => "Gitea",
        }
    }
}

/// Whether `e` is the API server's answer with status `code`.
pub(super) fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}
