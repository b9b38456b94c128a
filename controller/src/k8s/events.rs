//! Publishing Kubernetes Events about ledgerops resources.

use kube::Resource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Publishes Events as the `ledgerops` controller.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    pub fn new(client: kube::Client) -> Self {
        let reporter = Reporter {
            controller: "ledgerops".into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client, reporter),
        }
    }

    /// Publishes one Event on `object`. A failure is logged, never fatal: Events are best effort.
    pub async fn publish<K: Resource<DynamicType = ()>>(
        &self,
        object: &K,
        warning: bool,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let event = Event {
            type_: if warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: reason.into(),
            note: Some(note),
            action: action.into(),
            secondary: None,
        };
        // Boxed: kube's publish is a large future, and every reconcile that awaits this would
        // otherwise carry its size for as long as it lives (10,000 of them wait on one batch).
        let reference = object.object_ref(&());
        if let Err(e) = Box::pin(self.recorder.publish(&event, &reference)).await {
            tracing::warn!(reason, error = %e, "could not publish an Event");
        }
    }
}
