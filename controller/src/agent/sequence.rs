//! The receive sequence and the record of retired jobs, kept in one ConfigMap and written only
//! under its resourceVersion, so that two processes never take the same number.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;

use super::error::{StoreError, is_status};
use crate::logic::job::retired::{self, Retired};

/// The ConfigMap holding the next receive sequence.
pub const SEQUENCE_CONFIGMAP: &str = "ledgerops-agentjob-sequence";
const SEQUENCE_KEY: &str = "next";

/// The sequence ConfigMap of one namespace.
pub(super) struct Sequence {
    api: Api<ConfigMap>,
    /// The ConfigMap as this process last wrote it. Allocations write on top of it directly;
    /// when anyone else wrote since, its resourceVersion no longer matches (409) and the
    /// ConfigMap is read again. Held across the allocation: this process allocates one at a time.
    last_written: tokio::sync::Mutex<Option<ConfigMap>>,
}

impl Sequence {
    pub(super) fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            last_written: Default::default(),
        }
    }

    /// Takes consecutive receive sequences, as many as `count_of` asks given the record of
    /// retired jobs, and returns the first with that record. The record is the one of the very
    /// version the counter's update was written on (a stale copy is refused, 409): a job deleted
    /// by retention before this moment is in it. The record only grows, so when nothing is to
    /// be taken an older copy is as good.
    pub(super) async fn take(
        &self,
        count_of: impl Fn(&Retired) -> i64,
    ) -> Result<(i64, Retired), StoreError> {
        let mut last = self.last_written.lock().await;
        for _ in 0..1000 {
            let known = match last.take() {
                Some(cm) => Some(cm),
                None => self.api.get_opt(SEQUENCE_CONFIGMAP).await?,
            };
            let Some(mut cm) = known else {
                let count = count_of(&Retired::default());
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(SEQUENCE_CONFIGMAP.into()),
                        ..ObjectMeta::default()
                    },
                    data: Some(BTreeMap::from([(
                        SEQUENCE_KEY.into(),
                        (1 + count).to_string(),
                    )])),
                    ..ConfigMap::default()
                };
                match self.api.create(&PostParams::default(), &cm).await {
                    Ok(written) => {
                        *last = Some(written);
                        return Ok((1, Retired::default()));
                    }
                    Err(e) if is_status(&e, 409) => continue,
                    Err(e) => return Err(e.into()),
                }
            };
            let data = cm.data.get_or_insert_with(BTreeMap::new);
            let record = Retired::parse(data.get(retired::KEY).map(String::as_str))
                .map_err(StoreError::BadRetired)?;
            let raw = data
                .get(SEQUENCE_KEY)
                .cloned()
                .unwrap_or_else(|| "1".into());
            let next: i64 = raw.parse().map_err(|_| StoreError::BadSequence(raw))?;
            let count = count_of(&record);
            if count == 0 {
                *last = Some(cm);
                return Ok((next, record));
            }
            data.insert(SEQUENCE_KEY.into(), (next + count).to_string());
            // `cm` carries the resourceVersion it was read at: a concurrent update makes this 409.
            match self
                .api
                .replace(SEQUENCE_CONFIGMAP, &PostParams::default(), &cm)
                .await
            {
                Ok(written) => {
                    *last = Some(written);
                    return Ok((next, record));
                }
                Err(e) if is_status(&e, 409) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Contention(1000))
    }

    /// Records a retired job's comment, so that a redelivery of it is still a duplicate.
    pub(super) async fn record_retired(
        &self,
        repository: &str,
        comment: i64,
    ) -> Result<(), StoreError> {
        for _ in 0..100 {
            // A job exists only after a sequence was taken, so the ConfigMap exists too.
            let mut cm = self.api.get(SEQUENCE_CONFIGMAP).await?;
            let data = cm.data.get_or_insert_with(BTreeMap::new);
            let mut record = Retired::parse(data.get(retired::KEY).map(String::as_str))
                .map_err(StoreError::BadRetired)?;
            if !record.record(repository, comment) {
                return Ok(());
            }
            data.insert(retired::KEY.into(), record.render());
            match self
                .api
                .replace(SEQUENCE_CONFIGMAP, &PostParams::default(), &cm)
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) if is_status(&e, 409) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Contention(100))
    }
}

#[cfg(test)]
#[path = "sequence_tests.rs"]
mod tests;
