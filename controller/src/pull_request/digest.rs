//! The morning queue of each Budget of the agent's namespace that asks for one
//! (`spec.approval.inbox.digestAt`): once a day one issue in its inbox repository lists what
//! waits, oldest first, assigned to the mapped logins who may approve; the previous digest is
//! closed. What and when are decided in [`crate::logic::approval::digest`]. The issue is the
//! record (its marker names the Budget and the day), so a restart never opens a second one.
//! Runs on the leader.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ReflectHandle, Store};

use super::context::Context;
use super::feedback::FeedbackError;
use super::inbox::authorized;
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::gitea::issues::IssueContent;
use crate::k8s::watches::{Listed, Watches};
use crate::logic::approval::digest::{self, Line};
use crate::logic::approval::inbox;
use crate::logic::job::report::is_waiting;

/// How far back the bot's issues are read to find the digests (and inbox issues) it opened.
const LOOK_BACK: SignedDuration = SignedDuration::from_hours(8 * 24);

struct Digest {
    ctx: Arc<Context>,
    requests: Store<ApprovalRequest>,
    repos: Store<ConfigRepo>,
    repos_listed: Listed,
    /// `namespace/budget/day` handled (opened, found, or nothing to say).
    done: Mutex<HashSet<String>>,
}

/// What the digest reads from the shared watches, subscribed when the controllers start.
pub struct Watched {
    budgets: Store<Budget>,
    changes: ReflectHandle<Budget>,
    requests: Store<ApprovalRequest>,
    repos: Store<ConfigRepo>,
    repos_listed: Listed,
}

impl Watched {
    pub fn subscribe(watches: &Watches) -> Self {
        Self {
            budgets: watches.budgets.store(),
            changes: watches.budgets.subscribe(),
            requests: watches.approvals.store(),
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
        .filter(move |b| futures::future::ready(b.namespace().as_deref() == Some(&namespace)));
    let controller = Controller::for_shared_stream(changes, watched.budgets)
        .graceful_shutdown_on(ctx.shutdown.requested());
    let digest = Arc::new(Digest {
        ctx,
        requests: watched.requests,
        repos: watched.repos,
        repos_listed: watched.repos_listed,
        done: Mutex::default(),
    });
    crate::reconcile::drain(controller.run(reconcile, error_policy, digest)).await;
}

fn error_policy(budget: Arc<Budget>, error: &FeedbackError, digest: Arc<Digest>) -> Action {
    let key = format!("digest/{}", budget.name_any());
    let delay = digest.ctx.failed("Digest", error.reason(), &key);
    tracing::warn!(budget = %budget.name_any(), %error, retry_in = ?delay, "opening the digest in Gitea failed");
    Action::requeue(delay)
}

async fn reconcile(budget: Arc<Budget>, digest: Arc<Digest>) -> Result<Action, FeedbackError> {
    let schedule = match digest::schedule(&budget.spec.approval.inbox) {
        Ok(Some(s)) => s,
        Ok(None) => return Ok(Action::await_change()),
        Err(why) => {
            tracing::warn!(budget = %budget.name_any(), %why, "no digest");
            return Ok(Action::await_change());
        }
    };
    let now = Timestamp::now();
    let until = schedule.next(now).duration_since(now);
    let next = Action::requeue(
        Duration::try_from(until.max(SignedDuration::ZERO)).unwrap_or_default()
            + Duration::from_secs(1),
    );
    let Some(day) = schedule.due(now) else {
        return Ok(next);
    };
    let (namespace, name) = (budget.namespace().unwrap_or_default(), budget.name_any());
    let key = format!("{namespace}/{name}/{day}");
    if digest.done.lock().expect("done lock").contains(&key) {
        return Ok(next);
    }
    digest.repos_listed.clone().wait().await;
    let ctx = &digest.ctx;
    let repo = {
        let repos = digest.repos.state();
        let repos: Vec<&ConfigRepo> = repos.iter().map(Arc::as_ref).collect();
        let at = (namespace.as_str(), name.as_str());
        inbox::repository(at, Some(&budget), &repos, &ctx.gitea_url, &ctx.repositories)
    };
    let Some(repo) = repo else {
        return Ok(next);
    };
    let requests = digest.requests.state();
    let waiting: Vec<&ApprovalRequest> = requests
        .iter()
        .map(Arc::as_ref)
        .filter(|r| r.namespace().as_deref() == Some(&namespace) && r.spec.budget_ref.name == name)
        .filter(|r| is_waiting(r) && inbox::subject_uid(r).is_some())
        .collect();
    let since = (now - LOOK_BACK).to_string();
    let issues = ctx.gitea.issues_by(&repo, &ctx.bot, &since, 20).await?;
    let ours = |i: &&crate::gitea::issues::Issue| i.author == ctx.bot;
    if !issues
        .iter()
        .filter(ours)
        .any(|i| digest::day_of(&i.body, &namespace, &name) == Some(day.as_str()))
    {
        let mut lines: Vec<Line> = waiting
            .iter()
            .map(|r| {
                let subject = inbox::subject_uid(r).unwrap_or_default();
                let found = issues
                    .iter()
                    .map(|i| (i.number, i.author.as_str(), i.body.as_str()));
                Line {
                    request: r,
                    issue: inbox::find(found, &ctx.bot, subject),
                }
            })
            .collect();
        let digits = {
            let slot = ctx.budget_links.mirror(&namespace, &name);
            slot.state.read().await.mirror.decimal_digits()
        };
        if let Some((title, body)) =
            digest::render((&namespace, &name), &day, &mut lines, digits, now)
        {
            let candidates = budget.spec.approval.gitea_user_map().into_iter().collect();
            let assignees = authorized(ctx, &namespace, candidates).await?;
            let content = IssueContent {
                title: &title,
                body: &body,
                open: true,
                assignees: &assignees,
            };
            let (number, assigned) = ctx.gitea.open_issue(&repo, &content).await?;
            tracing::info!(%repo, issue = number, budget = %name, %day, waiting = lines.len(), assigned, "digest opened");
        }
    }
    // Earlier digests of the Budget still open are closed: one queue at a time.
    for old in issues
        .iter()
        .filter(ours)
        .filter(|i| i.open && digest::day_of(&i.body, &namespace, &name).is_some_and(|d| d != day))
    {
        let content = IssueContent {
            title: &old.title,
            body: &old.body,
            open: false,
            assignees: &[],
        };
        ctx.gitea.edit_issue(&repo, old.number, &content).await?;
    }
    ctx.succeeded(&format!("digest/{name}"));
    digest.done.lock().expect("done lock").insert(key);
    Ok(next)
}
