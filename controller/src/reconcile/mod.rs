//! Reconcilers, one per kind: read, decide with the logic, act through the adapters, write status.

pub mod budget;

use std::sync::Arc;

use crate::k8s::events::Events;
use crate::metrics::Metrics;
use crate::registry::Registry;

/// What every reconciler shares.
pub struct Context {
    pub client: kube::Client,
    pub metrics: Arc<Metrics>,
    pub registry: Arc<Registry>,
    pub events: Events,
}

/// A reconcile that could not finish; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

impl Error {
    /// A short label for the metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Kube(_) => "KubeApi",
        }
    }
}
