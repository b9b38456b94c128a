//! AgentJobs in the API server: receiving a command (one object per command, named by its
//! de-duplication key, with a durable receive sequence) and evolving a job's state through the
//! state machine under optimistic concurrency.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{DeleteParams, PostParams, Preconditions};

use crate::api::agent_job::{AgentJob, AgentJobSpec};
use crate::logic::job::retired::{self, Retired};
use crate::logic::job::state::{
    Effect, EventKind, InvalidTransition, JobEvent, JobState, from_persisted, next_state, to_status,
};
use crate::logic::job::webhook::Incoming;

/// The ConfigMap holding the next receive sequence.
pub const SEQUENCE_CONFIGMAP: &str = "ledgerops-agentjob-sequence";
const SEQUENCE_KEY: &str = "next";
/// Label on every AgentJob with its repository's comment key hash, for `kubectl get -l`.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// A store operation that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Invalid(#[from] InvalidTransition),
    #[error("the sequence ConfigMap holds `{0}`, not a number")]
    BadSequence(String),
    #[error("the sequence ConfigMap: {0}")]
    BadRetired(String),
    #[error("gave up after {0} conflicting writes")]
    Contention(u32),
}

/// What receiving a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A new AgentJob, with its sequence.
    New { name: String, sequence: i64 },
    /// The command was already received (same delivery, or same comment redelivered).
    Duplicate { name: String },
}

/// The outcome of one evolution.
#[derive(Debug, Clone)]
pub struct Evolved {
    pub state: JobState,
    pub effects: Vec<Effect>,
    /// False when the event was already applied or a no-op.
    pub applied: bool,
}

/// The AgentJobs of one namespace.
#[derive(Clone)]
pub struct JobStore {
    client: kube::Client,
    namespace: String,
    /// Serialises this process's allocations and creations, so that its own receivers do not
    /// make each other retry and create jobs in sequence order; the resourceVersion
    /// precondition still guards the counter against other writers.
    allocating: std::sync::Arc<tokio::sync::Mutex<()>>,
}

fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}

impl JobStore {
    pub fn new(client: kube::Client, namespace: impl Into<String>) -> Self {
        Self {
            client,
            namespace: namespace.into(),
            allocating: Default::default(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    pub fn api(&self) -> Api<AgentJob> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Persists a received command: nothing else. A command already stored, or whose job was
    /// deleted by retention, is a duplicate and allocates no sequence; a lost creation race
    /// allocates one that stays unused (sequences are increasing, not dense).
    pub async fn receive(
        &self,
        incoming: &Incoming,
        now: Timestamp,
    ) -> Result<Received, StoreError> {
        let api = self.api();
        let name = incoming.job_name();
        if api.get_opt(&name).await?.is_some() {
            return Ok(Received::Duplicate { name });
        }
        // Sequence and creation under one lock: this process creates its jobs in sequence
        // order, so the executor never sees job n+1 while job n is still being created.
        let _serial = self.allocating.lock().await;
        // Retention records a job here before deleting it: absent above means recorded here.
        if self
            .retired()
            .await?
            .covers(&incoming.repository, incoming.comment_id)
        {
            return Ok(Received::Duplicate { name });
        }
        let sequence = self.next_sequence().await?;
        let job = AgentJob {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: Some(BTreeMap::from([(MANAGED_BY.into(), "ledgerops".into())])),
                ..ObjectMeta::default()
            },
            spec: AgentJobSpec {
                delivery_id: incoming.delivery_id.clone(),
                event: incoming.event,
                repository: incoming.repository.clone(),
                issue_number: incoming.issue_number,
                comment_id: incoming.comment_id,
                author: incoming.author.clone(),
                command: incoming.command.clone(),
                truncated_from: incoming.truncated_from,
                sequence,
                received_at: Time(now),
            },
            status: None,
        };
        match api.create(&PostParams::default(), &job).await {
            Ok(_) => Ok(Received::New { name, sequence }),
            Err(e) if is_status(&e, 409) => Ok(Received::Duplicate { name }),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the next receive sequence from the counter ConfigMap, written under a
    /// resourceVersion precondition so that two receivers never get the same number.
    pub async fn allocate_sequence(&self) -> Result<i64, StoreError> {
        let _serial = self.allocating.lock().await;
        self.next_sequence().await
    }

    async fn next_sequence(&self) -> Result<i64, StoreError> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
        for _ in 0..1000 {
            let Some(mut cm) = api.get_opt(SEQUENCE_CONFIGMAP).await? else {
                let cm = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(SEQUENCE_CONFIGMAP.into()),
                        ..ObjectMeta::default()
                    },
                    data: Some(BTreeMap::from([(SEQUENCE_KEY.into(), "2".into())])),
                    ..ConfigMap::default()
                };
                match api.create(&PostParams::default(), &cm).await {
                    Ok(_) => return Ok(1),
                    Err(e) if is_status(&e, 409) => continue,
                    Err(e) => return Err(e.into()),
                }
            };
            let data = cm.data.get_or_insert_with(BTreeMap::new);
            let raw = data
                .get(SEQUENCE_KEY)
                .cloned()
                .unwrap_or_else(|| "1".into());
            let next: i64 = raw.parse().map_err(|_| StoreError::BadSequence(raw))?;
            data.insert(SEQUENCE_KEY.into(), (next + 1).to_string());
            // `cm` carries the resourceVersion it was read at: a concurrent update makes this 409.
            match api
                .replace(SEQUENCE_CONFIGMAP, &PostParams::default(), &cm)
                .await
            {
                Ok(_) => return Ok(next),
                Err(e) if is_status(&e, 409) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Contention(1000))
    }

    /// The record of the jobs deleted by retention.
    async fn retired(&self) -> Result<Retired, StoreError> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
        let cm = api.get_opt(SEQUENCE_CONFIGMAP).await?;
        let stored = cm
            .as_ref()
            .and_then(|c| c.data.as_ref())
            .and_then(|d| d.get(retired::KEY));
        Retired::parse(stored.map(String::as_str)).map_err(StoreError::BadRetired)
    }

    /// Deletes a finished job whose retention is over, after recording its comment in the
    /// receive-sequence ConfigMap (under its resourceVersion), so that a redelivery of the
    /// comment is still a duplicate. Deleting only the object read (its uid), a job already gone
    /// is fine.
    pub async fn retire(&self, job: &AgentJob) -> Result<(), StoreError> {
        self.record_retired(&job.spec.repository, job.spec.comment_id)
            .await?;
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: job.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match self
            .api()
            .delete(&job.metadata.name.clone().unwrap_or_default(), &params)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if is_status(&e, 404) || is_status(&e, 409) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn record_retired(&self, repository: &str, comment: i64) -> Result<(), StoreError> {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
        for _ in 0..100 {
            // A job exists only after a sequence was taken, so the ConfigMap exists too.
            let mut cm = api.get(SEQUENCE_CONFIGMAP).await?;
            let data = cm.data.get_or_insert_with(BTreeMap::new);
            let mut record = Retired::parse(data.get(retired::KEY).map(String::as_str))
                .map_err(StoreError::BadRetired)?;
            if !record.record(repository, comment) {
                return Ok(());
            }
            data.insert(retired::KEY.into(), record.render());
            match api
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

    /// Applies `event` to job `name`: reads the job, computes the transition, and replaces its
    /// status under the resourceVersion it read. A conflicting write re-reads and tries again,
    /// where an event already applied is recognised by its id.
    pub async fn evolve(&self, name: &str, event: &JobEvent) -> Result<Evolved, StoreError> {
        let api = self.api();
        for _ in 0..100 {
            let job = api.get(name).await?;
            let state = from_persisted(&job.spec, job.status.as_ref(), job.metadata.generation);
            let t = next_state(state.as_ref(), event)?;
            if !t.changed {
                return Ok(Evolved {
                    state: t.state,
                    effects: vec![],
                    applied: false,
                });
            }
            let mut next = job.clone();
            next.status = Some(to_status(&t.state));
            match api
                .replace_status(name, &PostParams::default(), &next)
                .await
            {
                Ok(_) => {
                    tracing::debug!(job = name, event = event.kind.name(), id = %event.id, version = t.state.version, "applied");
                    return Ok(Evolved {
                        state: t.state,
                        effects: t.effects,
                        applied: true,
                    });
                }
                Err(e) if is_status(&e, 409) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Contention(100))
    }

    /// Applies CommandReceived if the job has no state yet; returns its state.
    pub async fn ensure_received(&self, job: &AgentJob) -> Result<JobState, StoreError> {
        if let Some(s) = from_persisted(&job.spec, job.status.as_ref(), job.metadata.generation) {
            return Ok(s);
        }
        let event = JobEvent::new(
            "received",
            job.spec.received_at.0,
            EventKind::CommandReceived {
                text: job.spec.command.clone(),
                truncated_from: job.spec.truncated_from,
                author: job.spec.author.clone(),
                sequence: job.spec.sequence,
                generation: job.metadata.generation,
            },
        );
        let name = job.metadata.name.clone().unwrap_or_default();
        Ok(self.evolve(&name, &event).await?.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_admission_policy_protects_the_sequence_configmap() {
        assert_eq!(
            SEQUENCE_CONFIGMAP,
            crate::api::admission::configmaps::SEQUENCE_CONFIGMAP
        );
    }
}
