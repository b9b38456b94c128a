//! The record of every token's YNAB requests in the last hour, by minute, in one ConfigMap of
//! the controller's namespace. Each request is recorded before it goes out, so a process that
//! starts later (a restart, a new leader) counts what the one before it sent. Admission lets
//! only the controller write it (see `api::admission::configmaps`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::PostParams;

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::logic::runtime::request_record::{self, RecordStore};
use crate::logic::runtime::request_window::Minutes;

/// The ConfigMap holding the record.
pub use crate::api::admission::configmaps::REQUESTS_CONFIGMAP as RECORD_CONFIGMAP;
/// Writes that lost to another process's write in a row before giving up.
const ATTEMPTS: usize = 20;

/// Why the record could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("ConfigMap {namespace}/{RECORD_CONFIGMAP}: {source}")]
    Kube {
        namespace: String,
        source: kube::Error,
    },
    #[error(
        "ConfigMap {namespace}/{RECORD_CONFIGMAP} key {key} is not a record of requests ({reason}): delete the key (ledgerops then counts from its own requests)"
    )]
    Corrupt {
        namespace: String,
        key: String,
        reason: String,
    },
    #[error(
        "ConfigMap {namespace}/{RECORD_CONFIGMAP} changed under every write of {ATTEMPTS}: another process writes it as fast"
    )]
    Contended { namespace: String },
}

/// The record in one namespace.
#[derive(Clone)]
pub struct RequestRecords {
    api: Api<ConfigMap>,
    namespace: String,
}

impl RequestRecords {
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
        }
    }

    /// What the record holds under `key` (one token and URL).
    pub async fn load(&self, key: &str) -> Result<Minutes, RecordError> {
        let found = self
            .api
            .get_opt(RECORD_CONFIGMAP)
            .await
            .map_err(|e| self.kube(e))?;
        match found {
            Some(cm) => self.minutes(&cm, key),
            None => Ok(Minutes::new()),
        }
    }

    /// Adds `ours` (the window of `key` at `now`) to the record: every minute keeps the larger
    /// count, so writes of several processes, in any order, never lower it.
    pub async fn save(&self, key: &str, ours: &Minutes, now: Timestamp) -> Result<(), RecordError> {
        for _ in 0..ATTEMPTS {
            let found = self
                .api
                .get_opt(RECORD_CONFIGMAP)
                .await
                .map_err(|e| self.kube(e))?;
            let written = match found {
                Some(mut cm) => {
                    let minutes = request_record::merged(&self.minutes(&cm, key)?, ours, now);
                    let data = cm.data.get_or_insert_with(BTreeMap::new);
                    data.insert(key.to_owned(), request_record::render(&minutes));
                    // Tokens nobody used for an hour leave the record.
                    data.retain(|_, text| {
                        request_record::parse(text)
                            .map(|m| !request_record::merged(&m, &Minutes::new(), now).is_empty())
                            .unwrap_or(true)
                    });
                    let name = RECORD_CONFIGMAP;
                    self.api.replace(name, &PostParams::default(), &cm).await
                }
                None => {
                    let minutes = request_record::merged(&Minutes::new(), ours, now);
                    let cm = ConfigMap {
                        metadata: ObjectMeta {
                            name: Some(RECORD_CONFIGMAP.into()),
                            ..ObjectMeta::default()
                        },
                        data: Some(BTreeMap::from([(
                            key.to_owned(),
                            request_record::render(&minutes),
                        )])),
                        ..ConfigMap::default()
                    };
                    self.api.create(&PostParams::default(), &cm).await
                }
            };
            match written {
                Ok(_) => return Ok(()),
                // Another process wrote (or made it) first: merge with what it wrote.
                Err(e) if super::is_conflict(&e) => continue,
                Err(e) => return Err(self.kube(e)),
            }
        }
        Err(RecordError::Contended {
            namespace: self.namespace.clone(),
        })
    }

    fn minutes(&self, cm: &ConfigMap, key: &str) -> Result<Minutes, RecordError> {
        let Some(text) = cm.data.as_ref().and_then(|d| d.get(key)) else {
            return Ok(Minutes::new());
        };
        request_record::parse(text).map_err(|reason| RecordError::Corrupt {
            namespace: self.namespace.clone(),
            key: key.to_owned(),
            reason,
        })
    }

    fn kube(&self, source: kube::Error) -> RecordError {
        RecordError::Kube {
            namespace: self.namespace.clone(),
            source,
        }
    }
}

impl RecordStore for RequestRecords {
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Minutes, String>> {
        RequestRecords::load(self, key)
            .map(|r| r.map_err(|e| e.to_string()))
            .boxed()
    }

    fn save<'a>(
        &'a self,
        key: &'a str,
        ours: &'a Minutes,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<(), String>> {
        RequestRecords::save(self, key, ours, now)
            .map(|r| r.map_err(|e| e.to_string()))
            .boxed()
    }
}
