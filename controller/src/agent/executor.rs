//! The executor: one job at a time, strictly in receive order.
//!
//! At startup every job still Running was cut off by the previous process: it gets
//! ServiceRestarted (failed, Interrupted) and is never run again. A job is executed only after
//! JobStarted is durable; a crash between choosing it and that write leaves it Queued, so it
//! runs after the restart, exactly once.
//!
//! Right before a command's effects the job is authorized again through Gitea (see
//! [`super::verify`]): a Queued status proves nothing, anyone allowed to write it could have.
//! A job found Running while the executor runs nothing (cut off, or a status written by
//! someone else) is failed as interrupted instead of holding every later job.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::commands::{self, Outcome, Reporter};
use super::context::AgentContext;
use super::error::StoreError;
use super::hooks::Point;
use super::store::Latest;
use super::verify::{self, Decided};
use crate::api::agent_job::JobPhase;
use crate::backoff;
use crate::logic::job::event::{EventKind, JobEvent, Refusal};
use crate::logic::job::order::{Next, next_job};
use crate::logic::job::persisted::from_persisted;
use crate::logic::job::state::permission_message;

/// How long the executor sleeps when nothing wakes it.
const POLL: Duration = Duration::from_secs(2);

pub async fn run(ctx: Arc<AgentContext>) {
    ctx.jobs_listed.clone().wait().await;
    recover(&ctx).await;
    // What was done last: the cache may not show its outcome yet, and must not make the
    // executor act on the same job again before it does.
    let mut done: Option<Next> = None;
    loop {
        let next = pick(&ctx);
        if done.as_ref() == Some(&next) {
            done = None;
            idle(&ctx).await;
            continue;
        }
        match &next {
            Next::Execute(name) => execute(&ctx, name).await,
            Next::Orphaned(name) => interrupt(&ctx, name).await,
            Next::Wait(_) | Next::Idle => {
                idle(&ctx).await;
                continue;
            }
            Next::Creating(_) => {
                tokio::select! {
                    () = ctx.store.group_seen() => {}
                    () = idle(&ctx) => {}
                }
                continue;
            }
        }
        done = Some(next);
    }
}

/// Until a job changes (or `POLL`, as a safety net).
async fn idle(ctx: &AgentContext) {
    let _ = tokio::time::timeout(POLL, ctx.wake.notified()).await;
}

/// Fails every job the previous process left Running.
async fn recover(ctx: &AgentContext) {
    let mut delays = backoff::retries();
    loop {
        match recover_once(ctx).await {
            Ok(n) => {
                if n > 0 {
                    tracing::warn!(jobs = n, "failed jobs interrupted by a restart");
                }
                return;
            }
            Err(e) => {
                let delay = backoff::next(&mut delays);
                tracing::warn!(error = %e, retry_in = ?delay, "startup recovery failed");
                tokio::time::sleep(delay).await;
            }
        }
    }
}

async fn recover_once(ctx: &AgentContext) -> Result<usize, StoreError> {
    let mut n = 0;
    // The cache, once listed, holds what the previous process left.
    for job in ctx.jobs.state() {
        if job.status.as_ref().and_then(|s| s.phase) == Some(JobPhase::Running) {
            let event = JobEvent::new(
                "service-restarted",
                Timestamp::now(),
                EventKind::ServiceRestarted,
            );
            if ctx.store.evolve(&job.name_any(), &event).await?.applied {
                n += 1;
            }
        }
    }
    Ok(n)
}

async fn interrupt(ctx: &AgentContext, name: &str) {
    tracing::warn!(
        job = name,
        "Running, but not run by this executor: failing it as interrupted"
    );
    let event = JobEvent::new(
        "service-restarted",
        Timestamp::now(),
        EventKind::ServiceRestarted,
    );
    if let Err(e) = ctx.store.evolve(name, &event).await {
        tracing::warn!(job = name, error = %e, "could not fail an orphaned job");
        tokio::time::sleep(POLL).await;
    }
}

/// From the cache: what is picked is read again from the API server before it is acted on.
fn pick(ctx: &AgentContext) -> Next {
    let jobs = ctx.jobs.state();
    let list: Vec<_> = jobs
        .iter()
        .map(|j| {
            (
                j.spec.sequence,
                j.status.as_ref().and_then(|s| s.phase),
                j.name_any(),
            )
        })
        .collect();
    next_job(&list, ctx.store.unseen_from())
}

async fn execute(ctx: &AgentContext, name: &str) {
    let Ok(job) = ctx.store.api().get(name).await else {
        return;
    };
    let command_text = job.spec.command.clone();
    ctx.hooks
        .pause(Point::BeforeClaim, name, &command_text)
        .await;
    let state = from_persisted(&job.spec, job.status.as_ref(), job.metadata.generation);
    if state.phase != JobPhase::Queued {
        return;
    }
    tracing::info!(job = name, sequence = state.sequence, "claimed");
    ctx.hooks
        .pause(Point::AfterClaim, name, &command_text)
        .await;
    let started = JobEvent::new("started", Timestamp::now(), EventKind::JobStarted);
    // The run's status writes start from the job as read, then from what they wrote.
    let latest = Latest::seen(&job);
    let state = match ctx.store.evolve_latest(&latest, &started).await {
        Ok(e) if e.applied => e.state,
        Ok(_) => return,
        Err(e) => {
            // Still Queued: it is picked again.
            tracing::warn!(job = name, error = %e, "could not record JobStarted");
            tokio::time::sleep(Duration::from_secs(1)).await;
            return;
        }
    };
    tracing::info!(job = name, sequence = state.sequence, "started");
    ctx.hooks
        .pause(Point::AfterJobStarted, name, &command_text)
        .await;
    let (id, kind) = match verify::authorize(ctx, &job, &latest).await {
        Decided::Authorized { .. } => {
            let reporter = Reporter::new(ctx, &latest);
            match commands::run(ctx, &job, &state, &reporter).await {
                Outcome::Completed(result) => ("completed", EventKind::JobCompleted { result }),
                Outcome::Rejected(reason) => ("rejected", EventKind::JobRejected { reason }),
                Outcome::Failed(error) => ("failed", EventKind::JobFailed { error }),
            }
        }
        Decided::Denied { permission } => (
            "authorization",
            EventKind::AuthorizationFailed {
                refusal: Refusal::PermissionDenied,
                error: permission_message(&job.spec.author, &permission),
            },
        ),
        Decided::Refused { refusal, error } => (
            "authorization",
            EventKind::AuthorizationFailed { refusal, error },
        ),
    };
    let event = JobEvent::new(id, Timestamp::now(), kind);
    // The outcome must be recorded; retry until it is (the id keeps it from applying twice).
    let mut delays = backoff::retries();
    loop {
        match ctx.store.evolve_latest(&latest, &event).await {
            Ok(_) => break,
            Err(StoreError::Invalid(e)) => {
                tracing::error!(job = name, error = %e, "outcome not applicable");
                break;
            }
            Err(e) => {
                let delay = backoff::next(&mut delays);
                tracing::warn!(job = name, error = %e, retry_in = ?delay, "could not record the outcome");
                tokio::time::sleep(delay).await;
            }
        }
    }
    tracing::info!(job = name, outcome = id, "finished");
}
