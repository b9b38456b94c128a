//! What deciding an ApprovalRequest from a comment writes and answers: the decision recorded as
//! `gitea:<login>` (with the approver's edits), and the sentences of `/agent approve` and
//! `/agent reject`, named or answering the preview shown on a pull request. Pure: the commands
//! that read and write are in `crate::agent::commands`.

use serde_json::{Value, json};

use super::command::Exception;
use super::report::{cell, cell_code};
use crate::api::common::Edits;

/// A decision made through Gitea: an approval (with the approver's exceptions) or a rejection.
#[derive(Debug, Clone, Copy)]
pub enum Verdict<'a> {
    Approve(&'a [Exception]),
    Reject,
}

impl Verdict<'_> {
    /// The word the answer opens with.
    fn word(self) -> &'static str {
        match self {
            Verdict::Approve(_) => "Approved",
            Verdict::Reject => "Rejected",
        }
    }
}

/// Who a decision made through Gitea is recorded as: the admission policy lets only the
/// controller's service account write one in this form.
pub fn by(author: &str) -> String {
    format!("gitea:{author}")
}

/// The merge patch that writes the decision into the ApprovalRequest's spec; `edits` only for an
/// approval with exceptions.
pub fn patch(verdict: Verdict, by: &str, comment: Option<&str>, edits: Option<&Edits>) -> Value {
    let mut decision = match verdict {
        Verdict::Approve(_) => json!({"verdict": "Approve", "by": by}),
        Verdict::Reject => json!({"verdict": "Reject", "by": by}),
    };
    if let Some(c) = comment {
        decision["comment"] = json!(c);
    }
    if let Some(edits) = edits {
        decision["edits"] = json!(edits);
    }
    json!({"spec": {"decision": decision}})
}

/// The answer once the decision is written: `summary` is the request's, `edited` the one-line
/// summary of the approver's edits, if any.
pub fn decided(
    verdict: Verdict,
    request: &str,
    summary: &str,
    edited: Option<&str>,
    by: &str,
) -> String {
    let edited = edited
        .map(|s| format!(" with edits ({})", cell(s)))
        .unwrap_or_default();
    format!(
        "{} ApprovalRequest `{request}` ({}){edited}, recorded as `{by}`.",
        verdict.word(),
        cell(summary)
    )
}

/// No ApprovalRequest by that name.
pub fn no_request(request: &str, namespace: &str) -> String {
    format!("there is no ApprovalRequest `{request}` in namespace `{namespace}`")
}

/// The API server (the admission policy, a conflict) refused the decision.
pub fn refused_by_api(request: &str, message: &str) -> String {
    format!(
        "the API server refused the decision on `{request}`: {}",
        cell(message)
    )
}

/// `/agent approve` without a name anywhere but on a pull request.
pub const NOT_ON_A_PULL_REQUEST: &str = "`/agent approve` without a name answers the preview ledgerops commented on a pull request; here, name the ApprovalRequest: `/agent approve <approvalrequest>`";

/// `/agent approve` without a name on a pull request with no preview before it.
pub const NOTHING_SHOWN: &str = "ledgerops showed no preview on this pull request before your command, so there is nothing it could approve; wait for the preview comment, then answer it";

/// The ApprovalRequest a preview showed no longer exists.
pub fn shown_gone(request: &str) -> String {
    format!(
        "{} is gone (the plan changed or was decided); a new preview is commented when there is one",
        cell_code(request)
    )
}

/// The ApprovalRequest a preview showed now asks about something else.
pub fn shown_changed(request: &str) -> String {
    format!(
        "{} no longer holds the preview shown here; approve the newer preview",
        cell_code(request)
    )
}

/// The answer to approving the previews shown: what was approved, then what was not.
pub fn shown_answer(approved: &[String], refused: &[String]) -> String {
    approved
        .iter()
        .chain(refused)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Exceptions on a request about a Transaction.
pub fn not_a_plan(request: &str) -> String {
    format!(
        "ApprovalRequest `{request}` asks about a Transaction: only a plan's approval carries exceptions. Approve or reject it as it is."
    )
}

/// The plan a request asks about is gone.
pub fn plan_gone(plan: &str, request: &str) -> String {
    format!(
        "CategorizationPlan `{}` that ApprovalRequest `{request}` asks about no longer exists",
        cell(plan)
    )
}

/// An exception that names no category of the Budget.
pub fn bad_exception(transaction: &str, why: &str) -> String {
    format!("{}: {}", cell(transaction), cell(why))
}

/// Exceptions the plan's write would refuse.
pub fn not_approving(request: &str, why: &str) -> String {
    format!("not approving ApprovalRequest `{request}`: {}", cell(why))
}

#[cfg(test)]
#[path = "decision_tests.rs"]
mod tests;
