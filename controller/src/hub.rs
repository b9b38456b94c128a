//! Posting Events to a notification hub (`ledgerops run --events-address URL`), such as Flux's
//! notification-controller, which routes them to chat, webhooks or Alertmanager by its Alerts.
//!
//! A reconcile never waits on the hub: an Event goes into a bounded queue (a full queue drops
//! it, counted), and one worker posts them in order, retrying a hub that is down with jittered
//! backoff. Events are best effort here as in Kubernetes: what is dropped is counted in
//! `ledgerops_hub_events_dropped_total`, and the object's status and Kubernetes Event keep it.

use std::sync::Arc;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::mpsc;

use crate::logic::status::hub::{self, Delivery, HubEvent};
use crate::metrics::{HubDropLabels, Metrics};

/// Events waiting to be posted; a burst beyond it is dropped rather than held in memory.
const QUEUE: usize = 1024;
/// One post's limit: a hub that hangs is a hub that is down.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Why the hub cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error(
        "--events-address {0:?} is not an http(s) URL: give the hub's event endpoint, e.g. http://notification-controller.flux-system.svc.cluster.local./"
    )]
    Address(String),
    #[error("cannot build the HTTP client for the hub: {0}")]
    Client(#[source] reqwest::Error),
}

/// The queue to the hub. Cloning shares it.
#[derive(Clone)]
pub struct Hub {
    queue: mpsc::Sender<HubEvent>,
    dropped: Family<HubDropLabels, Counter>,
    instance: Arc<str>,
}

impl Hub {
    /// Starts the worker posting to `address`; `instance` names this replica in every Event.
    pub fn start(address: &str, instance: &str, metrics: &Metrics) -> Result<Self, HubError> {
        let url = url::Url::parse(address)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
            .ok_or_else(|| HubError::Address(address.to_owned()))?;
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .user_agent(concat!("ledgerops/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(HubError::Client)?;
        let (queue, waiting) = mpsc::channel(QUEUE);
        let worker = Worker {
            client,
            url,
            delivered: metrics.hub_events_delivered.clone(),
            dropped: metrics.hub_events_dropped.clone(),
        };
        tokio::spawn(worker.run(waiting));
        Ok(Self {
            queue,
            dropped: metrics.hub_events_dropped.clone(),
            instance: instance.into(),
        })
    }

    /// This replica's name, as the Events it posts give it.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Queues `event` for the hub without waiting; a full queue drops it.
    pub fn post(&self, event: HubEvent) {
        if let Err(e) = self.queue.try_send(event) {
            let reason = match e {
                mpsc::error::TrySendError::Full(_) => "queue_full",
                mpsc::error::TrySendError::Closed(_) => "stopped",
            };
            self.dropped.get_or_create(&HubDropLabels { reason }).inc();
            tracing::warn!(reason, "an Event was not posted to the hub");
        }
    }
}

struct Worker {
    client: reqwest::Client,
    url: url::Url,
    delivered: Counter,
    dropped: Family<HubDropLabels, Counter>,
}

impl Worker {
    async fn run(self, mut waiting: mpsc::Receiver<HubEvent>) {
        while let Some(event) = waiting.recv().await {
            self.deliver(&event).await;
        }
    }

    /// Posts `event` until the hub takes it, refuses it, or [`hub::ATTEMPTS`] posts failed.
    async fn deliver(&self, event: &HubEvent) {
        for attempt in 1..=hub::ATTEMPTS {
            let answer = self.client.post(self.url.clone()).json(event).send().await;
            let status = answer.as_ref().ok().map(|r| r.status().as_u16());
            match hub::delivery(status) {
                Delivery::Delivered => {
                    self.delivered.inc();
                    return;
                }
                Delivery::Refused => {
                    tracing::warn!(status, reason = %event.reason, "the hub refused an Event; it is dropped");
                    self.drop_one("refused");
                    return;
                }
                Delivery::Retry if attempt == hub::ATTEMPTS => {
                    tracing::warn!(attempts = attempt, reason = %event.reason, "the hub did not take an Event; it is dropped");
                    self.drop_one("undeliverable");
                    return;
                }
                Delivery::Retry => {
                    let draw = uuid::Uuid::new_v4().as_u64_pair().0;
                    tokio::time::sleep(hub::retry_delay(attempt, draw)).await;
                }
            }
        }
    }

    fn drop_one(&self, reason: &'static str) {
        self.dropped.get_or_create(&HubDropLabels { reason }).inc();
    }
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
