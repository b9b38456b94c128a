//! Publishing Kubernetes Events (events.k8s.io/v1) about ledgerops resources.
//!
//! Not kube's `Recorder`: it keeps every Event it published for six minutes and sweeps that
//! whole cache on every publish, so 10,000 Transactions converging at once cost a full copy of
//! 10,000 Events and a quadratic sweep. Here the same repeat counting (a repeat within six
//! minutes counts on the first Event's series) remembers at most [`REMEMBERED`] Events, and of
//! each only its name and count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

/// The Events remembered to count repeats; beyond it, a repeat starts a new Event.
const REMEMBERED: usize = 512;
/// A repeat within this long of the last one counts on the same Event (as kube's recorder).
const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);
const CONTROLLER: &str = "ledgerops";

/// What makes two Events repeats of one another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    uid: String,
    warning: bool,
    reason: String,
    action: String,
    note: String,
}

/// An Event published lately: enough to count a repeat on it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Published {
    name: String,
    count: i32,
    last: Timestamp,
}

/// The Events published lately, at most [`REMEMBERED`] of them.
#[derive(Default)]
struct Recent(HashMap<Key, Published>);

impl Recent {
    /// The Event `key` repeats, its count moved on, if one was published within the window.
    fn repeat(&mut self, key: &Key, now: Timestamp) -> Option<Published> {
        let seen = self.0.get_mut(key)?;
        if seen.last + SERIES_WINDOW <= now {
            self.0.remove(key);
            return None;
        }
        seen.count += 1;
        seen.last = now;
        Some(seen.clone())
    }

    /// Remembers a new Event. When full, the expired ones go; still full, all of them do,
    /// rather than sweeping on every publish.
    fn remember(&mut self, key: Key, name: String, now: Timestamp) {
        if self.0.len() >= REMEMBERED {
            self.0.retain(|_, p| p.last + SERIES_WINDOW > now);
            if self.0.len() >= REMEMBERED {
                self.0.clear();
            }
        }
        let first = Published {
            name,
            count: 1,
            last: now,
        };
        self.0.insert(key, first);
    }
}

/// Who reports: this replica's pod name (`POD_NAME`), else `ledgerops`.
pub fn instance() -> String {
    std::env::var("POD_NAME").unwrap_or_else(|_| CONTROLLER.into())
}

/// Publishes Events as the `ledgerops` controller.
#[derive(Clone)]
pub struct Events {
    client: kube::Client,
    instance: String,
    recent: Arc<Mutex<Recent>>,
}

impl Events {
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            instance: instance(),
            recent: Arc::default(),
        }
    }

    /// Publishes one Event on `object`. A failure is logged, never fatal: Events are best effort.
    /// Returns whether it is news: `false` for a repeat counted on an Event published lately.
    pub async fn publish<K: Resource<DynamicType = ()>>(
        &self,
        object: &K,
        warning: bool,
        reason: &str,
        action: &str,
        note: String,
    ) -> bool {
        let key = Key {
            uid: object.meta().uid.clone().unwrap_or_default(),
            warning,
            reason: reason.into(),
            action: action.into(),
            note,
        };
        let now = Timestamp::now();
        let namespace = object
            .meta()
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let repeat = self.recent.lock().expect("events lock").repeat(&key, now);
        let news = repeat.is_none();
        let sent = match repeat {
            Some(seen) => {
                let series = json!({"series": {
                    "count": seen.count, "lastObservedTime": MicroTime(now)
                }});
                Box::pin(api.patch(&seen.name, &PatchParams::default(), &Patch::Merge(series)))
                    .await
                    .map(drop)
            }
            None => {
                let event = self.new_event(object, &key, now);
                let name = event.name_any();
                let created = Box::pin(api.create(&PostParams::default(), &event)).await;
                if created.is_ok() {
                    self.recent
                        .lock()
                        .expect("events lock")
                        .remember(key, name, now);
                }
                created.map(drop)
            }
        };
        if let Err(e) = sent {
            tracing::warn!(reason, error = %e, "could not publish an Event");
        }
        news
    }

    fn new_event<K: Resource<DynamicType = ()>>(
        &self,
        object: &K,
        key: &Key,
        now: Timestamp,
    ) -> Event {
        let regarding = object.object_ref(&());
        let name = regarding.name.clone().unwrap_or_else(|| CONTROLLER.into());
        Event {
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                ..ObjectMeta::default()
            },
            action: Some(key.action.clone()),
            reason: Some(key.reason.clone()),
            note: Some(key.note.clone()),
            type_: Some(if key.warning { "Warning" } else { "Normal" }.into()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding),
            reporting_controller: Some(CONTROLLER.into()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        }
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
