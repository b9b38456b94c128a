//! One watch per kind, shared by every controller (kube's shared reflectors): each kind is listed
//! and watched once, cached once, and every controller that needs it subscribes to the same
//! stream of changes. Cached objects drop `managedFields`, which nothing here reads and which is
//! often the largest part of an object.

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Stream, StreamExt};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{self, ReflectHandle, Store};
use kube::runtime::utils::Predicate;
use kube::runtime::{WatchStreamExt, predicates, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;
use tracing::Instrument;

use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::api::plan::CategorizationPlan;
use crate::api::rule::CategorizationRule;
use crate::api::transaction::Transaction;
use crate::logic::approval::edited::Written;

/// How many changes a subscriber may be behind before the watch waits for it.
const BUFFER: usize = 1024;

/// What a kind's watch calls with each of its events once the cache holds it (a deletion, the
/// end of a full list).
pub type OnEvent<K> = Box<dyn Fn(&watcher::Event<K>) + Send + Sync>;

/// The watch of one kind (in every namespace, or in one): subscribe first, then [`Watch::run`].
pub struct Watch<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    api: Api<K>,
    store: Store<K>,
    writer: Writer<K>,
    on_event: Vec<OnEvent<K>>,
    listed: tokio::sync::watch::Sender<bool>,
}

/// Resolves once a watch's first full list is in its cache. Unlike kube's
/// `Store::wait_until_ready`, any number of tasks may wait at once: that one wakes only the
/// waiter that polled it last. It resolves before the listed objects are handed to the
/// subscribers, not after: a subscriber that is read only once another kind is listed holds
/// up its own kind's watch when it falls `BUFFER` behind, and a restart with more objects than
/// that (a household's year of ApprovalRequests) would otherwise wait on itself forever.
#[derive(Clone)]
pub struct Listed(tokio::sync::watch::Receiver<bool>);

impl Listed {
    /// `true` once the list is in the cache; `false` if the watch stopped first (shutting
    /// down), when the cache may hold nothing and must not be read as "absent".
    pub async fn wait(mut self) -> bool {
        self.0.wait_for(|listed| *listed).await.is_ok()
    }

    /// Whether the list is in the cache now.
    pub fn now(&self) -> bool {
        *self.0.borrow()
    }
}

impl<K> Watch<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// The watch of `namespace`'s objects, or of every namespace's.
    fn scoped(client: &kube::Client, namespace: Option<&str>) -> Self
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope>,
    {
        match namespace {
            Some(ns) => Self::namespaced(client, ns),
            None => Self::of(Api::all(client.clone())),
        }
    }

    /// The watch of one namespace's objects only.
    pub fn namespaced(client: &kube::Client, namespace: &str) -> Self
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope>,
    {
        Self::of(Api::namespaced(client.clone(), namespace))
    }

    fn of(api: Api<K>) -> Self {
        let (store, writer) = reflector::store_shared(BUFFER);
        Self {
            api,
            store,
            writer,
            on_event: Vec::new(),
            listed: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The cache, current once the first list is done ([`Watch::listed`]).
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    pub fn listed(&self) -> Listed {
        Listed(self.listed.subscribe())
    }

    /// Every object as it is added or changed, from the cache. A subscriber must keep reading:
    /// the watch waits for the slowest one.
    pub fn subscribe(&self) -> ReflectHandle<K> {
        self.writer
            .subscribe()
            .expect("a shared store always has a dispatcher")
    }

    /// Calls `f` with every event of the watch, once the cache has applied it.
    pub fn on_event(&mut self, f: OnEvent<K>) {
        self.on_event.push(f);
    }

    /// Lists and watches until the task is aborted, retrying with backoff; its logs carry the
    /// kind.
    pub fn run(self) -> impl Future<Output = ()> + Send + 'static {
        let span = tracing::info_span!("watch", kind = %K::kind(&()));
        self.watch().instrument(span)
    }

    async fn watch(self) {
        let Self {
            api,
            store,
            writer,
            on_event,
            listed,
        } = self;
        // The one waiter on kube's readiness, which the cache signals as it takes the list in.
        let known = async {
            #[expect(
                clippy::disallowed_methods,
                reason = "its one waiter, which `Listed` passes on to any number"
            )]
            let ready = store.wait_until_ready().await;
            if ready.is_ok() {
                tracing::debug!("listed");
                listed.send_replace(true);
            }
        };
        let watching = watcher(api, watcher::Config::default().any_semantic())
            .default_backoff()
            .modify(|o| o.meta_mut().managed_fields = None)
            .reflect_shared(writer)
            .for_each(|event| {
                match &event {
                    Ok(event) => on_event.iter().for_each(|f| f(event)),
                    Err(error) => {
                        tracing::warn!(kind = %K::kind(&()), %error, "watch failed; retrying")
                    }
                }
                async {}
            });
        futures::join!(known, watching);
    }
}

/// Every kind the reconcilers share.
pub struct Watches {
    pub budgets: Watch<Budget>,
    pub approvals: Watch<ApprovalRequest>,
    pub transactions: Watch<Transaction>,
    pub plans: Watch<CategorizationPlan>,
    pub repos: Watch<ConfigRepo>,
    pub rules: Watch<CategorizationRule>,
    /// Every ApprovalRequest deleted, once the cache no longer holds it: a shared stream
    /// carries additions and changes only, and a subject whose waiting request was deleted
    /// must ask again at once.
    pub deleted_requests: broadcast::Sender<Arc<ApprovalRequest>>,
    /// What ledgerops last wrote to each transaction, noted from every Transaction and plan the
    /// watches bring: the policy runs no write over an edit made since.
    pub written: Arc<Mutex<Written>>,
}

impl Watches {
    /// The watches of `namespace`'s objects, or of every namespace's.
    pub fn new(client: &kube::Client, namespace: Option<&str>) -> Self {
        let (deleted_requests, _) = broadcast::channel(BUFFER);
        let mut approvals: Watch<ApprovalRequest> = Watch::scoped(client, namespace);
        let deleted = deleted_requests.clone();
        approvals.on_event(Box::new(move |event| {
            if let watcher::Event::Delete(request) = event {
                // Nobody listening yet (or any more) is no error: nothing waits on it.
                let _ = deleted.send(Arc::new(request.clone()));
            }
        }));
        let written = Arc::new(Mutex::new(Written::default()));
        let mut transactions: Watch<Transaction> = Watch::scoped(client, namespace);
        transactions.on_event(noting(&written, Written::transaction));
        let mut plans: Watch<CategorizationPlan> = Watch::scoped(client, namespace);
        plans.on_event(noting(&written, Written::plan));
        Self {
            budgets: Watch::scoped(client, namespace),
            approvals,
            transactions,
            plans,
            repos: Watch::scoped(client, namespace),
            rules: Watch::scoped(client, namespace),
            deleted_requests,
            written,
        }
    }

    /// Starts every watch, each in its own task (one kind's slow subscriber holds back no
    /// other kind). Aborting the returned handles stops them.
    pub fn spawn(self) -> Vec<tokio::task::JoinHandle<()>> {
        vec![
            tokio::spawn(self.budgets.run()),
            tokio::spawn(self.approvals.run()),
            tokio::spawn(self.transactions.run()),
            tokio::spawn(self.plans.run()),
            tokio::spawn(self.repos.run()),
            tokio::spawn(self.rules.run()),
        ]
    }
}

/// Notes each object a watch brings (listed or changed) in `written` with `note`, and forgets
/// the open write of each one deleted. Each listed object is noted before the watch says it has
/// listed.
fn noting<K: kube::Resource<DynamicType = ()> + Send + Sync + 'static>(
    written: &Arc<Mutex<Written>>,
    note: fn(&mut Written, &K),
) -> OnEvent<K> {
    let written = written.clone();
    Box::new(move |event| {
        // Poisoned only by a panic while noting; what was noted before stays good.
        let written = || written.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            watcher::Event::Apply(object) | watcher::Event::InitApply(object) => {
                note(&mut written(), object);
            }
            watcher::Event::Delete(object) => written().gone(object),
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    })
}

/// The changes of `changes` that a person made: a new generation (spec) or new annotations.
/// The object's own status writes are passed over, as kube's `predicate_filter` does for an
/// unshared watch; an object deleted and made again under the same name counts as new.
pub fn spec_changes<K>(
    changes: impl Stream<Item = Arc<K>> + Send + 'static,
    store: Store<K>,
) -> impl Stream<Item = Arc<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    changes_of(changes, store, |_: &K| Some(0))
}

/// Like [`spec_changes`], and also the changes of what `also` hashes (a part of the status
/// another writer owns).
pub fn changes_of<K>(
    changes: impl Stream<Item = Arc<K>> + Send + 'static,
    store: Store<K>,
    also: impl Predicate<K> + Send + 'static,
) -> impl Stream<Item = Arc<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let predicate = predicates::generation
        .combine(predicates::annotations)
        .combine(also);
    let mut seen: HashMap<String, u64> = HashMap::new();
    changes.filter(move |object| {
        let changed = match (object.uid(), predicate.hash_property(object.as_ref())) {
            (Some(uid), Some(hash)) => seen.insert(uid, hash) != Some(hash),
            _ => true,
        };
        // Forget deleted objects once they could outnumber the living ones.
        if seen.len() > 2 * store.len() + 64 {
            let living: HashSet<String> = store.state().iter().filter_map(|o| o.uid()).collect();
            seen.retain(|uid, _| living.contains(uid));
        }
        futures::future::ready(changed)
    })
}

#[cfg(test)]
#[path = "watches_tests.rs"]
mod tests;
