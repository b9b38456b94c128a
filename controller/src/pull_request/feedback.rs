//! Reports what became of the plans a ConfigRepo applied back to the Gitea repository they came
//! from: a commit status per plan on the commit that applied it, and the preview of a plan that
//! waits for a person as one comment on the pull request merged as that commit (what to say is
//! decided in [`crate::logic::config_repo::feedback`]).
//!
//! Only for ConfigRepos of the agent's namespace whose URL is an allowed repository of the
//! configured Gitea: a ConfigRepo elsewhere cannot make the bot speak. Runs on the leader.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, ReflectHandle, Store};
use kube::{Api, ResourceExt};

use super::context::Context;
use crate::api::approval::{ApprovalRequest, SubjectKind};
use crate::api::config_repo::ConfigRepo;
use crate::api::plan::{CategorizationPlan, PlanPhase};
use crate::gitea::GiteaError;
use crate::k8s::watches::Watches;
use crate::logic::config_repo::RepoKind;
use crate::logic::config_repo::feedback::{self, CommitReport};
use crate::logic::job::report::is_waiting;
use crate::logic::plan::edit;

/// How often every plan's report is looked at again without a change (a status or comment
/// removed in Gitea is put back).
const RESYNC: Duration = Duration::from_secs(300);

/// A report that could not be made; retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error(transparent)]
    Gitea(#[from] GiteaError),
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

impl FeedbackError {
    /// The `reason` label of the error metric.
    pub fn reason(&self) -> &'static str {
        match self {
            FeedbackError::Gitea(_) => "Gitea",
            FeedbackError::Kube(_) => "KubeApi",
        }
    }
}

struct Feedback {
    ctx: Arc<Context>,
    plans: Store<CategorizationPlan>,
    /// What Gitea is known to show, so an unchanged plan costs no request: the commit status by
    /// repository, commit and context…
    statuses: Mutex<HashMap<String, CommitReport>>,
    /// …and the ApprovalRequests whose preview is on their pull request (or that have none).
    commented: Mutex<HashSet<String>>,
}

/// What the feedback reads from the shared watches, subscribed when the controllers start.
pub struct Watched {
    plans: Store<CategorizationPlan>,
    plan_changes: ReflectHandle<CategorizationPlan>,
    repos: Store<ConfigRepo>,
    repo_changes: ReflectHandle<ConfigRepo>,
}

impl Watched {
    pub fn subscribe(watches: &Watches) -> Self {
        Self {
            plans: watches.plans.store(),
            plan_changes: watches.plans.subscribe(),
            repos: watches.repos.store(),
            repo_changes: watches.repos.subscribe(),
        }
    }
}

/// Runs until shutdown.
pub async fn run(ctx: Arc<Context>, watched: Watched) {
    let namespace = ctx.namespace.clone();
    let here = {
        let namespace = namespace.clone();
        move |ns: Option<String>| futures::future::ready(ns.as_deref() == Some(&namespace))
    };
    let plan_changes = watched.plan_changes.filter({
        let here = here.clone();
        move |p| here(p.namespace())
    });
    let repo_changes = watched.repo_changes.filter(move |r| here(r.namespace()));
    let repos = watched.repos.clone();
    let controller = Controller::for_shared_stream(repo_changes, watched.repos)
        .watches_shared_stream(plan_changes, move |plan| applied_from(&repos, &plan))
        .graceful_shutdown_on(ctx.shutdown.requested());
    let feedback = Arc::new(Feedback {
        ctx,
        plans: watched.plans,
        statuses: Mutex::default(),
        commented: Mutex::default(),
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, feedback)).await;
}

/// The ConfigRepos whose inventory holds `plan`.
fn applied_from(
    repos: &Store<ConfigRepo>,
    plan: &CategorizationPlan,
) -> Vec<ObjectRef<ConfigRepo>> {
    let name = plan.name_any();
    repos
        .state()
        .iter()
        .filter(|r| r.namespace() == plan.namespace())
        .filter(|r| {
            r.status.as_ref().is_some_and(|s| {
                s.inventory
                    .iter()
                    .any(|e| e.kind == RepoKind::CategorizationPlan.as_str() && e.name == name)
            })
        })
        .map(|r| ObjectRef::from_obj(r.as_ref()))
        .collect()
}

fn error_policy(repo: Arc<ConfigRepo>, error: &FeedbackError, fb: Arc<Feedback>) -> Action {
    let key = format!("feedback/{}", repo.name_any());
    let delay = fb.ctx.failed("ConfigRepoFeedback", error.reason(), &key);
    tracing::warn!(configrepo = %repo.name_any(), %error, retry_in = ?delay, "reporting to Gitea failed");
    Action::requeue(delay)
}

async fn reconcile(repo: Arc<ConfigRepo>, fb: Arc<Feedback>) -> Result<Action, FeedbackError> {
    // The cache holds every namespace's ConfigRepos; only the agent's own speak through the bot.
    if repo.namespace().as_deref() != Some(fb.ctx.namespace.as_str()) {
        return Ok(Action::await_change());
    }
    let Some(target) = feedback::gitea_repository(&repo.spec.url, &fb.ctx.gitea_url)
        .filter(|r| fb.ctx.repositories.allows(r))
    else {
        return Ok(Action::await_change());
    };
    let namespace = repo.namespace().unwrap_or_default();
    let inventory = repo
        .status
        .as_ref()
        .map(|s| s.inventory.as_slice())
        .unwrap_or_default();
    for entry in inventory
        .iter()
        .filter(|e| e.kind == RepoKind::CategorizationPlan.as_str())
    {
        let Some(commit) = &entry.commit else {
            continue;
        };
        let Some(plan) = fb
            .plans
            .get(&ObjectRef::new(&entry.name).within(&namespace))
        else {
            continue;
        };
        report_status(&fb, &target, commit, &plan).await?;
        comment_preview(&fb, &target, commit, &plan).await?;
        comment_edits(&fb, &target, commit, &plan).await?;
    }
    fb.ctx.succeeded(&format!("feedback/{}", repo.name_any()));
    Ok(Action::requeue(RESYNC))
}

/// Sets the plan's commit status when Gitea does not show it yet.
async fn report_status(
    fb: &Feedback,
    repo: &str,
    commit: &str,
    plan: &CategorizationPlan,
) -> Result<(), FeedbackError> {
    let Some(report) = feedback::commit_report(plan) else {
        return Ok(());
    };
    let context = feedback::context(&plan.name_any());
    let key = format!("{repo}@{commit}#{context}");
    if fb.statuses.lock().expect("statuses lock").get(&key) == Some(&report) {
        return Ok(());
    }
    let gitea = &fb.ctx.gitea;
    let shown = gitea.commit_status(repo, commit, &context).await?;
    if !shown.is_some_and(|s| report.is_shown_by(&s.state, &s.description)) {
        gitea
            .set_commit_status(
                repo,
                commit,
                &context,
                report.state.as_str(),
                &report.description,
            )
            .await?;
        tracing::info!(%repo, %commit, %context, state = report.state.as_str(), "commit status set");
    }
    fb.statuses
        .lock()
        .expect("statuses lock")
        .insert(key, report);
    Ok(())
}

/// The pull request merged as `commit`, unless the comment `key` names was made already (or
/// there is none: pushed straight to the branch, there is no pull request to tell).
async fn uncommented_pull_request(
    fb: &Feedback,
    repo: &str,
    commit: &str,
    key: &str,
) -> Result<Option<i64>, FeedbackError> {
    if fb.commented.lock().expect("commented lock").contains(key) {
        return Ok(None);
    }
    let number = fb
        .ctx
        .gitea
        .merged_pull_request(repo, commit)
        .await?
        .map(|p| p.number);
    if number.is_none() {
        fb.commented
            .lock()
            .expect("commented lock")
            .insert(key.to_owned());
    }
    Ok(number)
}

/// Comments the preview of the plan's waiting ApprovalRequest on the pull request merged as
/// `commit`, once per request.
async fn comment_preview(
    fb: &Feedback,
    repo: &str,
    commit: &str,
    plan: &CategorizationPlan,
) -> Result<(), FeedbackError> {
    let status = plan.status.clone().unwrap_or_default();
    let (Some(PlanPhase::AwaitingApproval), Some(request)) =
        (status.phase, status.approval_request.as_deref())
    else {
        return Ok(());
    };
    let key = format!("{repo}@{commit}#{request}");
    let Some(number) = uncommented_pull_request(fb, repo, commit, &key).await? else {
        return Ok(());
    };
    let gitea = &fb.ctx.gitea;
    let api: Api<ApprovalRequest> = Api::namespaced(fb.ctx.client.clone(), &fb.ctx.namespace);
    // Only what the controller opened for this plan, and only while someone can still decide.
    let Some(r) = api.get_opt(request).await? else {
        return Ok(());
    };
    let about_plan = r.spec.subject.kind == SubjectKind::CategorizationPlan
        && r.spec.subject.name == plan.name_any();
    if !about_plan || !is_waiting(&r) {
        return Ok(());
    }
    let comments = gitea.list_comments(repo, number).await?;
    if !feedback::is_shown(&comments, &fb.ctx.bot, request) {
        let body = feedback::preview_comment(&plan.name_any(), &r, commit);
        gitea.create_comment(repo, number, &body).await?;
        tracing::info!(%repo, pull = number, %request, "preview commented on the pull request");
    }
    fb.commented.lock().expect("commented lock").insert(key);
    Ok(())
}

/// Tells the pull request merged as `commit` what the approver changed in the plan before
/// approving it, once per request.
async fn comment_edits(
    fb: &Feedback,
    repo: &str,
    commit: &str,
    plan: &CategorizationPlan,
) -> Result<(), FeedbackError> {
    let Some((request, decision)) = feedback::edited(plan) else {
        return Ok(());
    };
    let key = format!("{repo}@{commit}#edits#{request}");
    let Some(number) = uncommented_pull_request(fb, repo, commit, &key).await? else {
        return Ok(());
    };
    let gitea = &fb.ctx.gitea;
    let comments = gitea.list_comments(repo, number).await?;
    if !feedback::edits_shown(&comments, &fb.ctx.bot, request) {
        let edits = decision.edits.clone().unwrap_or_default();
        let summary = {
            let namespace = plan.namespace().unwrap_or_default();
            let slot = fb
                .ctx
                .budget_links
                .mirror(&namespace, &plan.spec.budget_ref.name);
            let slot = slot.state.read().await;
            edit::summary(&edits, |id| slot.mirror.category_name(id))
        };
        let body = feedback::edits_comment(&plan.name_any(), request, decision, &summary);
        gitea.create_comment(repo, number, &body).await?;
        tracing::info!(%repo, pull = number, %request, "approver's edits commented on the pull request");
    }
    fb.commented.lock().expect("commented lock").insert(key);
    Ok(())
}
