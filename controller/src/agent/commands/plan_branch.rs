//! What `suggest` and `undo` share: committing a plan's file on the job's own branch and opening
//! its pull request, each recorded as soon as it exists, so that a job that fails afterwards is
//! cleaned up (see [`crate::agent::cleanup`]).

use kube::ResourceExt;

use super::outcome::Outcome;
use super::reporter::Reporter;
use crate::agent::context::AgentContext;
use crate::agent::hooks::Point;
use crate::api::agent_job::AgentJob;
use crate::logic::job::cleanup;
use crate::logic::job::event::EventKind;

/// Commits `yaml` as `file` on the job's new branch and opens a pull request; records both as
/// soon as they exist. Returns the pull request's URL.
pub(super) async fn open_pull_request(
    ctx: &AgentContext,
    job: &AgentJob,
    reporter: &Reporter<'_>,
    file: &str,
    yaml: &str,
    title: &str,
    body: &str,
) -> Result<String, Outcome> {
    let repo = &job.spec.repository;
    let branch = cleanup::branch_of(&job.name_any());
    let base = ctx
        .gitea
        .default_branch(repo)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    reporter
        .record(
            "branch".into(),
            EventKind::BranchCreated {
                branch: branch.clone(),
            },
        )
        .await
        .map_err(Outcome::Failed)?;
    let _ = reporter.progress("writing the plan to a branch").await;
    ctx.gitea
        .create_file_on_new_branch(repo, file, yaml, title, &base, &branch)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    let _ = reporter.progress("opening the pull request").await;
    let pr = ctx
        .gitea
        .create_pull_request(repo, &branch, &base, title, body)
        .await
        .map_err(|e| Outcome::Failed(e.to_string()))?;
    ctx.hooks
        .pause(
            Point::PullRequestUnrecorded,
            &job.name_any(),
            &job.spec.command,
        )
        .await;
    reporter
        .record(
            "pull-request".into(),
            EventKind::PullRequestOpened {
                url: pr.url.clone(),
            },
        )
        .await
        .map_err(Outcome::Failed)?;
    Ok(pr.url)
}
