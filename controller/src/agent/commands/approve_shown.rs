//! `/agent approve` without a name, on a pull request a ConfigRepo applied: approves the previews
//! the bot commented there before the command (see
//! [`crate::logic::config_repo::feedback::shown_before`]), each only while its ApprovalRequest is
//! still about that plan and that exact preview. A preview that changed since it was shown is
//! not approved: the person saw something else.

use kube::Api;

use super::decide;
use super::outcome::{Outcome, kube_failed};
use crate::agent::context::AgentContext;
use crate::api::agent_job::{AgentJob, CommentEvent};
use crate::api::approval::ApprovalRequest;
use crate::logic::config_repo::feedback::{Shown, shown_before, still_holds};
use crate::logic::job::decision::{self, Verdict};

pub(super) async fn run(ctx: &AgentContext, job: &AgentJob, comment: Option<&str>) -> Outcome {
    if job.spec.event != CommentEvent::PullRequestComment {
        return Outcome::Rejected(decision::NOT_ON_A_PULL_REQUEST.into());
    }
    let (repo, number) = (&job.spec.repository, job.spec.issue_number);
    let comments = match ctx.gitea.list_comments(repo, number).await {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("reading the pull request's comments: {e}")),
    };
    let shown = shown_before(&comments, &ctx.bot, job.spec.comment_id);
    if shown.is_empty() {
        return Outcome::Rejected(decision::NOTHING_SHOWN.into());
    }
    let api: Api<ApprovalRequest> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let mut approved = Vec::new();
    let mut refused = Vec::new();
    for s in &shown {
        match still_shown(&api, s).await {
            Ok(None) => {
                match decide::run(ctx, job, &s.request, Verdict::Approve(&[]), comment).await {
                    Outcome::Completed(text) => approved.push(text),
                    Outcome::Rejected(text) => refused.push(text),
                    failed @ Outcome::Failed(_) => return failed,
                }
            }
            Ok(Some(why)) => refused.push(why),
            Err(e) => return kube_failed("reading the ApprovalRequest", e),
        }
    }
    let text = decision::shown_answer(&approved, &refused);
    if approved.is_empty() {
        Outcome::Rejected(text)
    } else {
        Outcome::Completed(text)
    }
}

/// None when the ApprovalRequest the bot showed is still about that plan and that preview;
/// otherwise why it is not approved.
async fn still_shown(
    api: &Api<ApprovalRequest>,
    shown: &Shown,
) -> Result<Option<String>, kube::Error> {
    let Some(r) = api.get_opt(&shown.request).await? else {
        return Ok(Some(decision::shown_gone(&shown.request)));
    };
    Ok((!still_holds(shown, &r)).then(|| decision::shown_changed(&shown.request)))
}
