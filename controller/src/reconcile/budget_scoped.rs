//! The controller wiring shared by kinds that belong to one Budget (Transactions, plans): they
//! are woken by their own spec and annotation changes (never by their own status writes), by
//! their ApprovalRequests, by their Budget's changes, by YNAB changes a sync announces, and when
//! the admission policies come into force.

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::runtime::Controller;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio_stream::wrappers::BroadcastStream;

use super::Context;
use crate::k8s::watches::{self, Watch, Watches};

/// A kind whose objects belong to one Budget in their namespace.
pub trait BudgetScoped {
    fn budget_name(&self) -> &str;
}

/// Which objects a YNAB change concerns, given the ids of the transactions it touched.
pub type Concerns<K> = fn(&K, &HashSet<String>) -> bool;

/// A controller for `K`, wired as the module says, on the shared watches: `own` is `K`'s.
pub fn controller<K>(
    ctx: &Context,
    own: &Watch<K>,
    watches: &Watches,
    concerns: Concerns<K>,
) -> Controller<K>
where
    K: Resource<DynamicType = ()>
        + BudgetScoped
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    let reader = own.store();
    // Nothing is decided before the Budgets and ApprovalRequests it reads are known, whatever
    // wakes it: after a restart, a request listed before the Budgets found its subject's
    // Budget "missing" in a cache still filling, and the plan said it was Invalid.
    let changes = watches::spec_changes(own.subscribe(), reader.clone());
    let changed = changed_in_ynab(ctx, reader.clone(), concerns);
    let deleted = asking_again::<K>(ctx, watches);
    let of_budget = reader.clone();
    Controller::for_shared_stream(once_known(watches, changes), reader)
        .owns_shared_stream(once_known(watches, watches.approvals.subscribe()))
        // A Budget's spec (writes enabled, policy, closed months) decides for its objects.
        .watches_shared_stream(
            once_known(watches, watches.budgets.subscribe()),
            move |budget| {
                belonging(
                    &of_budget,
                    budget.namespace().as_deref().unwrap_or_default(),
                    &budget.name_any(),
                )
            },
        )
        .reconcile_on(once_known(watches, changed))
        .reconcile_on(once_known(watches, deleted))
        // Objects that waited for the admission policies go on once they are in force.
        .reconcile_all_on(once_known(watches, ctx.admission.verified_again()))
}

/// `stream`, from the moment the Budgets and ApprovalRequests are in the caches.
fn once_known<S>(watches: &Watches, stream: S) -> impl Stream<Item = S::Item> + Send + 'static
where
    S: Stream + Send + 'static,
{
    let known = (watches.budgets.listed(), watches.approvals.listed());
    futures::stream::once(async move {
        futures::join!(known.0.wait(), known.1.wait());
        stream
    })
    .flatten()
}

/// The subjects of kind `K` whose waiting ApprovalRequest was deleted: each asks again at once
/// (a decided request is a record only the controller deletes). Each deletion is told in an
/// Event on the request, so that a loop of them shows.
fn asking_again<K>(
    ctx: &Context,
    watches: &Watches,
) -> impl futures::Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    let events = ctx.events.clone();
    BroadcastStream::new(watches.deleted_requests.subscribe()).filter_map(move |deleted| {
        let subject = deleted.ok().filter(|r| r.spec.decision.is_none()).and_then(|r| {
            let owner = r
                .owner_references()
                .iter()
                .find(|o| o.kind == K::kind(&()))?
                .name
                .clone();
            let namespace = r.namespace()?;
            let events = events.clone();
            let note = format!(
                "ApprovalRequest {} was deleted before anyone decided it; {} {owner} asks again",
                r.name_any(),
                K::kind(&())
            );
            tokio::spawn(async move {
                events
                    .publish(r.as_ref(), true, "RequestDeleted", "AskAgain", note)
                    .await;
            });
            Some(ObjectRef::new(&owner).within(&namespace))
        });
        futures::future::ready(subject)
    })
}

fn belonging<K>(store: &Store<K>, namespace: &str, budget: &str) -> Vec<ObjectRef<K>>
where
    K: Resource<DynamicType = ()> + BudgetScoped + Clone,
{
    of_budget(store, namespace, budget)
        .iter()
        .map(|o| ObjectRef::from_obj(o.as_ref()))
        .collect()
}

/// The cached objects of Budget `budget` in `namespace`.
pub fn of_budget<K>(store: &Store<K>, namespace: &str, budget: &str) -> Vec<Arc<K>>
where
    K: Resource<DynamicType = ()> + BudgetScoped + Clone,
{
    store
        .state()
        .into_iter()
        .filter(|o| o.namespace().as_deref() == Some(namespace) && o.budget_name() == budget)
        .collect()
}

/// The objects a sync's announced changes concern; all of them if announcements were missed.
fn changed_in_ynab<K>(
    ctx: &Context,
    store: Store<K>,
    concerns: Concerns<K>,
) -> impl futures::Stream<Item = ObjectRef<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + BudgetScoped + Clone + Send + Sync + 'static,
{
    BroadcastStream::new(ctx.budget_links.subscribe()).flat_map(move |change| {
        let refs: Vec<ObjectRef<K>> = match change {
            Ok(change) => {
                let ids: HashSet<String> = change.transaction_ids.into_iter().collect();
                belonging(&store, &change.namespace, &change.budget)
                    .into_iter()
                    .filter(|r| store.get(r).is_some_and(|o| concerns(&o, &ids)))
                    .collect()
            }
            Err(_) => store
                .state()
                .iter()
                .map(|o| ObjectRef::from_obj(o.as_ref()))
                .collect(),
        };
        futures::stream::iter(refs)
    })
}
