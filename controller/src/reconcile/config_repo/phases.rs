//! One sync of a ConfigRepo, in ordered phases: credentials, fetch, parse (with authorship),
//! decide, dry run, apply, prune. Each phase either hands the next what it needs or stops the
//! sync with the outcome its status records; everything of the revision is in force, or none
//! of it is.

use futures::{StreamExt, stream};
use kube::ResourceExt;

use super::{Repos, impersonating};
use crate::api::config_repo::{ConfigRepo, ConfigRepoStatus};
use crate::git::{self, Fetched};
use crate::k8s::{git_credentials, repo_objects};
use crate::logic::config_repo::decide::{self, Changes, PrunePolicy, Stop};
use crate::logic::config_repo::demotion;
use crate::logic::config_repo::documents::{self, Document, Refusal, Source};
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::config_repo::inventory::{self, Inventory};
use crate::logic::config_repo::ownership::{Maker, Owner};
use crate::logic::config_repo::status::Outcome;
use crate::logic::config_repo::url;
use crate::logic::config_repo::{CONFIRM_PRUNE, CONFIRM_REWRITE, Live, applied_commit, revision};
use crate::logic::values::git_credentials::Credentials;
use crate::reconcile::Error;
use crate::reconcile::authorship::{self, Forge, Range};

/// How many documents are dry-run or applied at once.
const PARALLEL: usize = 8;

/// Why a phase stopped the sync: an outcome its status records, or an error the reconcile is
/// retried for.
enum Halt {
    Outcome(Outcome),
    Error(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Error(e)
    }
}

impl From<kube::Error> for Halt {
    fn from(e: kube::Error) -> Self {
        Halt::Error(e.into())
    }
}

fn fetch_failed(reason: &'static str, message: String) -> Halt {
    Halt::Outcome(Outcome::FetchFailed { reason, message })
}

/// The revision fetched, as the phases after the fetch see it.
struct Fetch {
    fetched: Fetched,
    revision: String,
}

/// One sync: everything of the fetched revision is in force, or none of it is.
pub(super) async fn sync(
    repo: &ConfigRepo,
    repos: &Repos,
    previous: &ConfigRepoStatus,
) -> Result<Outcome, Error> {
    match phases(repo, repos, previous).await {
        Ok(outcome) | Err(Halt::Outcome(outcome)) => Ok(outcome),
        Err(Halt::Error(e)) => Err(e),
    }
}

async fn phases(
    repo: &ConfigRepo,
    repos: &Repos,
    previous: &ConfigRepoStatus,
) -> Result<Outcome, Halt> {
    let (public_only, credentials) = credentials(repo, repos).await?;
    let fetch = fetch(repo, repos, previous, public_only, credentials).await?;
    let namespace = repo.namespace().unwrap_or_default();
    let live = repo_objects::live(&repos.ctx.client, &namespace).await?;
    let (documents, source, forge) = parse(repo, repos, previous, &fetch, &live).await?;
    let owner = owner(repo, repos, &source, forge.as_ref());
    let changes = decide(repo, previous, &fetch, (&documents, &live), &owner)?;
    let writer = match &repo.spec.service_account_name {
        Some(account) => impersonating(repos, &namespace, account)?,
        None => repos.ctx.client.clone(),
    };
    dry_run(&writer, &namespace, &changes.apply, &fetch.revision).await?;
    let mut owned = apply(&writer, &namespace, &changes, previous, &fetch).await?;
    let pruned = prune(&writer, &namespace, &changes, &mut owned).await?;
    if let Some(note) = inventory::note(&fetch.revision, &changes, pruned) {
        tracing::info!(configrepo = %repo.name_any(), %namespace, "{note}");
        let events = &repos.ctx.events;
        events.publish(repo, false, "Synced", "Apply", note).await;
    }
    Ok(Outcome::Applied {
        revision: fetch.revision,
        inventory: owned.entries(),
        proposes_only: source.governs.err(),
        baseline: changes.baseline,
        demoted: demotion::still_declared(&source.demoted, &documents),
    })
}

/// Credentials: whether the URL may be fetched (and only publicly), and the Git credentials its
/// Secret holds, if it names one.
async fn credentials(
    repo: &ConfigRepo,
    repos: &Repos,
) -> Result<(bool, Option<Credentials>), Halt> {
    let (ctx, spec) = (&repos.ctx, &repo.spec);
    let namespace = repo.namespace().unwrap_or_default();
    let public_only = match repos.setup.urls.check(&spec.url) {
        Ok(url::Source::Remote { public_only, .. }) => public_only,
        Ok(url::Source::Local(_)) => false,
        Err(e) => return Err(fetch_failed(e.reason(), e.to_string())),
    };
    let Some(r) = &spec.secret_ref else {
        return Ok((public_only, None));
    };
    let read = git_credentials::read(
        &ctx.client,
        &ctx.token_namespaces,
        (r.namespace_or(&namespace), &namespace),
        &r.name,
        &spec.url,
    );
    match read.await {
        Ok(c) => Ok((public_only, Some(c))),
        Err(e) => Err(fetch_failed(e.reason(), e.to_string())),
    }
}

/// Fetch: the branch's revision, refused when it rewrote the applied history unless a person
/// confirmed that revision.
async fn fetch(
    repo: &ConfigRepo,
    repos: &Repos,
    previous: &ConfigRepoStatus,
    public_only: bool,
    credentials: Option<Credentials>,
) -> Result<Fetch, Halt> {
    let spec = &repo.spec;
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
        Ok(Err(e)) => return Err(fetch_failed(e.reason(), e.to_string())),
        Err(e) => return Err(fetch_failed("FetchFailed", e.to_string())),
    };
    let revision = revision(&spec.branch, &fetched.commit);
    if !fetched.fast_forward && repo.annotations().get(CONFIRM_REWRITE) != Some(&revision) {
        return Err(Halt::Outcome(Outcome::Rewritten {
            revision,
            applied: previous.last_applied_revision.clone().unwrap_or_default(),
        }));
    }
    Ok(Fetch { fetched, revision })
}

/// Parse: the revision's documents, with the lineage of the objects they keep and the Gitea
/// authors of what changed; the source they come from; and the Gitea repository it follows.
async fn parse<'r>(
    repo: &'r ConfigRepo,
    repos: &'r Repos,
    previous: &ConfigRepoStatus,
    fetch: &Fetch,
    live: &[Live],
) -> Result<(Vec<Document>, Source<'r>, Option<(&'r Forge, String)>), Halt> {
    let (ctx, spec) = (&repos.ctx, &repo.spec);
    let namespace = repo.namespace().unwrap_or_default();
    let name = repo.metadata.name.as_deref().unwrap_or_default();
    let inventory = previous.inventory.as_slice();
    let source = Source {
        repo: name,
        proposer: match &spec.service_account_name {
            Some(account) => format!("system:serviceaccount:{namespace}:{account}"),
            None => format!("configrepo:{name}"),
        },
        governs: crate::reconcile::authority::governs(ctx, repo).await?,
        demoted: demotion::keys(&previous.demoted, live, inventory),
    };
    let revision = &fetch.revision;
    let mut documents =
        documents::parse(&fetch.fetched.files, &namespace, &source).map_err(|refusals| {
            Halt::Outcome(Outcome::Refused {
                revision: revision.clone(),
                reason: "InvalidDocument",
                refusals,
            })
        })?;
    documents::keep_lineages(&mut documents, live);
    let forge = repos
        .setup
        .gitea
        .as_ref()
        .and_then(|f| Some((f, gitea_repository(&spec.url, &f.url)?)));
    // A ServiceAccount applies what it may: the names of others are not its to write.
    if let (Some((forge, repository)), None) = (&forge, &spec.service_account_name) {
        let applied = applied_commit(previous.last_applied_revision.as_deref(), &spec.branch);
        let fast_forward = fetch.fetched.fast_forward;
        let range = Range {
            revision,
            commit: &fetch.fetched.commit,
            since: crate::logic::config_repo::authorship::since(applied, fast_forward),
        };
        authorship::attribute(forge, repository, range, &mut documents, inventory)
            .await
            .map_err(Halt::Outcome)?;
    }
    Ok((documents, source, forge))
}

/// Who the ConfigRepo is, to tell its objects from others': its Gitea repository, name and
/// branch, and its own name on what it made where admission guards that annotation (a
/// ServiceAccount's name could be on objects it made for others).
fn owner<'a>(
    repo: &'a ConfigRepo,
    repos: &Repos,
    source: &'a Source<'_>,
    forge: Option<&'a (&Forge, String)>,
) -> Owner<'a> {
    let spec = &repo.spec;
    let maker = (spec.service_account_name.is_none() && repos.ctx.admission.verified().is_ok())
        .then(|| repo.creation_timestamp().map(|t| t.0))
        .flatten()
        .map(|since| Maker {
            proposer: &source.proposer,
            since,
        });
    Owner {
        repository: forge.map(|(_, r)| r.as_str()),
        name: repo.metadata.name.as_deref().unwrap_or_default(),
        branch: &spec.branch,
        maker,
    }
}

/// Decide: what the revision applies, keeps and prunes, held when it would prune too much and
/// refused when it claims someone else's object.
fn decide<'d>(
    repo: &ConfigRepo,
    previous: &ConfigRepoStatus,
    fetch: &Fetch,
    (documents, live): (&'d [Document], &[Live]),
    owner: &Owner<'_>,
) -> Result<Changes<'d>, Halt> {
    let spec = &repo.spec;
    let revision = fetch.revision.clone();
    let policy = PrunePolicy {
        enabled: spec.prune,
        max_percent: spec.max_prune_percent,
        confirmed: repo.annotations().get(CONFIRM_PRUNE) == Some(&fetch.revision),
        baseline: previous.prune_baseline.map(|b| b as usize),
        pruned_since: previous.pruned_since_baseline as usize,
    };
    let inventory = previous.inventory.as_slice();
    decide::decide(documents, inventory, live, &policy, owner).map_err(|stop| {
        Halt::Outcome(match stop {
            Stop::Guard(guard) => Outcome::Held { revision, guard },
            Stop::Conflicts(refusals) => Outcome::Refused {
                revision,
                reason: "Conflict",
                refusals,
            },
        })
    })
}

/// Dry run: every document the revision applies, refused as a whole if the API server refuses
/// one (each refusal with its file and line).
async fn dry_run(
    client: &kube::Client,
    namespace: &str,
    documents: &[&Document],
    revision: &str,
) -> Result<(), Halt> {
    let answers = apply_all(client, namespace, documents, true).await;
    let mut refusals: Vec<Refusal> = Vec::new();
    for (d, answer) in answers {
        match answer {
            Ok(_) => {}
            // The document itself is refused (invalid, forbidden, conflicting): a person fixes it.
            Err(kube::Error::Api(e)) if inventory::refuses_document(e.code) => {
                refusals.push(inventory::dry_run_refusal(d, &e.message));
            }
            Err(e) => return Err(e.into()),
        }
    }
    if refusals.is_empty() {
        return Ok(());
    }
    Err(Halt::Outcome(Outcome::Refused {
        revision: revision.to_owned(),
        reason: "DryRunFailed",
        refusals,
    }))
}

/// Apply: every document of the revision; the inventory of what is in force after it, or the
/// interruption when one failed.
async fn apply(
    writer: &kube::Client,
    namespace: &str,
    changes: &Changes<'_>,
    previous: &ConfigRepoStatus,
    fetch: &Fetch,
) -> Result<Inventory, Halt> {
    let mut owned = Inventory::kept(changes);
    let applied = apply_all(writer, namespace, &changes.apply, false).await;
    let mut failure = None;
    for (d, generation) in applied {
        match generation {
            Ok((generation, uid)) => owned.applied(d, generation, uid, &fetch.fetched.commit),
            Err(e) => failure = Some(inventory::apply_failed(d, &e)),
        }
    }
    match failure {
        None => Ok(owned),
        Some(message) => Err(Halt::Outcome(Outcome::Interrupted {
            revision: fetch.revision.clone(),
            message,
            inventory: owned.interrupted(&previous.inventory),
        })),
    }
}

/// Prune: what the repository no longer declares; one changed since it was read is put off to
/// the next sync. Returns how many were deleted.
async fn prune(
    writer: &kube::Client,
    namespace: &str,
    changes: &Changes<'_>,
    owned: &mut Inventory,
) -> Result<usize, Halt> {
    let mut pruned = 0;
    for object in &changes.prune {
        if repo_objects::delete(writer, namespace, object).await? {
            pruned += 1;
        } else {
            owned.put_off(object);
        }
    }
    Ok(pruned)
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
