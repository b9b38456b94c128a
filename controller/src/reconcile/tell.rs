//! Telling people what happened: every Event a reconciler publishes goes to Kubernetes and,
//! when `--events-address` names a notification hub, to the hub too. A repeat that Kubernetes
//! counts on an Event published lately is not news, so the hub is not told it again.

use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::hub::Hub;
use crate::k8s::events::Events;
use crate::logic::status::announce::Announcement;
use crate::logic::status::hub::{self, Involved, Published};

/// Where a reconciler's Events go.
#[derive(Clone)]
pub struct Tell {
    events: Events,
    hub: Option<Hub>,
}

impl Tell {
    pub fn new(events: Events, hub: Option<Hub>) -> Self {
        Self { events, hub }
    }

    /// Publishes one Event on `object` (best effort, never waiting on the hub).
    pub async fn publish<K>(
        &self,
        object: &K,
        warning: bool,
        reason: &str,
        action: &str,
        note: String,
    ) where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let said = Announcement {
            warning,
            reason: reason.to_owned(),
            note,
        };
        self.tell(object, None, said, action).await;
    }

    /// Publishes `said` about `object` whose status was just written as `status`: the hub is
    /// told the request the new status names, not the one of the copy read before.
    pub async fn publish_after<K, S>(
        &self,
        object: &K,
        status: &S,
        said: Announcement,
        action: &str,
    ) where
        K: Resource<DynamicType = ()> + Serialize,
        S: Serialize,
    {
        let status = self
            .hub
            .as_ref()
            .and_then(|_| serde_json::to_value(status).ok());
        self.tell(object, status, said, action).await;
    }

    async fn tell<K>(&self, object: &K, status: Option<Value>, said: Announcement, action: &str)
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let Announcement {
            warning,
            reason,
            note,
        } = said;
        let reason = reason.as_str();
        let Some(hub) = &self.hub else {
            self.events
                .publish(object, warning, reason, action, note)
                .await;
            return;
        };
        let news = self
            .events
            .publish(object, warning, reason, action, note.clone())
            .await;
        if !news {
            return;
        }
        let r = object.object_ref(&());
        let involved = Involved {
            api_version: r.api_version.unwrap_or_default(),
            kind: r.kind.unwrap_or_default(),
            namespace: r.namespace.unwrap_or_default(),
            name: r.name.unwrap_or_default(),
            uid: r.uid.unwrap_or_default(),
            resource_version: r.resource_version.unwrap_or_default(),
        };
        let mut value = serde_json::to_value(object).unwrap_or_default();
        if let (Some(status), Some(fields)) = (status, value.as_object_mut()) {
            fields.insert("status".into(), status);
        }
        let published = Published {
            involved,
            warning,
            reason,
            note: &note,
            object: &value,
            instance: hub.instance(),
        };
        hub.post(hub::event(published, Timestamp::now()));
    }
}
