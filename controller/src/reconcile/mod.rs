//! Reconcilers, one per kind: read, decide with the logic, act through the adapters, write status.

pub mod approval_gate;
pub mod budget;
pub mod transaction;

use std::sync::Arc;

use kube::runtime::reflector::Store;

use crate::api::budget::Budget;
use crate::k8s::events::Events;
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::writer::Writer;

/// What every reconciler shares.
pub struct Context {
    pub client: kube::Client,
    pub metrics: Arc<Metrics>,
    pub registry: Arc<Registry>,
    pub events: Events,
    pub writer: Arc<Writer>,
    /// Every Budget, kept current by a watch: reconcilers read them without asking the API.
    pub budgets: Store<Budget>,
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
