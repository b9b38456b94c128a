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
            instance: std::env::var("POD_NAME").unwrap_or_else(|_| CONTROLLER.into()),
            recent: Arc::default(),
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
mod tests {
    use super::*;

    fn key(uid: &str, note: &str) -> Key {
        Key {
            uid: uid.into(),
            warning: false,
            reason: "Converged".into(),
            action: "Converge".into(),
            note: note.into(),
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_repeat_within_the_window_counts_on_the_same_event() {
        let mut recent = Recent::default();
        assert_eq!(recent.repeat(&key("a", "n"), at(0)), None);
        recent.remember(key("a", "n"), "a.1".into(), at(0));
        let second = recent.repeat(&key("a", "n"), at(60)).unwrap();
        assert_eq!((second.name.as_str(), second.count), ("a.1", 2));
        // The window runs from the last repeat.
        let third = recent.repeat(&key("a", "n"), at(60 + 300)).unwrap();
        assert_eq!(third.count, 3);
        // Another note, or another object, is another Event.
        assert_eq!(recent.repeat(&key("a", "other"), at(361)), None);
        assert_eq!(recent.repeat(&key("b", "n"), at(361)), None);
    }

    #[test]
    fn after_the_window_a_repeat_is_a_new_event() {
        let mut recent = Recent::default();
        recent.remember(key("a", "n"), "a.1".into(), at(0));
        assert_eq!(recent.repeat(&key("a", "n"), at(360)), None);
        assert!(recent.0.is_empty(), "the expired one is forgotten");
    }

    #[test]
    fn at_most_remembered_events_are_kept() {
        let mut recent = Recent::default();
        for i in 0..REMEMBERED {
            recent.remember(key(&i.to_string(), "n"), format!("e{i}"), at(0));
        }
        // Full of expired Events: they go, the new one stays.
        recent.remember(key("late", "n"), "late".into(), at(400));
        assert_eq!(recent.0.len(), 1);
        // Full of recent ones: all go rather than a sweep on every publish.
        for i in 1..REMEMBERED {
            recent.remember(key(&i.to_string(), "n"), format!("e{i}"), at(401));
        }
        assert_eq!(recent.0.len(), REMEMBERED);
        recent.remember(key("next", "n"), "next".into(), at(402));
        assert_eq!(recent.0.len(), 1);
        assert!(recent.repeat(&key("next", "n"), at(403)).is_some());
    }
}
