//! Removing what a job that failed or was refused left in Gitea: the pull request the bot opened
//! from the job's branch (found by its head, so one opened just before a crash, and never
//! recorded, is found too) and the branch, when the bot alone committed to it. The decision is
//! [`crate::logic::job::cleanup::plan`]; the outcome is recorded once, with a fixed event id.

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::context::AgentContext;
use super::error::AgentError;
use super::store::Latest;
use crate::api::agent_job::AgentJob;
use crate::logic::job::cleanup::{self, Found};
use crate::logic::job::event::{EventKind, JobEvent};
use crate::logic::job::state::JobState;

/// Cleans up `branch` of `job`, records what was done, and returns the job's new state.
pub async fn clean_up(
    job: &AgentJob,
    latest: &Latest,
    branch: &str,
    ctx: &AgentContext,
) -> Result<JobState, AgentError> {
    let repo = &job.spec.repository;
    // The pull request went into the default branch when it was opened.
    let base = ctx.gitea.default_branch(repo).await?;
    let pull_request = ctx
        .gitea
        .open_pull_request_from(repo, &base, branch, &ctx.bot)
        .await?
        .map(|pr| (pr.number, pr.url));
    let found = Found {
        pull_request,
        commit_authors: ctx.gitea.branch_authors(repo, &base, branch).await?,
    };
    let plan = cleanup::plan(branch, &ctx.bot, &found);
    if let Some(number) = plan.close_pull_request {
        ctx.gitea.close_pull_request(repo, number).await?;
    }
    // Gitea deletes unconditionally: a push landing between the read and here is lost with
    // the branch (its pusher still has it), a window of one request.
    if plan.delete_branch {
        ctx.gitea.delete_branch(repo, branch).await?;
    }
    tracing::info!(job = %job.name_any(), %branch, note = %plan.note, "cleaned up after the job");
    let event = JobEvent::new(
        "cleanup",
        Timestamp::now(),
        EventKind::CleanedUp { note: plan.note },
    );
    Ok(ctx.store.evolve_latest(latest, &event).await?.state)
}
