//! Proposes learned rules to the config repository: a Candidate CategorizationRule of the
//! agent's namespace with enough confirmations and no correction becomes a pull request that
//! adds its file under the repository's `rules/`. Merging it is the blessing: the ConfigRepo
//! applies the rule as blessed by `configrepo:<name>`. What to propose, where and in which
//! words is decided in [`crate::logic::rule::proposal`]; the pull request is recorded in the
//! rule's status, so a rule is proposed once for what it says. Runs on the leader.
//!
//! Anyone who can push can push to a proposal's branch, so ledgerops vouches only for a branch
//! that holds just its manifest ([`crate::logic::rule::vouch`]): looked at before its pull
//! request is opened, and again at every push to a proposal's branch and every resync while the
//! pull request is open. One found holding more is closed, saying what was found, and the rule
//! no longer counts as proposed.

use std::sync::{Arc, Mutex};

use futures::{StreamExt, stream};
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, ReflectHandle, Store};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use super::context::Context;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::CategorizationRule;
use crate::k8s::watches::Watches;
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::config_repo::push::{self, Push};
use crate::logic::rule::proposal;
use crate::metrics::ErrorLabels;
use error::ProposalError;
use looks::Looks;
use propose::propose;
use state::{Proposals, RESYNC};
use vouching::recheck;

mod error;
mod looks;
mod ours;
mod propose;
mod state;
mod vouching;

/// What proposals read from the shared watches, subscribed when the controllers start, and the
/// webhook's pushes.
pub struct Watched {
    repos: Store<ConfigRepo>,
    repo_changes: ReflectHandle<ConfigRepo>,
    rules: Store<CategorizationRule>,
    rule_changes: ReflectHandle<CategorizationRule>,
    pushes: broadcast::Receiver<Push>,
}

impl Watched {
    pub fn subscribe(watches: &Watches, pushes: broadcast::Receiver<Push>) -> Self {
        Self {
            repos: watches.repos.store(),
            repo_changes: watches.repos.subscribe(),
            rules: watches.rules.store(),
            rule_changes: watches.rules.subscribe(),
            pushes,
        }
    }
}

/// Runs until shutdown. A ConfigRepo is looked at when it, or a rule of its namespace, changes,
/// when a proposal's branch of its repository is pushed to, and every [`RESYNC`].
pub async fn run(ctx: Arc<Context>, watched: Watched) {
    let namespace = ctx.namespace.clone();
    let here = {
        let namespace = namespace.clone();
        move |ns: Option<String>| futures::future::ready(ns.as_deref() == Some(&namespace))
    };
    let rule_changes = watched.rule_changes.filter({
        let here = here.clone();
        move |r| here(r.namespace())
    });
    let repo_changes = watched.repo_changes.filter(move |r| here(r.namespace()));
    let repos = watched.repos.clone();
    let pushed_to = watched.repos.clone();
    let looks: Arc<Mutex<Looks>> = Arc::default();
    let pushes = looks.clone();
    let pushed = BroadcastStream::new(watched.pushes)
        .filter_map(|p| futures::future::ready(p.ok()))
        .flat_map(move |p| {
            if let Some(branch) = push::pushed_branch(&p) {
                pushes.lock().expect("looks lock").pushed(branch);
            }
            stream::iter(proposal_pushed(&pushed_to, &namespace, &p))
        });
    let controller = Controller::for_shared_stream(repo_changes, watched.repos.clone())
        .watches_shared_stream(rule_changes, move |rule| {
            repos
                .state()
                .iter()
                .filter(|r| r.namespace() == rule.namespace())
                .map(|r| ObjectRef::from_obj(r.as_ref()))
                .collect::<Vec<_>>()
        })
        .reconcile_on(pushed)
        .graceful_shutdown_on(ctx.shutdown.requested());
    let proposals = Arc::new(Proposals {
        ctx,
        repos: watched.repos,
        rules: watched.rules,
        settled: Mutex::default(),
        looks,
        seen: Mutex::default(),
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, proposals)).await;
}

/// The ConfigRepos of `namespace` whose repository `push` went to, when it moved a proposal's
/// branch.
fn proposal_pushed(
    repos: &Store<ConfigRepo>,
    namespace: &str,
    push: &Push,
) -> Vec<ObjectRef<ConfigRepo>> {
    if !push::pushed_branch(push).is_some_and(proposal::is_branch) {
        return Vec::new();
    }
    repos
        .state()
        .iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace))
        .filter(|r| push::to_repository(push, &r.spec.url))
        .map(|r| ObjectRef::from_obj(r.as_ref()))
        .collect()
}

fn error_policy(repo: Arc<ConfigRepo>, error: &ProposalError, p: Arc<Proposals>) -> Action {
    count(&p, error);
    let delay = p.ctx.backoff(&format!("proposals/{}", repo.name_any()));
    tracing::warn!(configrepo = %repo.name_any(), %error, retry_in = ?delay, "proposing rules failed");
    Action::requeue(delay)
}

fn count(p: &Proposals, error: &ProposalError) {
    let reason = match error {
        ProposalError::Gitea(_) => "Gitea",
        ProposalError::Kube(_) => "KubeApi",
        ProposalError::Yaml { .. } => "Yaml",
        ProposalError::Foreign { .. } => "ForeignBranch",
    };
    p.ctx
        .metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "RuleProposal",
            reason,
        })
        .inc();
}

async fn reconcile(repo: Arc<ConfigRepo>, p: Arc<Proposals>) -> Result<Action, ProposalError> {
    let namespace = p.ctx.namespace.as_str();
    if repo.namespace().as_deref() != Some(namespace) {
        return Ok(Action::await_change());
    }
    let repos: Vec<Arc<ConfigRepo>> = p
        .repos
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace))
        .collect();
    let targets: Vec<(&ConfigRepo, Option<String>)> = repos
        .iter()
        .map(|r| {
            let target = gitea_repository(&r.spec.url, &p.ctx.gitea_url)
                .filter(|t| p.ctx.repositories.allows(t));
            (r.as_ref(), target)
        })
        .collect();
    // One repository of the namespace proposes; the others leave it to that one.
    let Some((proposer, target)) = proposal::proposer(&targets) else {
        return Ok(Action::await_change());
    };
    if proposer.name_any() != repo.name_any() {
        return Ok(Action::await_change());
    }
    let rules: Vec<Arc<CategorizationRule>> = p
        .rules
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace))
        .collect();
    for rule in &rules {
        if let Some(recorded) = proposal::watched(rule, &target) {
            recheck(&p, &repo, &target, rule, recorded).await?;
        }
    }
    for rule in rules
        .iter()
        .filter(|r| proposal::due(r, repo.spec.propose_rules_after))
    {
        match propose(&p, &repo, &target, rule).await {
            // Left to whoever pushed it, without holding up the other rules; looked at again at
            // the next resync or push.
            Err(error @ ProposalError::Foreign { .. }) => {
                count(&p, &error);
                tracing::warn!(configrepo = %repo.name_any(), %error, "not proposing a rule");
            }
            done => done?,
        }
    }
    p.ctx.succeeded(&format!("proposals/{}", repo.name_any()));
    Ok(Action::requeue(RESYNC))
}
