//! The ConfigRepo reconciler: fetch the branch, read its documents, decide what the revision
//! changes, dry-run all of it, then apply and prune, and record the revision and inventory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, stream};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, watcher};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

mod phases;

use super::authorship::Forge;
use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error};
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::CategorizationRule;
use crate::git::{self, options::ConfigRepoArgs};
use crate::k8s::objects;
use crate::k8s::watches::{self, Watches};
use crate::logic::config_repo::push::{self, Push};
use crate::logic::config_repo::status::{self as repo_status, Outcome};
use crate::logic::config_repo::url::UrlPolicy;
use crate::logic::rule::standing;
use crate::logic::values::duration;

/// The shortest interval between fetches, as the CRD says.
const MIN_INTERVAL: Duration = Duration::from_secs(30);

/// How the ConfigRepo reconciler was set up.
pub struct Setup {
    pub options: ConfigRepoArgs,
    /// Which Git URLs may be fetched.
    pub urls: UrlPolicy,
    /// The Gitea of the `/agent` integration, if any: a rule proposed to a repository of it may
    /// be taken over by the ConfigRepo following that repository, and the authors of what a
    /// repository of it applies are named on what they wrote.
    pub gitea: Option<Forge>,
}

/// What the ConfigRepo reconciler works with.
struct Repos {
    ctx: Arc<Context>,
    setup: Setup,
    /// One client (one connection pool) per impersonated ServiceAccount, by namespace and name.
    accounts: Mutex<HashMap<(String, String), kube::Client>>,
}

/// Subscribes to the shared ConfigRepo watch at once; the returned future runs the controller.
/// A Gitea push of a followed branch (from `pushes`) syncs its ConfigRepos at once.
pub fn run(
    ctx: Arc<Context>,
    watches: &mut Watches,
    setup: Setup,
    pushes: broadcast::Receiver<Push>,
) -> impl Future<Output = ()> + use<> {
    let reader = watches.repos.store();
    // A deleted ConfigRepo's fetched history goes with it (deletions while the watch was down
    // show up at the end of the next full list), and an Event keeps the trail of what it made.
    let cache_root = setup.options.config_repo_cache.clone();
    let known = reader.clone();
    let events = ctx.events.clone();
    watches.repos.on_event(Box::new(move |event| {
        if let watcher::Event::Delete(repo) = event {
            let (repo, events) = (repo.clone(), events.clone());
            tokio::spawn(async move { left_behind(&events, &repo).await });
        }
        if matches!(event, watcher::Event::Delete(_) | watcher::Event::InitDone) {
            let keep: Vec<String> = known.state().iter().filter_map(|r| r.uid()).collect();
            git::forget_caches(&cache_root, &keep);
        }
    }));
    // Spec and annotation changes (the request-now and confirm-prune annotations) wake a
    // ConfigRepo; its own status writes do not.
    let changes = watches::spec_changes(watches.repos.subscribe(), reader.clone());
    let followed = reader.clone();
    let pushed = BroadcastStream::new(pushes)
        .filter_map(|p| futures::future::ready(p.ok()))
        .flat_map(move |p| stream::iter(concerned(&followed, &p)));
    // A rule of a repository demoted by a person's override: recorded by its ConfigRepo at once,
    // so that the demotion outlives the rule object.
    let recording = reader.clone();
    let demoted = watches
        .rules
        .subscribe()
        .flat_map(move |rule| stream::iter(recording_demotion(&recording, &rule)));
    let controller = Controller::for_shared_stream(changes, reader)
        .reconcile_on(pushed)
        .reconcile_on(demoted)
        .graceful_shutdown_on(ctx.shutdown.requested());
    let repos = Arc::new(Repos {
        ctx,
        setup,
        accounts: Mutex::default(),
    });
    super::drain(controller.run(reconcile, on_error, repos))
}

/// A client acting as the ServiceAccount `account` of `namespace`: the API server checks each
/// write against that account's rights, and the controller needs only `impersonate` on it.
fn impersonating(repos: &Repos, namespace: &str, account: &str) -> Result<kube::Client, Error> {
    let key = (namespace.to_owned(), account.to_owned());
    let mut accounts = repos.accounts.lock().expect("accounts lock");
    if let Some(client) = accounts.get(&key) {
        return Ok(client.clone());
    }
    let mut config = repos.ctx.kube_config.clone();
    config.auth_info.impersonate = Some(format!("system:serviceaccount:{namespace}:{account}"));
    let client = crate::k8s::client::build(config)?;
    accounts.insert(key, client.clone());
    Ok(client)
}

/// The Event a deleted ConfigRepo leaves: the objects it had applied stay, and no other
/// repository takes them over, so a person needs to know which they were.
async fn left_behind(events: &super::tell::Tell, repo: &ConfigRepo) {
    let inventory = repo
        .status
        .as_ref()
        .map(|s| s.inventory.as_slice())
        .unwrap_or_default();
    if inventory.is_empty() {
        return;
    }
    let note = repo_status::left_behind(&repo.name_any(), inventory);
    events.publish(repo, false, "Deleted", "Delete", note).await;
}

fn on_error(repo: Arc<ConfigRepo>, error: &Error, repos: Arc<Repos>) -> Action {
    super::error_policy(repo, error, repos.ctx.clone())
}

/// The ConfigRepos of `rule`'s namespace that applied it and have not recorded its demotion,
/// while one is in force.
fn recording_demotion(
    store: &Store<ConfigRepo>,
    rule: &CategorizationRule,
) -> Vec<ObjectRef<ConfigRepo>> {
    if !standing::is_demoted(rule) {
        return Vec::new();
    }
    let name = rule.name_any();
    store
        .state()
        .iter()
        .filter(|r| r.namespace() == rule.namespace())
        .filter(|r| {
            r.status.as_ref().is_some_and(|s| {
                s.inventory
                    .iter()
                    .any(|e| e.kind == "CategorizationRule" && e.name == name)
                    && !s.demoted.iter().any(|d| d.name == name)
            })
        })
        .map(|r| ObjectRef::from_obj(r.as_ref()))
        .collect()
}

/// The ConfigRepos that follow the branch `push` moved.
fn concerned(store: &Store<ConfigRepo>, push: &Push) -> Vec<ObjectRef<ConfigRepo>> {
    store
        .state()
        .iter()
        .filter(|r| push::concerns(push, &r.spec.url, &r.spec.branch))
        .map(|r| ObjectRef::from_obj(r.as_ref()))
        .collect()
}

async fn reconcile(cached: Arc<ConfigRepo>, repos: Arc<Repos>) -> Result<Action, Error> {
    let ctx = &repos.ctx;
    let _measure = super::measure::<ConfigRepo>(ctx);
    // The watch may not yet have delivered the status the last sync wrote: from that copy, the
    // objects the last revision applied would look foreign (not in the inventory), and the sync
    // would write the inventory away. So each sync starts from the object as the API server
    // holds it.
    let Some(repo) = objects::latest(&ctx.client, cached.as_ref()).await? else {
        return Ok(Action::await_change());
    };
    let previous = repo.status.clone().unwrap_or_default();
    let outcome = if repo.spec.suspend {
        Outcome::Suspended
    } else {
        phases::sync(&repo, &repos, &previous).await?
    };
    let next = repo_status::next(
        &previous,
        &outcome,
        repo.metadata.generation,
        Timestamp::now(),
    );
    let changed = repo_status::changed(&previous, &next);
    let announcement = repo_status::announcement(&previous, &next);
    summarize_and_patch(
        ctx,
        &repo,
        changed,
        &next,
        StatusWrite::Apply,
        announcement,
        "Sync",
    )
    .await?;
    if repo.spec.suspend {
        return Ok(Action::await_change());
    }
    // Objects made before the CRD's minimum still wait at least that long.
    let interval = duration::parse(&repo.spec.interval.0)
        .unwrap_or(Duration::from_secs(60))
        .max(MIN_INTERVAL);
    Ok(Action::requeue(interval))
}
