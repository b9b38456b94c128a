//! Telling a person in Gitea that an ApprovalRequest expired unanswered: when, what the bot
//! comments on the request's inbox issue (mentioning each `escalateTo` login, so that Gitea
//! notifies them), and how it finds its own comment again, so that it comments once however
//! often it restarts. The comment is the record: its hidden marker, as the whole first line of
//! one of the bot's comments, says it was made.

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use crate::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind};
use crate::logic::job::escape;
use crate::logic::job::render::IssueComment;
use crate::logic::job::report::{cell, cell_code};

/// Escalations older than this are not announced: a controller that was down longer, or one
/// upgraded to announce them, does not flood Gitea with old news (the Event and the
/// `Expired` phase still say it).
pub const RECENT: SignedDuration = SignedDuration::from_hours(24);

/// Whether `r` is an escalation to announce at `now`: ledgerops issued it, nobody decided, it
/// expired and ledgerops escalated it less than [`RECENT`] ago.
pub fn due(r: &ApprovalRequest, now: Timestamp) -> bool {
    let Some(status) = r.status.as_ref() else {
        return false;
    };
    r.spec.decision.is_none()
        && status.issued_for.is_some()
        && status.phase == Some(ApprovalPhase::Expired)
        && status
            .escalated_at
            .as_ref()
            .is_some_and(|at| now.duration_since(at.0) < RECENT)
}

/// The hidden first line of the comment about request `uid`.
fn marker(uid: &str) -> String {
    format!("<!-- ledgerops:escalation request={uid} -->")
}

/// Whether the bot (`bot`) already commented about request `uid`: comments of anyone else
/// never count, whatever they contain.
pub fn is_announced(comments: &[IssueComment], bot: &str, uid: &str) -> bool {
    let marker = marker(uid);
    comments
        .iter()
        .any(|c| c.author == bot && c.body.lines().next() == Some(marker.as_str()))
}

/// Whether an `escalateTo` entry is a Gitea login, to mention: entries such as addresses are
/// named, escaped, without notifying anyone.
fn is_login(entry: &str) -> bool {
    (1..=40).contains(&entry.len())
        && entry
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !entry.starts_with(['.', '-'])
}

/// The comment about expired request `r`: who is asked to look (`@login` for each Gitea login
/// in `escalateTo`), what expired, and that nothing was applied. Every name and summary is
/// escaped: they are text, never a mention, link or markup.
pub fn comment(r: &ApprovalRequest) -> String {
    let uid = r.uid().unwrap_or_default();
    let spec = &r.spec;
    let (logins, others): (Vec<&String>, Vec<&String>) =
        spec.escalate_to.iter().partition(|e| is_login(e));
    let mut whom: Vec<String> = logins.iter().map(|l| format!("@{l}")).collect();
    whom.extend(others.iter().map(|o| cell(o)));
    let whom = if whom.is_empty() {
        "The Budget's owners".to_owned()
    } else {
        whom.join(", ")
    };
    let subject = match spec.subject.kind {
        SubjectKind::CategorizationPlan => "CategorizationPlan",
        SubjectKind::Transaction => "Transaction",
    };
    format!(
        "{}\n{whom}: ApprovalRequest {} of Budget {} in namespace {} expired at {} without a decision. Nothing of {subject} {} was applied ({} change(s): {}).\n\nThis issue says what it asked; to apply it, change the {subject} (or ask for a new preview) and decide the new request in time.\n",
        marker(&uid),
        cell_code(&r.name_any()),
        cell_code(&spec.budget_ref.name),
        cell_code(&r.namespace().unwrap_or_default()),
        spec.expires_at.0,
        cell_code(&spec.subject.name),
        spec.change_count,
        escape::text(&crate::logic::job::state::truncate(
            spec.summary.trim(),
            200
        )),
    )
}

#[cfg(test)]
#[path = "escalation_tests.rs"]
mod tests;
