//! The job's one status comment: its body, the hidden marker that finds it again, and which of
//! several marked comments is the real one. Every piece of text that did not come from
//! ledgerops itself (the command line, the author, a stage or an error that may hold names) is
//! escaped (see [`super::escape`]); a command's own result is Markdown ledgerops built, with its
//! untrusted parts escaped where it was built.

use sha2::{Digest, Sha256};

use super::escape;
use super::state::JobState;
use crate::api::agent_job::JobPhase;

/// The hidden marker of `job`'s status comment. It is a correlation id, not a proof: anyone can
/// copy it, so only comments by the bot count (see [`canonical_comment`]).
pub fn marker(job: &str) -> String {
    format!("<!-- ledgerops:agentjob:{job} -->")
}

/// The status comment for `state`, or None while the job is only received (the first comment
/// appears once permission is decided).
pub fn render_comment(job: &str, state: &JobState) -> Option<String> {
    let head = format!(
        "**{}** from {}",
        quote_command(&state.text),
        escape::mention(&state.author)
    );
    let body = match state.phase {
        JobPhase::Received => return None,
        JobPhase::Queued => format!(
            "{head}: queued as #{}, waiting for its turn.",
            state.sequence
        ),
        JobPhase::Running => format!("{head}: running ({}).", escape::text(&state.stage)),
        JobPhase::Succeeded => format!(
            "{head}: done.\n\n{}",
            state.result.as_deref().unwrap_or_default()
        ),
        JobPhase::Rejected => {
            let error = state.error.as_deref().unwrap_or_default();
            // These messages are ledgerops' own Markdown with the user's parts escaped; the
            // others (Gitea's answers, names from a claim) are shown as literal text.
            let error = if MARKDOWN_REASONS.contains(&state.reason.as_str()) {
                error.to_owned()
            } else {
                escape::block(error)
            };
            format!(
                "{head}: rejected ({}).\n\n{error}{}",
                escape::text(&state.reason),
                left_behind(state)
            )
        }
        JobPhase::Failed => format!(
            "{head}: failed ({}).\n\n{}{}",
            escape::text(&state.reason),
            escape::block(state.error.as_deref().unwrap_or_default()),
            left_behind(state)
        ),
    };
    Some(format!("{}\n{body}", marker(job)))
}

/// What a job that did not succeed left in Gitea: its cleanup's note (ledgerops' Markdown,
/// names in code spans), or until then the branch and pull request it made.
fn left_behind(state: &JobState) -> String {
    if let Some(note) = &state.cleanup {
        return format!("\n\n{note}");
    }
    let mut text = String::new();
    if let Some(branch) = &state.branch {
        text.push_str(&format!(
            "\n\nIt had created the branch {}.",
            escape::code(branch)
        ));
    }
    if let Some(url) = &state.pull_request_url {
        text.push_str(&format!("\n\nIt had opened {}.", escape::code(url)));
    }
    text
}

/// Rejection reasons whose message is ledgerops' Markdown (user parts escaped when built).
const MARKDOWN_REASONS: &[&str] = &["InvalidCommand", "PermissionDenied", "PreconditionFailed"];

/// The first line of the command, short, as a code span: it is untrusted text.
fn quote_command(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    escape::code(&super::state::truncate(line, 80))
}

/// A short stable hash of a comment body.
pub fn body_hash(body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    hex::encode(&digest[..12])
}

/// The body to publish when the comment does not show `state` yet.
pub fn pending_publication(job: &str, state: &JobState) -> Option<(String, String)> {
    let body = render_comment(job, state)?;
    let hash = body_hash(&body);
    (state.comment_hash.as_deref() != Some(hash.as_str())).then_some((body, hash))
}

/// A comment on the issue, as far as finding the status comment is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueComment {
    pub id: i64,
    pub author: String,
    pub body: String,
}

/// Whether `body` is a status comment of `job`: its first line is exactly the marker (every
/// status comment starts so; the marker quoted anywhere else does not count).
pub fn is_status_comment(body: &str, job: &str) -> bool {
    body.lines().next().map(str::trim_end) == Some(marker(job).as_str())
}

/// The status comment of `job` among `comments`: one that starts with the marker and was
/// written by `bot`. Among several, the lowest id wins; copies by anyone else are ignored.
pub fn canonical_comment(comments: &[IssueComment], bot: &str, job: &str) -> Option<i64> {
    comments
        .iter()
        .filter(|c| c.author.eq_ignore_ascii_case(bot) && is_status_comment(&c.body, job))
        .map(|c| c.id)
        .min()
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
