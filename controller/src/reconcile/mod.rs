//! Reconcilers, one per kind: read, decide with the logic, act through the adapters, write status.

pub mod approval;
pub mod approval_gate;
pub mod budget;
pub mod plan;
pub mod transaction;

use std::sync::Arc;
use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::reflector::Store;

use crate::api::budget::Budget;
use crate::k8s::events::Events;
use crate::logic::duration;
use crate::metrics::Metrics;
use crate::mirror_sync::MirrorKey;
use crate::registry::Registry;
use crate::writer::{Destination, Writer};
use crate::ynab::client::YnabClient;

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

impl Context {
    /// Where the Budget's writes go, with the token its last sync used; `None` before a sync.
    pub fn destination(&self, namespace: &str, budget: &Budget) -> Option<Destination> {
        let spec = &budget.spec;
        let token = self.registry.token(namespace, &budget.name_any())?;
        let window = self
            .registry
            .window(&spec.api_url, &token, spec.requests_per_hour);
        let client = YnabClient::new(&spec.api_url, token, window, self.metrics.clone()).ok()?;
        Some(Destination {
            client,
            plan_id: spec.plan_id.clone(),
            mirror: self.registry.mirror(namespace, &budget.name_any()),
            closed_through: spec.closed_through.clone(),
            window: duration::parse(&spec.writes.batch_window.0)
                .unwrap_or(Duration::from_millis(200)),
            max_batch: spec.writes.max_batch_size as usize,
            key: MirrorKey {
                namespace: namespace.to_owned(),
                budget: budget.name_any(),
                registry: self.registry.clone(),
            },
        })
    }
}

/// A reconcile that could not finish; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Journal(#[from] crate::k8s::journal::JournalError),
}

impl Error {
    /// A short label for the metrics.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Kube(_) => "KubeApi",
            Error::Journal(_) => "Journal",
        }
    }
}
