//! Authorizing a job by asking Gitea, as the bot: is its repository allowed, does its comment
//! exist with the author, issue and text the job claims, and may that author write?
//!
//! An AgentJob and its status are claims anyone able to write them could have made, so this
//! runs twice: when a job is received (the reconciler), and again right before a command's
//! effects (the executor), so that a status written by someone else (a forged `Queued`,
//! `permission: admin`) can never skip it. Checking again costs two GETs per command; keeping
//! a proof in the status would need one the controller alone can produce, which a status is
//! not.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::context::AgentContext;
use super::store::Latest;
use crate::api::agent_job::{AgentJob, AgentJobSpec};
use crate::gitea::GiteaError;
use crate::logic::job::check::{BOUND, Next, after_failure};
use crate::logic::job::event::{EventKind, JobEvent, Refusal};
use crate::logic::job::state::WRITE_PERMISSIONS;
use crate::logic::job::trust::{Claim, comment_matches};

/// What authorization found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    /// The comment is authentic and its author may write.
    Authorized { permission: String },
    /// The comment is authentic; its author may not write.
    Denied { permission: String },
    /// The job must not run, for `error`.
    Refused { refusal: Refusal, error: String },
}

fn claim(spec: &AgentJobSpec) -> Claim<'_> {
    Claim {
        comment_id: spec.comment_id,
        issue_number: spec.issue_number,
        author: &spec.author,
        command: &spec.command,
        truncated_from: spec.truncated_from,
    }
}

/// Authorizes `job`, trying a failing Gitea call again within [`BOUND`]; every failure is kept
/// as the job's latest error, and the last one refuses the job. The same error again is not
/// written again (the state machine would keep it as it is), so a Gitea outage costs each
/// waiting job one status write, not one read per retry.
pub async fn authorize(ctx: &AgentContext, job: &AgentJob, latest: &Latest) -> Decided {
    let name = job.name_any();
    let mut attempt = 0;
    let mut first_failure = None;
    let mut recorded: Option<String> = None;
    loop {
        let e = match check_once(ctx, job).await {
            Ok(decided) => return decided,
            Err(e) => e,
        };
        attempt += 1;
        let now = Timestamp::now();
        let first = *first_failure.get_or_insert(now);
        let error = e.to_string();
        if recorded.as_ref() != Some(&error) && record_error(ctx, latest, &error).await {
            recorded = Some(error.clone());
        }
        match after_failure(BOUND, e.failure(), attempt, first, now) {
            Next::RetryIn(delay) => {
                tracing::warn!(job = %name, attempt, %error, retry_in = ?delay, "authorization check failed");
                tokio::time::sleep(delay).await;
            }
            Next::GiveUp => {
                let elapsed = Duration::try_from(now.duration_since(first)).unwrap_or_default();
                tracing::warn!(job = %name, attempt, %error, "authorization check given up");
                return Decided::Refused {
                    refusal: Refusal::PermissionCheckFailed,
                    error: format!(
                        "checking the comment and the permission of {} failed {attempt} time(s) over {}s; gave up so that later commands are not held: {error}. Give the bot admin rights on the repository and make sure Gitea answers, then send the command again.",
                        job.spec.author,
                        elapsed.as_secs()
                    ),
                };
            }
        }
    }
}

async fn check_once(ctx: &AgentContext, job: &AgentJob) -> Result<Decided, GiteaError> {
    let spec = &job.spec;
    let uid = job.uid().unwrap_or_default();
    if !ctx.repositories.allows(&spec.repository) {
        ctx.set_trusted(&uid, false);
        return Ok(Decided::Refused {
            refusal: Refusal::UntrustedRepository,
            error: format!(
                "repository {} is not on --gitea-repository: its comments are not obeyed",
                spec.repository
            ),
        });
    }
    let fetched = ctx
        .gitea
        .fetch_comment(&spec.repository, spec.comment_id)
        .await?;
    if let Err(error) = comment_matches(claim(spec), fetched.as_ref()) {
        ctx.set_trusted(&uid, false);
        return Ok(Decided::Refused {
            refusal: Refusal::UnverifiedComment,
            error,
        });
    }
    ctx.set_trusted(&uid, true);
    let permission = ctx.gitea.permission(&spec.repository, &spec.author).await?;
    Ok(if WRITE_PERMISSIONS.contains(&permission.as_str()) {
        Decided::Authorized { permission }
    } else {
        Decided::Denied { permission }
    })
}

/// Whether the bot may comment about `job`: only in reply to an authentic comment in an
/// allowed repository, so that a forged job never makes the bot write on an issue.
pub async fn comment_trusted(ctx: &AgentContext, job: &AgentJob) -> Result<bool, GiteaError> {
    let uid = job.uid().unwrap_or_default();
    if let Some(known) = ctx.trusted(&uid) {
        return Ok(known);
    }
    let spec = &job.spec;
    let trusted = ctx.repositories.allows(&spec.repository)
        && comment_matches(
            claim(spec),
            ctx.gitea
                .fetch_comment(&spec.repository, spec.comment_id)
                .await?
                .as_ref(),
        )
        .is_ok();
    ctx.set_trusted(&uid, trusted);
    Ok(trusted)
}

/// Keeps `error` as the job's latest error (best effort: the job may be gone); says whether it
/// is kept.
pub async fn record_error(ctx: &AgentContext, latest: &Latest, error: &str) -> bool {
    let event = JobEvent::new(
        "error",
        Timestamp::now(),
        EventKind::ErrorObserved {
            error: error.to_owned(),
        },
    );
    match ctx.store.evolve_latest(latest, &event).await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(job = latest.name(), error = %e, "could not record the latest error");
            false
        }
    }
}
