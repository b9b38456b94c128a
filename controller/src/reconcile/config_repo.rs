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

use super::authorship::{self, Forge, Range};
use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error};
use crate::api::config_repo::{ConfigRepo, ConfigRepoStatus};
use crate::api::rule::CategorizationRule;
use crate::git::{self, options::ConfigRepoArgs};
use crate::k8s::watches::{self, Watches};
use crate::k8s::{git_credentials, objects, repo_objects};
use crate::logic::config_repo::decide::{self, PrunePolicy, Stop};
use crate::logic::config_repo::demotion;
use crate::logic::config_repo::documents::{self, Document, Refusal, Source};
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::config_repo::inventory::{self, Inventory};
use crate::logic::config_repo::ownership::{Maker, Owner};
use crate::logic::config_repo::push::{self, Push};
use crate::logic::config_repo::status::{self as repo_status, Outcome};
use crate::logic::config_repo::url::{self, UrlPolicy};
use crate::logic::config_repo::{CONFIRM_PRUNE, CONFIRM_REWRITE, applied_commit, revision};
use crate::logic::rule::standing;
use crate::logic::values::duration;

/// How many documents are dry-run or applied at once.
const PARALLEL: usize = 8;
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
        sync(&repo, &repos, &previous).await?
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

fn fetch_failed(reason: &'static str, message: String) -> Outcome {
    Outcome::FetchFailed { reason, message }
}

/// One sync: everything of the fetched revision is in force, or none of it is.
async fn sync(
    repo: &ConfigRepo,
    repos: &Repos,
    previous: &ConfigRepoStatus,
) -> Result<Outcome, Error> {
    let (ctx, spec) = (&repos.ctx, &repo.spec);
    let inventory = previous.inventory.as_slice();
    let namespace = repo.namespace().unwrap_or_default();
    let public_only = match repos.setup.urls.check(&spec.url) {
        Ok(url::Source::Remote { public_only, .. }) => public_only,
        Ok(url::Source::Local(_)) => false,
        Err(e) => return Ok(fetch_failed(e.reason(), e.to_string())),
    };
    let credentials = match &spec.secret_ref {
        Some(r) => {
            let read = git_credentials::read(
                &ctx.client,
                &ctx.token_namespaces,
                (r.namespace_or(&namespace), &namespace),
                &r.name,
                &spec.url,
            );
            match read.await {
                Ok(c) => Some(c),
                Err(e) => return Ok(fetch_failed(e.reason(), e.to_string())),
            }
        }
        None => None,
    };
    let cache = repos
        .setup
        .options
        .config_repo_cache
        .join(repo.uid().unwrap_or_default());
    let (url, branch, path) = (spec.url.clone(), spec.branch.clone(), spec.path.clone());
    let applied = applied_commit(previous.last_applied_revision.as_deref(), &spec.branch);
    let previous_commit = applied.map(str::to_owned);
    let limits = repos.setup.options.limits();
    let fetched = tokio::task::spawn_blocking(move || {
        git::fetch(&git::FetchRequest {
            cache: &cache,
            url: &url,
            branch: &branch,
            path: &path,
            credentials: credentials.as_ref(),
            public_only,
            previous: previous_commit.as_deref(),
            limits: &limits,
        })
    })
    .await;
    let fetched = match fetched {
        Ok(Ok(f)) => f,
        Ok(Err(e)) => return Ok(fetch_failed(e.reason(), e.to_string())),
        Err(e) => return Ok(fetch_failed("FetchFailed", e.to_string())),
    };
    let revision = revision(&spec.branch, &fetched.commit);
    if !fetched.fast_forward && repo.annotations().get(CONFIRM_REWRITE) != Some(&revision) {
        return Ok(Outcome::Rewritten {
            revision,
            applied: previous.last_applied_revision.clone().unwrap_or_default(),
        });
    }
    let name = repo.name_any();
    let live = repo_objects::live(&ctx.client, &namespace).await?;
    let demoted = demotion::keys(&previous.demoted, &live, inventory);
    let source = Source {
        repo: &name,
        proposer: match &spec.service_account_name {
            Some(account) => format!("system:serviceaccount:{namespace}:{account}"),
            None => format!("configrepo:{name}"),
        },
        governs: super::authority::governs(ctx, repo).await?,
        demoted,
    };
    let mut documents = match documents::parse(&fetched.files, &namespace, &source) {
        Ok(d) => d,
        Err(refusals) => {
            return Ok(Outcome::Refused {
                revision,
                reason: "InvalidDocument",
                refusals,
            });
        }
    };
    documents::keep_lineages(&mut documents, &live);
    let gitea_repository = repos
        .setup
        .gitea
        .as_ref()
        .and_then(|f| Some((f, gitea_repository(&spec.url, &f.url)?)));
    // A ServiceAccount applies what it may: the names of others are not its to write.
    if let (Some((forge, repository)), None) = (&gitea_repository, &spec.service_account_name) {
        let range = Range {
            revision: &revision,
            commit: &fetched.commit,
            since: crate::logic::config_repo::authorship::since(applied, fetched.fast_forward),
        };
        let attributed =
            authorship::attribute(forge, repository, range, &mut documents, inventory).await;
        if let Err(outcome) = attributed {
            return Ok(outcome);
        }
    }
    let policy = PrunePolicy {
        enabled: spec.prune,
        max_percent: spec.max_prune_percent,
        confirmed: repo.annotations().get(CONFIRM_PRUNE) == Some(&revision),
        baseline: previous.prune_baseline.map(|b| b as usize),
        pruned_since: previous.pruned_since_baseline as usize,
    };
    // Its own name marks what it made only where admission guards that annotation (and a
    // ServiceAccount's name could be on objects it made for others).
    let maker = (spec.service_account_name.is_none() && ctx.admission.verified().is_ok())
        .then(|| repo.creation_timestamp().map(|t| t.0))
        .flatten()
        .map(|since| Maker {
            proposer: &source.proposer,
            since,
        });
    let owner = Owner {
        repository: gitea_repository.as_ref().map(|(_, r)| r.as_str()),
        name: &name,
        branch: &spec.branch,
        maker,
    };
    let changes = match decide::decide(&documents, inventory, &live, &policy, &owner) {
        Ok(c) => c,
        Err(Stop::Guard(guard)) => return Ok(Outcome::Held { revision, guard }),
        Err(Stop::Conflicts(refusals)) => {
            return Ok(Outcome::Refused {
                revision,
                reason: "Conflict",
                refusals,
            });
        }
    };
    let writer = match &spec.service_account_name {
        Some(account) => impersonating(repos, &namespace, account)?,
        None => ctx.client.clone(),
    };
    let refusals = dry_run(&writer, &namespace, &changes.apply).await?;
    if !refusals.is_empty() {
        return Ok(Outcome::Refused {
            revision,
            reason: "DryRunFailed",
            refusals,
        });
    }
    let mut owned = Inventory::kept(&changes);
    let applied = apply_all(&writer, &namespace, &changes.apply, false).await;
    let mut failure = None;
    for (d, generation) in applied {
        match generation {
            Ok((generation, uid)) => owned.applied(d, generation, uid, &fetched.commit),
            Err(e) => failure = Some(inventory::apply_failed(d, &e)),
        }
    }
    if let Some(message) = failure {
        return Ok(Outcome::Interrupted {
            revision,
            message,
            inventory: owned.interrupted(inventory),
        });
    }
    let mut pruned = 0;
    for object in &changes.prune {
        if repo_objects::delete(&writer, &namespace, object).await? {
            pruned += 1;
        } else {
            // It changed since it was read: look again at the next sync.
            owned.put_off(object);
        }
    }
    if let Some(note) = inventory::note(&revision, &changes, pruned) {
        tracing::info!(configrepo = %repo.name_any(), %namespace, "{note}");
        ctx.events
            .publish(repo, false, "Synced", "Apply", note)
            .await;
    }
    Ok(Outcome::Applied {
        revision,
        inventory: owned.entries(),
        proposes_only: source.governs.err(),
        baseline: changes.baseline,
        demoted: demotion::still_declared(&source.demoted, &documents),
    })
}

/// Dry-runs every document; the API server's refusals, each with its file and line.
async fn dry_run(
    client: &kube::Client,
    namespace: &str,
    documents: &[&Document],
) -> Result<Vec<Refusal>, Error> {
    let answers = apply_all(client, namespace, documents, true).await;
    let mut refusals = Vec::new();
    for (d, answer) in answers {
        match answer {
            Ok(_) => {}
            // The document itself is refused (invalid, forbidden, conflicting): a person fixes it.
            Err(kube::Error::Api(e)) if inventory::refuses_document(e.code) => {
                refusals.push(inventory::dry_run_refusal(d, &e.message))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(refusals)
}

/// Applies (or dry-runs) `documents`, [`PARALLEL`] at a time; each with its answer, in order.
async fn apply_all<'a>(
    client: &kube::Client,
    namespace: &str,
    documents: &[&'a Document],
    dry_run: bool,
) -> Vec<(
    &'a Document,
    Result<(Option<i64>, Option<String>), kube::Error>,
)> {
    // The futures are built first: a closure inside the stream would not be Send for every
    // lifetime the controller needs.
    let calls: Vec<_> = documents
        .iter()
        .map(|d| async move { (*d, repo_objects::apply(client, namespace, d, dry_run).await) })
        .collect();
    stream::iter(calls).buffered(PARALLEL).collect().await
}
