//! Tells a person in Gitea when an ApprovalRequest of the agent's namespace expired unanswered:
//! one comment, mentioning its `escalateTo` logins, on the pull request that brought what it
//! asked about, else on the config repository's tracking issue (what and where are decided in
//! [`crate::logic::approval::escalation`]). The comment is its own record: before commenting, the bot
//! looks for its marked comment, so a restart never comments twice. Runs on the leader.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ReflectHandle, Store};

use super::context::Context;
use super::feedback::FeedbackError;
use crate::api::approval::ApprovalRequest;
use crate::api::config_repo::ConfigRepo;
use crate::k8s::watches::{Listed, Watches};
use crate::logic::approval::escalation::{self, Target};
use crate::metrics::ErrorLabels;

struct Escalation {
    ctx: Arc<Context>,
    requests: Store<ApprovalRequest>,
    repos: Store<ConfigRepo>,
    repos_listed: Listed,
    /// Requests (by uid) whose comment Gitea is known to show, so that a request's later
    /// changes cost no request to Gitea.
    announced: Mutex<HashSet<String>>,
    /// One announcement at a time: two expiring together open one tracking issue, not two.
    turn: tokio::sync::Mutex<()>,
}

/// What the escalation reads from the shared watches, subscribed when the controllers start.
pub struct Watched {
    requests: Store<ApprovalRequest>,
    changes: ReflectHandle<ApprovalRequest>,
    repos: Store<ConfigRepo>,
    repos_listed: Listed,
}

impl Watched {
    pub fn subscribe(watches: &Watches) -> Self {
        Self {
            requests: watches.approvals.store(),
            changes: watches.approvals.subscribe(),
            repos: watches.repos.store(),
            repos_listed: watches.repos.listed(),
        }
    }
}

/// Runs until shutdown.
pub async fn run(ctx: Arc<Context>, watched: Watched) {
    let namespace = ctx.namespace.clone();
    let changes = watched
        .changes
        .filter(move |r| futures::future::ready(r.namespace().as_deref() == Some(&namespace)));
    let controller = Controller::for_shared_stream(changes, watched.requests.clone())
        .graceful_shutdown_on(ctx.shutdown.requested());
    let escalation = Arc::new(Escalation {
        ctx,
        requests: watched.requests,
        repos: watched.repos,
        repos_listed: watched.repos_listed,
        announced: Mutex::default(),
        turn: tokio::sync::Mutex::default(),
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, escalation)).await;
}

fn error_policy(
    request: Arc<ApprovalRequest>,
    error: &FeedbackError,
    esc: Arc<Escalation>,
) -> Action {
    let reason = match error {
        FeedbackError::Gitea(_) => "Gitea",
        FeedbackError::Kube(_) => "KubeApi",
    };
    esc.ctx
        .metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "Escalation",
            reason,
        })
        .inc();
    let delay = esc
        .ctx
        .backoff(&format!("escalation/{}", request.name_any()));
    tracing::warn!(request = %request.name_any(), %error, retry_in = ?delay, "telling Gitea of an expired request failed");
    Action::requeue(delay)
}

async fn reconcile(
    request: Arc<ApprovalRequest>,
    esc: Arc<Escalation>,
) -> Result<Action, FeedbackError> {
    let uid = request.uid().unwrap_or_default();
    let known = esc.announced.lock().expect("announced lock").contains(&uid);
    if known || !escalation::due(&request, Timestamp::now()) {
        return Ok(Action::await_change());
    }
    // Where it goes depends on what the ConfigRepos declare: not decided on an empty cache.
    esc.repos_listed.clone().wait().await;
    let repos = esc.repos.state();
    let repos: Vec<&ConfigRepo> = repos.iter().map(Arc::as_ref).collect();
    let ctx = &esc.ctx;
    let Some(target) = escalation::target(&request, &repos, &ctx.gitea_url, &ctx.repositories)
    else {
        // No repository to tell: the Escalated Event is all there is.
        return Ok(Action::await_change());
    };
    let _turn = esc.turn.lock().await;
    let (repo, number) = conversation(ctx, target).await?;
    let comments = ctx.gitea.list_comments(&repo, number).await?;
    if !escalation::is_announced(&comments, &ctx.bot, &uid) {
        let body = escalation::comment(&request);
        ctx.gitea.create_comment(&repo, number, &body).await?;
        tracing::info!(request = %request.name_any(), %repo, issue = number, "expired request announced in Gitea");
    } else {
        tracing::debug!(request = %request.name_any(), %repo, issue = number, "expired request already announced in Gitea");
    }
    ctx.succeeded(&format!("escalation/{}", request.name_any()));
    remember(&esc, uid);
    Ok(Action::await_change())
}

/// The repository and the number of the pull request or issue to comment on: the tracking issue
/// is opened when the bot has none open.
async fn conversation(ctx: &Context, target: Target) -> Result<(String, i64), FeedbackError> {
    let repo = match target {
        Target::PullRequestOf { repo, commit } => {
            match ctx.gitea.merged_pull_request(&repo, &commit).await? {
                Some(pull) => return Ok((repo, pull.number)),
                // Pushed straight to the branch: no pull request to tell on.
                None => repo,
            }
        }
        Target::TrackingIssue { repo } => repo,
    };
    let open = ctx.gitea.open_issues_by(&repo, &ctx.bot).await?;
    // The oldest of the bot's: a second one opened by hand is not followed.
    let tracking = open
        .iter()
        .filter(|i| escalation::is_tracking_issue(&i.author, &i.body, &ctx.bot))
        .map(|i| i.number)
        .min();
    let number = match tracking {
        Some(number) => number,
        None => {
            let number = ctx
                .gitea
                .create_issue(
                    &repo,
                    escalation::TRACKING_TITLE,
                    &escalation::tracking_body(),
                )
                .await?;
            tracing::info!(%repo, issue = number, "opened the issue for expired requests");
            number
        }
    };
    Ok((repo, number))
}

/// Remembers that Gitea shows `uid`'s comment, forgetting deleted requests once they could
/// outnumber the living ones.
fn remember(esc: &Escalation, uid: String) {
    let mut announced = esc.announced.lock().expect("announced lock");
    announced.insert(uid);
    if announced.len() > 2 * esc.requests.len() + 64 {
        let living: HashSet<String> = esc
            .requests
            .state()
            .iter()
            .filter_map(|r| r.uid())
            .collect();
        announced.retain(|uid| living.contains(uid));
    }
}
