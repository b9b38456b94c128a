//! `/agent approve` without a name, on a pull request a ConfigRepo applied: approves the previews
//! the bot commented there before the command (see
//! [`crate::logic::config_repo::feedback::shown_before`]), each only while its ApprovalRequest is
//! still about that plan and that exact preview. A preview that changed since it was shown is
//! not approved: the person saw something else.

use kube::Api;

use super::commands::{Outcome, Verdict, decide, kube_failed};
use super::context::AgentContext;
use crate::api::agent_job::{AgentJob, CommentEvent};
use crate::api::approval::ApprovalRequest;
use crate::logic::config_repo::feedback::{Shown, shown_before, still_holds};
use crate::logic::job::report::cell_code;

pub async fn run(ctx: &AgentContext, job: &AgentJob, comment: Option<&str>) -> Outcome {
    if job.spec.event != CommentEvent::PullRequestComment {
        return Outcome::Rejected(
            "`/agent approve` without a name answers the preview ledgerops commented on a pull request; here, name the ApprovalRequest: `/agent approve <approvalrequest>`".into(),
        );
    }
    let (repo, number) = (&job.spec.repository, job.spec.issue_number);
    let comments = match ctx.gitea.list_comments(repo, number).await {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("reading the pull request's comments: {e}")),
    };
    let shown = shown_before(&comments, &ctx.bot, job.spec.comment_id);
    if shown.is_empty() {
        return Outcome::Rejected(
            "ledgerops showed no preview on this pull request before your command, so there is nothing it could approve; wait for the preview comment, then answer it".into(),
        );
    }
    let api: Api<ApprovalRequest> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let mut approved = Vec::new();
    let mut refused = Vec::new();
    for s in &shown {
        match still_shown(&api, s).await {
            Ok(None) => match decide(ctx, job, &s.request, Verdict::Approve(&[]), comment).await {
                Outcome::Completed(text) => approved.push(text),
                Outcome::Rejected(text) => refused.push(text),
                failed @ Outcome::Failed(_) => return failed,
            },
            Ok(Some(why)) => refused.push(why),
            Err(e) => return kube_failed("reading the ApprovalRequest", e),
        }
    }
    let text = approved
        .iter()
        .chain(&refused)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n\n");
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
    let request = cell_code(&shown.request);
    let Some(r) = api.get_opt(&shown.request).await? else {
        return Ok(Some(format!(
            "{request} is gone (the plan changed or was decided); a new preview is commented when there is one"
        )));
    };
    Ok((!still_holds(shown, &r)).then(|| {
        format!("{request} no longer holds the preview shown here; approve the newer preview")
    }))
}
