//! AgentJobs in the API server: receiving a command (one object per command, named by its
//! de-duplication key, with a durable receive sequence) and evolving a job's state through the
//! state machine under optimistic concurrency.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::StreamExt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::{Notify, oneshot};

use super::error::{StoreError, is_status};
pub use super::sequence::SEQUENCE_CONFIGMAP;
use super::sequence::Sequence;
use crate::api::agent_job::{AgentJob, AgentJobSpec};
use crate::logic::job::event::JobEvent;
use crate::logic::job::persisted::{from_persisted, to_status};
use crate::logic::job::retired::Retired;
use crate::logic::job::state::{Effect, JobState, next_state};
use crate::logic::job::webhook::Incoming;

/// Label on every AgentJob with its repository's comment key hash, for `kubectl get -l`.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

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

/// One job as its handler last saw or wrote it (a reconcile's copy from the watch, the
/// executor's read, then each status write's answer), so that its next status write need not
/// read the job first. Only a write is decided from it (see [`JobStore::evolve_latest`]).
pub struct Latest {
    name: String,
    job: Mutex<Option<AgentJob>>,
}

impl Latest {
    /// Nothing seen yet: the first write reads the job.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            job: Mutex::new(None),
        }
    }

    /// Starts from `job` as seen.
    pub fn seen(job: &AgentJob) -> Self {
        Self {
            name: job.metadata.name.clone().unwrap_or_default(),
            job: Mutex::new(Some(job.clone())),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The copy, taken out for one evolution (never held across its I/O).
    fn take(&self) -> Option<AgentJob> {
        self.job.lock().expect("latest lock").take()
    }

    fn keep(&self, job: AgentJob) {
        *self.job.lock().expect("latest lock") = Some(job);
    }
}

/// A received command waiting for its sequence.
struct Waiting {
    job: AgentJob,
    reply: oneshot::Sender<Result<Received, StoreError>>,
}

/// The AgentJobs of one namespace.
#[derive(Clone)]
pub struct JobStore {
    client: kube::Client,
    namespace: String,
    sequence: Arc<Sequence>,
    /// Commands received and not yet given a sequence: whoever commits next takes them all
    /// (one sequence write for the group, however many receivers wait).
    waiting: Arc<Mutex<Vec<Waiting>>>,
    /// Serialises this process's sequence takes, so that groups take their blocks in turn (a
    /// group's creates overlap the next group's take); the resourceVersion precondition still
    /// guards the counter against other writers.
    committing: Arc<tokio::sync::Mutex<()>>,
    /// Groups whose jobs are created at once, by first sequence, until the executor's cache
    /// shows all of them: they may show up in any order, and the executor runs none of a group,
    /// nor any later job, before it has seen the whole group.
    unseen: Arc<Mutex<BTreeSet<i64>>>,
    /// The executor's cache, on the replica that runs jobs.
    seen_by: Arc<OnceLock<Store<AgentJob>>>,
    /// Notified when a group is all seen.
    seen: Arc<Notify>,
    /// Notified (all waiters) on every change the executor's cache applied.
    cache_changed: Arc<Notify>,
}

/// A group's job creates under way at once.
const CREATES_AT_ONCE: usize = 16;

/// How long a group may take to show up in the executor's cache before it is no longer waited
/// for (a watch that far behind is relisting).
const SEEN_WITHIN: Duration = Duration::from_secs(30);

impl JobStore {
    pub fn new(client: kube::Client, namespace: impl Into<String>) -> Self {
        let namespace = namespace.into();
        Self {
            sequence: Arc::new(Sequence::new(client.clone(), &namespace)),
            client,
            namespace,
            waiting: Default::default(),
            committing: Default::default(),
            unseen: Default::default(),
            seen_by: Default::default(),
            seen: Default::default(),
            cache_changed: Default::default(),
        }
    }

    /// Has the executor's `cache` show a group's jobs before they may run.
    pub fn seen_through(&self, cache: Store<AgentJob>) {
        let _ = self.seen_by.set(cache);
    }

    /// The first sequence of the earliest group not yet all seen: every job before it is.
    pub fn unseen_from(&self) -> Option<i64> {
        self.unseen.lock().expect("unseen lock").first().copied()
    }

    /// Resolves once a group is all seen.
    pub async fn group_seen(&self) {
        self.seen.notified().await;
    }

    /// Tells the groups waiting to be seen that the executor's cache changed: its subscriber to
    /// the AgentJob watch calls this for every change.
    pub fn cache_changed(&self) {
        self.cache_changed.notify_waiters();
    }

    /// Waits until the cache shows every job `names` of the group from `first`, then lets the
    /// executor run them.
    async fn until_seen(&self, first: i64, names: Vec<String>) {
        if self.seen_by.get().is_some() {
            let all_shown = async {
                loop {
                    // Listening before looking: a change in between is not missed.
                    let changed = self.cache_changed.notified();
                    tokio::pin!(changed);
                    changed.as_mut().enable();
                    if names.iter().all(|n| self.cached(n)) {
                        break;
                    }
                    changed.await;
                }
            };
            if tokio::time::timeout(SEEN_WITHIN, all_shown).await.is_err() {
                tracing::warn!(first, "a group of AgentJobs is not in the cache after 30 s");
            }
        }
        self.unseen.lock().expect("unseen lock").remove(&first);
        self.seen.notify_one();
    }

    /// Whether the executor's cache, if this replica has it, shows job `name`.
    fn cached(&self, name: &str) -> bool {
        self.seen_by.get().is_some_and(|cache| {
            cache
                .get(&ObjectRef::new(name).within(&self.namespace))
                .is_some()
        })
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

    /// Persists a received command: nothing else (its status is written with its next event).
    /// A command already stored, or whose job was deleted by retention, is a duplicate; one the
    /// cache shows, or retention recorded, allocates no sequence, while one stored but not yet
    /// cached, or a lost creation race, allocates one that stays unused (sequences are
    /// increasing, not dense). Reading the cache rather than the API server keeps a delivery
    /// to one create.
    pub async fn receive(
        &self,
        incoming: &Incoming,
        now: Timestamp,
    ) -> Result<Received, StoreError> {
        let name = incoming.job_name();
        if self.cached(&name) {
            return Ok(Received::Duplicate { name });
        }
        // Not in the cache (or no cache on this replica): if it is stored already, its create
        // answers 409; if retention deleted it, it recorded it first, and the commit checks
        // that record as of a moment after this one.
        let (reply, answer) = oneshot::channel();
        let job = self.job(incoming, now);
        self.waiting
            .lock()
            .expect("waiting lock")
            .push(Waiting { job, reply });
        // Its own task: a receiver that goes away (its delivery's connection closed) does not
        // cut short a commit that other receivers wait on.
        let store = self.clone();
        tokio::spawn(async move { store.commit_waiting().await });
        answer
            .await
            .map_err(|_| StoreError::NotStored("the commit ended early".into()))?
    }

    /// The job for `incoming`, its sequence not yet given.
    fn job(&self, incoming: &Incoming, now: Timestamp) -> AgentJob {
        AgentJob {
            metadata: ObjectMeta {
                name: Some(incoming.job_name()),
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
                sequence: 0,
                received_at: Time(now),
            },
            status: None,
        }
    }

    /// Gives every waiting command a sequence, with one write of the counter, and creates
    /// their jobs at once; the executor runs none of them until it has seen them all, so it
    /// never runs job n+1 before job n. A command received twice within the group, or whose
    /// job retention already deleted, takes no sequence.
    async fn commit_waiting(&self) {
        let serial = self.committing.lock().await;
        let group = std::mem::take(&mut *self.waiting.lock().expect("waiting lock"));
        let mut firsts: Vec<Waiting> = Vec::new();
        let mut repeats: Vec<Waiting> = Vec::new();
        for w in group {
            if firsts
                .iter()
                .any(|f| f.job.metadata.name == w.job.metadata.name)
            {
                repeats.push(w);
            } else {
                firsts.push(w);
            }
        }
        if firsts.is_empty() {
            return;
        }
        let retired = |record: &Retired, w: &Waiting| {
            record.covers(&w.job.spec.repository, w.job.spec.comment_id)
        };
        let taken = self
            .sequence
            .take(|record| firsts.iter().filter(|w| !retired(record, w)).count() as i64)
            .await;
        let (first, record) = match taken {
            Ok(taken) => taken,
            Err(e) => {
                let why = e.to_string();
                for w in firsts.into_iter().chain(repeats) {
                    let _ = w.reply.send(Err(StoreError::NotStored(why.clone())));
                }
                return;
            }
        };
        let (gone, firsts): (Vec<Waiting>, Vec<Waiting>) =
            firsts.into_iter().partition(|w| retired(&record, w));
        for w in gone.into_iter() {
            let name = w.job.metadata.name.clone().unwrap_or_default();
            let _ = w.reply.send(Ok(Received::Duplicate { name }));
        }
        // Marked unseen before the next group may take a block: the executor never runs a
        // later group's job while this one's may still show up.
        self.unseen.lock().expect("unseen lock").insert(first);
        drop(serial);
        let api = &self.api();
        let creates = (first..).zip(firsts).map(|(sequence, mut w)| async move {
            let name = w.job.metadata.name.clone().unwrap_or_default();
            w.job.spec.sequence = sequence;
            let result = match api.create(&PostParams::default(), &w.job).await {
                Ok(_) => Ok(Received::New {
                    name: name.clone(),
                    sequence,
                }),
                Err(e) if is_status(&e, 409) => Ok(Received::Duplicate { name: name.clone() }),
                Err(e) => Err(StoreError::from(e)),
            };
            let created = matches!(result, Ok(Received::New { .. }));
            let stored = result.as_ref().map(|_| ()).map_err(ToString::to_string);
            let _ = w.reply.send(result);
            (name, created, stored)
        });
        let outcomes: Vec<(String, bool, Result<(), String>)> = futures::stream::iter(creates)
            .buffer_unordered(CREATES_AT_ONCE)
            .collect()
            .await;
        let created = outcomes
            .iter()
            .filter(|o| o.1)
            .map(|o| o.0.clone())
            .collect();
        let store = self.clone();
        tokio::spawn(async move { store.until_seen(first, created).await });
        // Whether each name is stored now, for the repeats' answers.
        let stored: HashMap<String, Result<(), String>> =
            outcomes.into_iter().map(|(n, _, s)| (n, s)).collect();
        for w in repeats {
            let name = w.job.metadata.name.clone().unwrap_or_default();
            let result = match stored.get(&name) {
                Some(Err(why)) => Err(StoreError::NotStored(why.clone())),
                _ => Ok(Received::Duplicate { name }),
            };
            let _ = w.reply.send(result);
        }
    }

    /// Takes the next receive sequence.
    pub async fn allocate_sequence(&self) -> Result<i64, StoreError> {
        Ok(self.sequence.take(|_| 1).await?.0)
    }

    /// Deletes a finished job whose retention is over, after recording its comment in the
    /// receive-sequence ConfigMap (under its resourceVersion), so that a redelivery of the
    /// comment is still a duplicate. Deleting only the object read (its uid), a job already gone
    /// is fine.
    pub async fn retire(&self, job: &AgentJob) -> Result<(), StoreError> {
        self.sequence
            .record_retired(&job.spec.repository, job.spec.comment_id)
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

    /// Applies `event` to job `name`, reading the job first: see [`Self::evolve_latest`].
    pub async fn evolve(&self, name: &str, event: &JobEvent) -> Result<Evolved, StoreError> {
        self.evolve_latest(&Latest::named(name), event).await
    }

    /// Applies `event` to the job: computes the transition from the job as `latest` holds it
    /// (or as read now), and replaces its status under that copy's resourceVersion; `latest`
    /// then holds what was written. A job without status is Received, and the first write
    /// persists that with `event`.
    ///
    /// Only a write is decided from a copy kept in `latest`: one that is behind is refused by
    /// the resourceVersion, and anything but a write (already applied, no change, not allowed)
    /// is decided again from a fresh read. A conflicting write reads again and retries, where an
    /// event already applied is recognised by its id.
    pub async fn evolve_latest(
        &self,
        latest: &Latest,
        event: &JobEvent,
    ) -> Result<Evolved, StoreError> {
        let api = self.api();
        let name = latest.name.as_str();
        for _ in 0..100 {
            let (job, kept) = match latest.take() {
                Some(job) => (job, true),
                None => (api.get(name).await?, false),
            };
            let state = from_persisted(&job.spec, job.status.as_ref(), job.metadata.generation);
            let t = match (next_state(Some(&state), event), kept) {
                (Ok(t), _) if t.changed => t,
                (_, true) => continue,
                (Ok(t), false) => t,
                (Err(e), false) => return Err(e.into()),
            };
            if !t.changed {
                latest.keep(job);
                return Ok(Evolved {
                    state: t.state,
                    effects: vec![],
                    applied: false,
                });
            }
            let mut next = job;
            next.status = Some(to_status(&t.state));
            match api
                .replace_status(name, &PostParams::default(), &next)
                .await
            {
                Ok(written) => {
                    tracing::debug!(job = name, event = event.kind.name(), id = %event.id, "applied");
                    latest.keep(written);
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
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
