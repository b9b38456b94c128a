//! How a command ended: what the executor records as the job's outcome.

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the comment body to show.
    Completed(String),
    /// A precondition failed (no such object, already decided …); the reason to show.
    Rejected(String),
    /// Something broke.
    Failed(String),
}

/// A Kubernetes call that failed, doing `what`.
pub fn kube_failed(what: &str, e: kube::Error) -> Outcome {
    Outcome::Failed(format!("{what}: {e}"))
}
