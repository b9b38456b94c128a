//! Running a parsed command, one file per command or family of commands; what they answer and
//! propose is rendered in `crate::logic::job`. Runs only after JobStarted is durable and is never
//! replayed, so its effects (a decision written, a branch and a pull request opened) happen at
//! most once.

mod approve_shown;
mod decide;
mod edits;
mod outcome;
mod plan_branch;
mod reporter;
mod rules;
mod status;
mod suggest;
mod undo;

pub use outcome::Outcome;
pub use reporter::Reporter;

use crate::agent::context::AgentContext;
use crate::api::agent_job::AgentJob;
use crate::logic::job::command::{Command, HELP};
use crate::logic::job::decision::Verdict;
use crate::logic::job::state::JobState;

/// Runs the job's command.
pub async fn run(
    ctx: &AgentContext,
    job: &AgentJob,
    state: &JobState,
    reporter: &Reporter<'_>,
) -> Outcome {
    let Some(command) = &state.command else {
        return Outcome::Failed("the job has no parsed command".into());
    };
    match command {
        Command::Help => Outcome::Completed(HELP.to_owned()),
        Command::Status => status::run(ctx).await,
        Command::Approve {
            request: Some(request),
            comment,
            except,
        } => {
            let verdict = Verdict::Approve(except);
            decide::run(ctx, job, request, verdict, comment.as_deref()).await
        }
        Command::Approve {
            request: None,
            comment,
            ..
        } => approve_shown::run(ctx, job, comment.as_deref()).await,
        Command::Reject { request, reason } => {
            decide::run(ctx, job, request, Verdict::Reject, Some(reason)).await
        }
        Command::Suggest { month } => suggest::run(ctx, job, month.as_deref(), reporter).await,
        Command::Undo { plan } => undo::run(ctx, job, plan, reporter).await,
        Command::Rules => rules::run(ctx).await,
    }
}
