//! What ledgerops tells the Gitea repository a plan came from: a commit status on the commit
//! that applied the plan (pending while it waits for a person, success when applied, failure
//! with the reason), and one preview comment on the pull request merged as that commit. A
//! `/agent approve` on that pull request approves exactly the preview the bot showed there
//! before the command was written, and nothing else.

use crate::api::approval::{ApprovalRequest, SubjectKind};
use crate::api::common::DecisionRecord;
use crate::api::plan::{CategorizationPlan, PlanPhase};
use crate::logic::approval::inbox_body;
use crate::logic::job::render::IssueComment;
use crate::logic::job::report::{cell, cell_code};
use crate::logic::job::state::truncate;
use crate::logic::job::trust::is_repository_name;
use crate::logic::status::conditions;

/// Commit statuses of a plan carry this context, followed by the plan's name.
pub const CONTEXT_PREFIX: &str = "ledgerops/plan/";

/// The longest description a commit status gets (Gitea shows one line).
const DESCRIPTION_MAX: usize = 200;

/// The state of a commit status, as Gitea spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitState {
    Pending,
    Success,
    Failure,
}

impl CommitState {
    pub fn as_str(self) -> &'static str {
        match self {
            CommitState::Pending => "pending",
            CommitState::Success => "success",
            CommitState::Failure => "failure",
        }
    }
}

/// A commit status to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitReport {
    pub state: CommitState,
    pub description: String,
}

impl CommitReport {
    /// Whether Gitea's latest status (`state`, `description`) already says this.
    pub fn is_shown_by(&self, state: &str, description: &str) -> bool {
        self.state.as_str() == state && self.description == description
    }
}

/// The commit status context of plan `plan`.
pub fn context(plan: &str) -> String {
    format!("{CONTEXT_PREFIX}{plan}")
}

/// The repository (`owner/name`) that the clone URL `url` names on the Gitea at `gitea_url`, or
/// None when it is elsewhere. Scheme, host and port must match; `.git` and a trailing `/` are
/// allowed; anything more than `owner/name` is not a Gitea repository.
pub fn gitea_repository(url: &str, gitea_url: &str) -> Option<String> {
    let base = url::Url::parse(gitea_url).ok()?;
    let repo = url::Url::parse(url).ok()?;
    let same = base.scheme() == repo.scheme()
        && base.host_str() == repo.host_str()
        && base.port_or_known_default() == repo.port_or_known_default();
    if !same || repo.query().is_some() || repo.fragment().is_some() {
        return None;
    }
    let prefix = base.path().trim_end_matches('/');
    let rest = repo.path().strip_prefix(prefix)?.strip_prefix('/')?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    is_repository_name(rest).then(|| rest.to_owned())
}

/// The commit status plan `plan` calls for now; None before it is previewed.
pub fn commit_report(plan: &CategorizationPlan) -> Option<CommitReport> {
    let status = plan.status.as_ref()?;
    let changes = status.preview.as_ref().map(|p| p.change_count).unwrap_or(0);
    let why = || {
        conditions::get(&status.conditions, conditions::READY)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    };
    let (state, description) = match status.phase? {
        PlanPhase::Pending => return None,
        PlanPhase::AwaitingApproval => (
            CommitState::Pending,
            format!(
                "{changes} change(s) await approval: /agent approve on the pull request, or ApprovalRequest {}",
                status
                    .approval_request
                    .as_deref()
                    .unwrap_or("(not open yet)")
            ),
        ),
        PlanPhase::ReadOnly => (
            CommitState::Pending,
            "approved; waits until the Budget's writes are enabled".to_owned(),
        ),
        PlanPhase::Applying => (CommitState::Pending, format!("writing {changes} change(s)")),
        PlanPhase::Applied => (
            CommitState::Success,
            format!("applied {changes} change(s) to YNAB"),
        ),
        PlanPhase::NothingToDo => (
            CommitState::Success,
            "nothing to change: every assignment already holds".to_owned(),
        ),
        PlanPhase::Rejected => (CommitState::Failure, format!("rejected: {}", why())),
        PlanPhase::Expired => (
            CommitState::Failure,
            "nobody decided in time; edit the plan to ask again".to_owned(),
        ),
        phase @ (PlanPhase::Invalid
        | PlanPhase::Blocked
        | PlanPhase::Failed
        | PlanPhase::PartiallyApplied) => (CommitState::Failure, format!("{phase:?}: {}", why())),
    };
    Some(CommitReport {
        state,
        description: truncate(&description, DESCRIPTION_MAX),
    })
}

/// The preview an approval on the pull request is about, as the bot's comment states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub plan: String,
    pub request: String,
    pub hash: String,
}

fn marker(shown: &Shown) -> String {
    format!(
        "<!-- ledgerops:preview plan={} request={} hash={} -->",
        shown.plan, shown.request, shown.hash
    )
}

/// The preview comment for the pending `request` of plan `plan`, merged at `commit`.
pub fn preview_comment(plan: &str, request: &ApprovalRequest, commit: &str) -> String {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    let shown = Shown {
        plan: plan.to_owned(),
        request: name.to_owned(),
        hash: request.spec.preview_hash.clone(),
    };
    let spec = &request.spec;
    let mut out = marker(&shown);
    out.push_str(&format!(
        "\nCategorizationPlan {} from this pull request, applied at {}: {} change(s) await approval.\n\n",
        cell_code(plan),
        cell_code(&commit.chars().take(12).collect::<String>()),
        spec.change_count
    ));
    out.push_str(
        "| transaction | date | payee | amount | from | to |\n|---|---|---|---|---|---|\n",
    );
    for c in &spec.changes {
        out.push_str(&format!("| {} |\n", inbox_body::line(c).join(" | ")));
    }
    let listed = spec.changes.len();
    if (listed as u32) < spec.change_count {
        out.push_str(&format!(
            "\n…and {} more; `kubectl ledgerops diff {}` lists them all.\n",
            spec.change_count as usize - listed,
            cell_code(plan)
        ));
    }
    out.push_str(&format!(
        "\nReply `/agent approve` here to approve exactly this preview (ApprovalRequest {}, expires {}). A later change of the plan or of YNAB makes a new preview, shown here again.\n",
        cell_code(name),
        spec.expires_at.0
    ));
    out
}

/// The preview a comment shows, if it is one of the bot's preview comments: the marker is its
/// whole first line.
fn parse(body: &str) -> Option<Shown> {
    let line = body.lines().next()?;
    let inner = line
        .strip_prefix("<!-- ledgerops:preview ")?
        .strip_suffix(" -->")?;
    let mut fields = inner.split(' ');
    let mut value = |key: &str| {
        let v = fields.next()?.strip_prefix(key)?.strip_prefix('=')?;
        let plain = !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':'));
        plain.then(|| v.to_owned())
    };
    let shown = Shown {
        plan: value("plan")?,
        request: value("request")?,
        hash: value("hash")?,
    };
    fields.next().is_none().then_some(shown)
}

/// The previews a `/agent approve` written as comment `command` answers: for each plan, the
/// last preview the bot (`bot`) commented before it. Comments of anyone else never count,
/// whatever they contain.
pub fn shown_before(comments: &[IssueComment], bot: &str, command: i64) -> Vec<Shown> {
    let mut latest: Vec<(i64, Shown)> = Vec::new();
    for c in comments
        .iter()
        .filter(|c| c.author == bot && c.id < command)
    {
        let Some(shown) = parse(&c.body) else {
            continue;
        };
        match latest.iter_mut().find(|(_, s)| s.plan == shown.plan) {
            Some(slot) if slot.0 < c.id => *slot = (c.id, shown),
            Some(_) => {}
            None => latest.push((c.id, shown)),
        }
    }
    latest.sort_by(|a, b| a.1.plan.cmp(&b.1.plan));
    latest.into_iter().map(|(_, s)| s).collect()
}

/// Whether `request` is still about the plan and the exact preview `shown` (a plan edited or a
/// YNAB change since makes a new preview under a new request).
pub fn still_holds(shown: &Shown, request: &ApprovalRequest) -> bool {
    request.metadata.name.as_deref() == Some(shown.request.as_str())
        && request.spec.subject.kind == SubjectKind::CategorizationPlan
        && request.spec.subject.name == shown.plan
        && request.spec.preview_hash == shown.hash
}

/// Whether the bot already showed `request` on the pull request.
pub fn is_shown(comments: &[IssueComment], bot: &str, request: &str) -> bool {
    comments
        .iter()
        .filter(|c| c.author == bot)
        .filter_map(|c| parse(&c.body))
        .any(|s| s.request == request)
}

/// The marker that opens the bot's comment on the approver's edits of `request`.
fn edits_marker(request: &str) -> String {
    format!("<!-- ledgerops:edits request={request} -->")
}

/// The approver's edits of `plan` to tell its pull request about, when its decision carries
/// any: the request they were made on, and who made them.
pub fn edited(plan: &CategorizationPlan) -> Option<(&str, &DecisionRecord)> {
    let status = plan.status.as_ref()?;
    let started = matches!(
        status.phase?,
        PlanPhase::Applying | PlanPhase::Applied | PlanPhase::PartiallyApplied | PlanPhase::Failed
    );
    let decision = status.decision.as_ref()?;
    let edits = decision.edits.as_ref().filter(|e| !e.is_empty());
    let request = decision.request.as_deref()?;
    (started && edits.is_some()).then_some((request, decision))
}

/// The comment telling the pull request that brought `plan` what the approver changed
/// (`summary`, from [`crate::logic::plan::edit::summary`]) before approving it.
pub fn edits_comment(
    plan: &str,
    request: &str,
    decision: &DecisionRecord,
    summary: &str,
) -> String {
    format!(
        "{}\nCategorizationPlan {} from this pull request was approved by {} with edits: {}. ledgerops previewed the edited set against YNAB again and wrote it as one operation (ApprovalRequest {}); the plan's status and journal record the edits.\n",
        edits_marker(request),
        cell_code(plan),
        cell_code(&decision.by),
        cell(summary),
        cell_code(request)
    )
}

/// Whether the bot already told the pull request about the edits of `request`.
pub fn edits_shown(comments: &[IssueComment], bot: &str, request: &str) -> bool {
    let marker = edits_marker(request);
    comments
        .iter()
        .filter(|c| c.author == bot)
        .any(|c| c.body.lines().next() == Some(marker.as_str()))
}

#[cfg(test)]
#[path = "feedback_tests.rs"]
mod tests;
