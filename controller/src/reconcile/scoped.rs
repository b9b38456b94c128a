//! The controller wiring shared by kinds that belong to one Budget (Transactions, plans): they
//! are woken by their own spec and annotation changes (never by their own status writes), by
//! their ApprovalRequests, by their Budget's changes, by YNAB changes a sync announces, and when
//! the admission policies come into force.

use std::collections::HashSet;
use std::fmt::Debug;

use futures::StreamExt;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::utils::Predicate;
use kube::runtime::{Controller, WatchStreamExt, predicates, watcher};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio_stream::wrappers::BroadcastStream;

use super::Context;
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;

/// A kind whose objects belong to one Budget in their namespace.
pub trait BudgetScoped {
    fn budget_name(&self) -> &str;
}

/// Which objects a YNAB change concerns, given the ids of the transactions it touched.
pub type Concerns<K> = fn(&K, &HashSet<String>) -> bool;

/// A controller for `K`, wired as the module says.
pub fn controller<K>(ctx: &Context, concerns: Concerns<K>) -> Controller<K>
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
    let (reader, writer) = reflector::store();
    let stream = watcher(
        Api::<K>::all(ctx.client.clone()),
        watcher::Config::default().any_semantic(),
    )
    .default_backoff()
    .reflect(writer)
    .applied_objects()
    .predicate_filter(
        predicates::generation.combine(predicates::annotations),
        Default::default(),
    );
    let changed = changed_in_ynab(ctx, reader.clone(), concerns);
    let of_budget = reader.clone();
    Controller::for_stream(stream, reader)
        .owns(
            Api::<ApprovalRequest>::all(ctx.client.clone()),
            watcher::Config::default(),
        )
        // A Budget's spec (writes enabled, policy, closed months) decides for its objects.
        .watches(
            Api::<Budget>::all(ctx.client.clone()),
            watcher::Config::default(),
            move |budget| {
                belonging(
                    &of_budget,
                    budget.namespace().as_deref().unwrap_or_default(),
                    &budget.name_any(),
                )
            },
        )
        .reconcile_on(changed)
        // Objects that waited for the admission policies go on once they are in force.
        .reconcile_all_on(ctx.admission.verified_again())
}

fn belonging<K>(store: &Store<K>, namespace: &str, budget: &str) -> Vec<ObjectRef<K>>
where
    K: Resource<DynamicType = ()> + BudgetScoped + Clone,
{
    store
        .state()
        .iter()
        .filter(|o| o.namespace().as_deref() == Some(namespace) && o.budget_name() == budget)
        .map(|o| ObjectRef::from_obj(o.as_ref()))
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
    BroadcastStream::new(ctx.registry.subscribe()).flat_map(move |change| {
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
