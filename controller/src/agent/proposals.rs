//! Proposes learned rules to the config repository: a Candidate CategorizationRule of the
//! agent's namespace with enough confirmations and no correction becomes a pull request that
//! adds its file under the repository's `rules/`. Merging it is the blessing: the ConfigRepo
//! applies the rule as blessed by `configrepo:<name>`. What to propose, where and in which
//! words is decided in [`crate::logic::rule::proposal`]; the pull request is recorded in the
//! rule's status, so a rule is proposed once for what it says. Runs on the leader.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, ReflectHandle, Store};
use serde_json::json;

use super::AgentContext;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, Proposal};
use crate::gitea::{GiteaError, PullRequest};
use crate::k8s::status;
use crate::k8s::watches::Watches;
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::job::rules_report::proposal_words;
use crate::logic::rule::proposal;
use crate::metrics::ErrorLabels;

/// A proposal that could not be made; retried with backoff.
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
        "branch {branch} of {repository} holds something other than rule {rule}'s file alone: ledgerops does not propose what it did not write; delete the branch (closing its pull request) to let it propose the rule again"
    )]
    Foreign {
        rule: String,
        repository: String,
        branch: String,
    },
}

/// What proposals read from the shared watches, subscribed when the agent starts.
pub struct Watched {
    repos: Store<ConfigRepo>,
    repo_changes: ReflectHandle<ConfigRepo>,
    rules: Store<CategorizationRule>,
    rule_changes: ReflectHandle<CategorizationRule>,
}

impl Watched {
    pub fn subscribe(watches: &Watches) -> Self {
        Self {
            repos: watches.repos.store(),
            repo_changes: watches.repos.subscribe(),
            rules: watches.rules.store(),
            rule_changes: watches.rules.subscribe(),
        }
    }
}

struct Proposals {
    agent: Arc<AgentContext>,
    gitea_url: String,
    repos: Store<ConfigRepo>,
    rules: Store<CategorizationRule>,
}

/// Runs until shutdown. A ConfigRepo is looked at when it, or a rule of its namespace, changes.
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
    let controller = Controller::for_shared_stream(repo_changes, watched.repos.clone())
        .watches_shared_stream(rule_changes, move |rule| {
            repos
                .state()
                .iter()
                .filter(|r| r.namespace() == rule.namespace())
                .map(|r| ObjectRef::from_obj(r.as_ref()))
                .collect::<Vec<_>>()
        })
        .shutdown_on_signal();
    let proposals = Arc::new(Proposals {
        agent,
        gitea_url,
        repos: watched.repos,
        rules: watched.rules,
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, proposals)).await;
}

fn error_policy(repo: Arc<ConfigRepo>, error: &ProposalError, p: Arc<Proposals>) -> Action {
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
    let delay = p.agent.backoff(&format!("proposals/{}", repo.name_any()));
    tracing::warn!(configrepo = %repo.name_any(), %error, retry_in = ?delay, "proposing rules failed");
    Action::requeue(delay)
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
    let due: Vec<Arc<CategorizationRule>> = p
        .rules
        .state()
        .into_iter()
        .filter(|r| r.namespace().as_deref() == Some(namespace))
        .filter(|r| proposal::due(r, repo.spec.propose_rules_after))
        .collect();
    for rule in due {
        propose(&p, &repo, &target, &rule).await?;
    }
    p.agent.succeeded(&format!("proposals/{}", repo.name_any()));
    Ok(Action::await_change())
}

/// Opens the rule's pull request (or finds the one an interrupted attempt opened) and records
/// it in the rule's status.
async fn propose(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
) -> Result<(), ProposalError> {
    let name = rule.name_any();
    let key = proposal::key(&rule.spec);
    let branch = proposal::branch(&name, &key);
    let file = proposal::file(&repo.spec.path, &name);
    let yaml = proposal::manifest(rule).map_err(|source| ProposalError::Yaml {
        rule: name.clone(),
        source,
    })?;
    let base = &repo.spec.branch;
    let gitea = &p.agent.gitea;
    let now = Timestamp::now();
    let foreign = || ProposalError::Foreign {
        rule: name.clone(),
        repository: target.to_owned(),
        branch: branch.clone(),
    };
    let pr = match gitea.pull_request_between(target, base, &branch).await? {
        Some(pr) => pr,
        None => {
            let message = format!("Propose CategorizationRule {name}");
            let pushed = gitea
                .create_file_on_new_branch(target, &file, &yaml, &message, base, &branch)
                .await;
            match pushed {
                Ok(()) => {}
                // The branch is there already: an interrupted attempt's, if it holds the file.
                Err(GiteaError::Status { status, .. }) if matches!(status.as_u16(), 409 | 422) => {
                    let there = gitea.file_on_branch(target, &file, &branch).await?;
                    if there.as_deref() != Some(yaml.as_str()) {
                        return Err(foreign());
                    }
                }
                Err(e) => return Err(e.into()),
            }
            open(p, repo, target, rule, &branch, now).await?
        }
    };
    // Recorded only when the pull request changes just the file ledgerops wrote.
    let changed = gitea.pull_request_files(target, pr.number).await?;
    let there = gitea.file_on_branch(target, &file, &branch).await?;
    if !proposal::holds_only(&changed, &file, there.as_deref(), &yaml) {
        return Err(foreign());
    }
    let recorded = Proposal {
        repository: target.to_owned(),
        pull_request_url: pr.url.clone(),
        key,
        at: Time(now),
    };
    status::apply_as(
        p.agent.store.client(),
        rule,
        &json!({ "proposal": recorded }),
        status::PROPOSAL_FIELD_MANAGER,
        true,
    )
    .await?;
    tracing::info!(rule = %name, repository = %target, pull = %pr.url, "rule proposed");
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
