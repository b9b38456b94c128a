//! The AgentJob reconciler: authorizes a Received job (allowed repository, authentic comment,
//! write permission; see [`super::verify`]), wakes the executor for a Queued one, and keeps the
//! one status comment showing the state, only for a job whose comment is authentic; removes what
//! a job that failed or was refused left in Gitea (see [`super::cleanup`]). Errors are
//! kept as the job's latest error. A job just stored has no status: it is Received, and that is
//! persisted with its check's outcome (or first error), one status write for both.
//!
//! kube's controller never reconciles one object twice at the same time, so the comment's
//! search-create-link section runs once per job at a time: two comments cannot race into being.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::ReflectHandle;

use super::cleanup::clean_up;
use super::context::AgentContext;
use super::error::AgentError;
use super::hooks::Point;
use super::store::Latest;
use super::verify::{self, Decided};
use crate::api::agent_job::{AgentJob, JobPhase};
use crate::logic::job::cleanup;
use crate::logic::job::event::{EventKind, JobEvent};
use crate::logic::job::persisted::from_persisted;
use crate::logic::job::render::{self, canonical_comment, pending_publication};
use crate::logic::job::state::{JobState, is_terminal};
use crate::logic::runtime::retention::{self, Retention};
use crate::metrics::{ErrorLabels, Measure};

/// Subscribes to the AgentJob watch at once (every change, its own status writes too); the
/// returned future runs the controller until shutdown.
pub fn run(ctx: Arc<AgentContext>, jobs: ReflectHandle<AgentJob>) -> impl Future<Output = ()> {
    let controller = Controller::for_shared_stream(jobs, ctx.jobs.clone())
        .with_config(Config::default().concurrency(crate::reconcile::CONCURRENCY))
        .graceful_shutdown_on(ctx.shutdown.requested());
    crate::reconcile::drain(controller.run(reconcile, error_policy, ctx))
}

async fn reconcile(job: Arc<AgentJob>, ctx: Arc<AgentContext>) -> Result<Action, AgentError> {
    let _measure = Measure::start(&ctx.metrics, "AgentJob");
    let result = reconcile_job(&job, &ctx).await;
    if let Err(e) = &result {
        verify::record_error(&ctx, &Latest::named(&job.name_any()), &e.to_string()).await;
    }
    result
}

async fn reconcile_job(job: &Arc<AgentJob>, ctx: &Arc<AgentContext>) -> Result<Action, AgentError> {
    let name = job.name_any();
    let mut state = from_persisted(&job.spec, job.status.as_ref(), job.metadata.generation);
    // This reconcile's status writes start from the watch's copy, then from what they wrote.
    let latest = Latest::seen(job);
    match state.phase {
        JobPhase::Received => state = authorize(job, &latest, &state, ctx).await?,
        JobPhase::Queued => ctx.wake.notify_one(),
        _ => {}
    }
    if state.phase == JobPhase::Queued {
        ctx.wake.notify_one();
    }
    // Before the comment, so that the comment says what became of the branch.
    if let Some(branch) = cleanup::needed(&name, &state) {
        let branch = branch.to_owned();
        state = clean_up(job, &latest, &branch, ctx).await?;
    }
    if verify::comment_trusted(ctx, job).await? {
        reconcile_comment(job, &latest, &state, ctx).await?;
    }
    ctx.succeeded(&name);
    // Only once its comment shows how it ended.
    let kept = retention::agent_job(
        state.phase,
        state.finished_at,
        state.received_at,
        ctx.job_retention,
        Timestamp::now(),
    );
    Ok(match kept {
        Retention::Delete => {
            ctx.store.retire(job).await?;
            ctx.forget(&name, job.uid().as_deref().unwrap_or_default());
            tracing::info!(job = %name, "finished job deleted after its retention");
            Action::await_change()
        }
        Retention::LookAgainIn(left) => Action::requeue(left.min(ctx.comment_resync)),
        Retention::Keep => Action::requeue(Duration::from_secs(60)),
    })
}

/// Authorizes the job through Gitea, as the bot, and records the answer. The answer's event id
/// is fixed, so a retried check after an uncertain write never applies a second outcome.
async fn authorize(
    job: &AgentJob,
    latest: &Latest,
    state: &JobState,
    ctx: &AgentContext,
) -> Result<JobState, AgentError> {
    let name = job.name_any();
    ctx.hooks
        .pause(Point::Authorize, &name, &job.spec.command)
        .await;
    let (id, kind) = match verify::authorize(ctx, job, latest).await {
        Decided::Authorized { permission } => {
            ("permission", EventKind::PermissionGranted { permission })
        }
        Decided::Denied { permission } => {
            ("permission", EventKind::PermissionDenied { permission })
        }
        Decided::Refused { refusal, error } => (
            "authorization",
            EventKind::AuthorizationFailed { refusal, error },
        ),
    };
    tracing::info!(job = %name, sequence = state.sequence, outcome = kind.name(), "authorized");
    let event = JobEvent::new(id, Timestamp::now(), kind);
    let state = ctx.store.evolve_latest(latest, &event).await?.state;
    // A job that ended here may have been the FIFO's barrier.
    ctx.wake.notify_one();
    Ok(state)
}

/// Makes the one status comment show `state`.
async fn reconcile_comment(
    job: &AgentJob,
    latest: &Latest,
    state: &JobState,
    ctx: &AgentContext,
) -> Result<(), AgentError> {
    let name = job.name_any();
    let (body, hash) = match pending_publication(&name, state) {
        Some(p) => p,
        None => {
            // A finished job's comment may have been deleted since: recreate it.
            if let (true, Some(id)) = (is_terminal(state.phase), state.status_comment_id) {
                match ctx.gitea.get_comment(&job.spec.repository, id).await {
                    Ok(_) => return Ok(()),
                    Err(e) if e.is_not_found() => {
                        tracing::info!(job = %name, comment = id, "status comment deleted; recreating");
                    }
                    Err(e) => return Err(e.into()),
                }
                let body = render::render_comment(&name, state).unwrap_or_default();
                let hash = render::body_hash(&body);
                let id = publish(job, None, &body, ctx).await?;
                link(latest, id, hash, ctx).await?;
            }
            return Ok(());
        }
    };
    let id = publish(job, state.status_comment_id, &body, ctx).await?;
    link(latest, id, hash, ctx).await
}

async fn link(
    latest: &Latest,
    id: i64,
    hash: String,
    ctx: &AgentContext,
) -> Result<(), AgentError> {
    let event = JobEvent::new(
        format!("comment:{id}:{hash}"),
        Timestamp::now(),
        EventKind::CommentLinked {
            comment_id: id,
            body_hash: hash,
        },
    );
    ctx.store.evolve_latest(latest, &event).await?;
    Ok(())
}

/// Writes `body` into the job's comment: the linked one if it still exists, else the bot's
/// marked comment on the issue (lowest id), else a new one. Returns the comment's id.
async fn publish(
    job: &AgentJob,
    linked: Option<i64>,
    body: &str,
    ctx: &AgentContext,
) -> Result<i64, AgentError> {
    let repo = &job.spec.repository;
    if let Some(id) = linked {
        match ctx.gitea.edit_comment(repo, id, body).await {
            Ok(()) => return Ok(id),
            Err(e) if e.is_not_found() => {
                tracing::info!(job = %job.name_any(), comment = id, "status comment deleted; relinking");
            }
            Err(e) => return Err(e.into()),
        }
    }
    let comments = ctx.gitea.list_comments(repo, job.spec.issue_number).await?;
    if let Some(id) = canonical_comment(&comments, &ctx.bot, &job.name_any()) {
        let current = comments
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.body.as_str());
        if current != Some(body) {
            ctx.gitea.edit_comment(repo, id, body).await?;
        }
        return Ok(id);
    }
    Ok(ctx
        .gitea
        .create_comment(repo, job.spec.issue_number, body)
        .await?)
}

fn error_policy(job: Arc<AgentJob>, error: &AgentError, ctx: Arc<AgentContext>) -> Action {
    ctx.metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "AgentJob",
            reason: error.reason(),
        })
        .inc();
    let delay = ctx.backoff(&job.name_any());
    tracing::warn!(job = %job.name_any(), %error, retry_in = ?delay, "AgentJob reconcile failed");
    Action::requeue(delay)
}
