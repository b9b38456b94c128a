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

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, stream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, ReflectHandle, Store};
use serde_json::json;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use super::context::AgentContext;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, Proposal};
use crate::gitea::{GiteaError, PullRequest};
use crate::k8s::status;
use crate::k8s::watches::Watches;
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::config_repo::push::{self, Push};
use crate::logic::job::rules_report::proposal_words;
use crate::logic::rule::proposal;
use crate::logic::rule::vouch::{self, Foreign};
use crate::metrics::ErrorLabels;
use looks::Looks;
use vouching::{foreign_on, recheck, withdraw};

mod looks;
mod vouching;

/// How often the open pull requests are looked at again without a push.
const RESYNC: Duration = Duration::from_secs(300);

/// A proposal that could not be made; retried with backoff (a foreign branch: at the next
/// resync or push).
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    #[error(transparent)]
    Gitea(#[from] GiteaError),
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("writing rule {rule} as YAML: {source}")]
    Yaml {
        rule: String,
        source: serde_yaml::Error,
    },
    #[error(
        "branch {branch} of {repository} holds something other than rule {rule}'s file alone (found: {found}): ledgerops does not propose what it did not write; delete the branch (closing its pull request) to let it propose the rule again"
    )]
    Foreign {
        rule: String,
        repository: String,
        branch: String,
        found: String,
    },
}

/// What proposals read from the shared watches, subscribed when the agent starts, and the
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

struct Proposals {
    agent: Arc<AgentContext>,
    gitea_url: String,
    repos: Store<ConfigRepo>,
    rules: Store<CategorizationRule>,
    /// The recorded pull requests found closed (or not the bot's): never looked at again.
    settled: Mutex<HashSet<String>>,
    /// When each proposal's branch was last looked at, and the pushes to it.
    looks: Arc<Mutex<Looks>>,
    /// What was found on each span of commits looked at (by repository, the rule's file and
    /// key, first and last commit): a span never changes, so it is read once.
    seen: Mutex<HashMap<String, Vec<Foreign>>>,
}

/// Runs until shutdown. A ConfigRepo is looked at when it, or a rule of its namespace, changes,
/// when a proposal's branch of its repository is pushed to, and every [`RESYNC`].
pub async fn run(agent: Arc<AgentContext>, gitea_url: String, watched: Watched) {
    let namespace = agent.store.namespace().to_owned();
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
        .graceful_shutdown_on(agent.shutdown.requested());
    let proposals = Arc::new(Proposals {
        agent,
        gitea_url,
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
    let delay = p.agent.backoff(&format!("proposals/{}", repo.name_any()));
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
    p.agent
        .metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "RuleProposal",
            reason,
        })
        .inc();
}

async fn reconcile(repo: Arc<ConfigRepo>, p: Arc<Proposals>) -> Result<Action, ProposalError> {
    let namespace = p.agent.store.namespace();
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
            let target = gitea_repository(&r.spec.url, &p.gitea_url)
                .filter(|t| p.agent.repositories.allows(t));
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
    p.agent.succeeded(&format!("proposals/{}", repo.name_any()));
    Ok(Action::requeue(RESYNC))
}

/// What ledgerops proposes for a rule: the branch, the file and its content.
struct Ours {
    name: String,
    key: String,
    branch: String,
    file: String,
    yaml: String,
}

impl Ours {
    fn of(repo: &ConfigRepo, rule: &CategorizationRule) -> Result<Self, ProposalError> {
        let name = rule.name_any();
        let key = proposal::key(&rule.spec);
        let yaml = proposal::manifest(rule).map_err(|source| ProposalError::Yaml {
            rule: name.clone(),
            source,
        })?;
        Ok(Self {
            branch: proposal::branch(&name, &key),
            file: proposal::file(&repo.spec.path, &name),
            name,
            key,
            yaml,
        })
    }

    fn foreign(&self, target: &str, found: &[Foreign]) -> ProposalError {
        ProposalError::Foreign {
            rule: self.name.clone(),
            repository: target.to_owned(),
            branch: self.branch.clone(),
            found: vouch::named(found).join(", "),
        }
    }
}

/// Opens the rule's pull request (or finds the one an interrupted attempt opened) and records
/// it in the rule's status.
async fn propose(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
) -> Result<(), ProposalError> {
    let ours = Ours::of(repo, rule)?;
    let base = &repo.spec.branch;
    let gitea = &p.agent.gitea;
    let now = Timestamp::now();
    let open_already = gitea
        .open_pull_request_from(target, base, &ours.branch, &p.agent.bot)
        .await?;
    let pr = match open_already {
        // An interrupted attempt's: recorded only while its branch holds only ours.
        Some(pr) => {
            let found = foreign_on(p, target, base, &ours).await?;
            if !found.is_empty() {
                return withdraw(p, target, rule, &ours, &pr, &found, Time(now)).await;
            }
            pr
        }
        None => {
            let message = format!("Propose CategorizationRule {}", ours.name);
            let pushed = gitea
                .create_file_on_new_branch(
                    target,
                    &ours.file,
                    &ours.yaml,
                    &message,
                    base,
                    &ours.branch,
                )
                .await;
            match pushed {
                Ok(()) => {}
                // The branch is there already: an interrupted attempt's, or someone else's.
                Err(GiteaError::Status { status, .. }) if matches!(status.as_u16(), 409 | 422) => {}
                Err(e) => return Err(e.into()),
            }
            // The whole branch, before a pull request in ledgerops's words vouches for it.
            let found = foreign_on(p, target, base, &ours).await?;
            if !found.is_empty() {
                return Err(ours.foreign(target, &found));
            }
            open(p, repo, target, rule, &ours.branch, now).await?
        }
    };
    let recorded = Proposal {
        repository: target.to_owned(),
        pull_request_url: pr.url.clone(),
        key: ours.key,
        at: Time(now),
        withdrawn: None,
    };
    record(p, rule, &recorded).await?;
    tracing::info!(rule = %ours.name, repository = %target, pull = %pr.url, "rule proposed");
    Ok(())
}

/// Records `proposal` in the rule's status, unless the rule changed since it was read.
async fn record(
    p: &Proposals,
    rule: &CategorizationRule,
    proposal: &Proposal,
) -> Result<(), ProposalError> {
    status::apply_as(
        p.agent.store.client(),
        rule,
        &json!({ "proposal": proposal }),
        status::PROPOSAL_FIELD_MANAGER,
        true,
    )
    .await?;
    Ok(())
}

/// Opens the pull request of the rule's branch, in words that name the category.
async fn open(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
    branch: &str,
    now: Timestamp,
) -> Result<PullRequest, ProposalError> {
    let category = {
        let budget = &rule.spec.budget_ref.name;
        let slot = p
            .agent
            .budget_links
            .mirror(p.agent.store.namespace(), budget);
        let slot = slot.state.read().await;
        slot.mirror
            .categories
            .get(&rule.spec.category_id)
            .map(|c| c.name.clone())
    };
    let (title, body) = proposal_words(rule, &repo.name_any(), category.as_deref(), now);
    Ok(p.agent
        .gitea
        .create_pull_request(target, branch, &repo.spec.branch, &title, &body)
        .await?)
}
