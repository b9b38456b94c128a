//! Telling a person in Gitea that an ApprovalRequest expired unanswered: which conversation the
//! bot comments on, what it says (mentioning each `escalateTo` login), and how it finds its own
//! comment again, so that it comments once however often it restarts. The comment is the record:
//! its hidden marker, as the whole first line of one of the bot's comments, says it was made.

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::ResourceExt;

use crate::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind};
use crate::api::config_repo::ConfigRepo;
use crate::logic::config_repo::RepoKind;
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::job::escape;
use crate::logic::job::render::IssueComment;
use crate::logic::job::report::{cell, cell_code};
use crate::logic::job::trust::Allowlist;

/// Escalations older than this are not announced: a controller that was down longer, or one
/// upgraded to announce them, does not flood Gitea with old news (the Event and the
/// `Expired` phase still say it).
pub const RECENT: SignedDuration = SignedDuration::from_hours(24);

/// Title of the issue the bot opens in a config repository for escalations that belong to no
/// pull request.
pub const TRACKING_TITLE: &str = "ledgerops: approval requests that expired unanswered";

/// First line of that issue's body: the bot finds its open issue again by it.
const TRACKING_MARKER: &str = "<!-- ledgerops:escalations -->";

/// Where the bot tells about an expired request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The pull request merged as `commit` in `repo`, which brought the request's subject: where
    /// its preview was shown. The config repository's tracking issue when no pull request was
    /// merged as that commit (pushed straight to the branch).
    PullRequestOf { repo: String, commit: String },
    /// The config repository's open tracking issue (opened when there is none).
    TrackingIssue { repo: String },
}

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

/// Where to tell about `r`, from the ConfigRepos of its namespace that follow an allowed
/// repository of the Gitea at `gitea_url`: the pull request that brought its subject, else the
/// tracking issue of the repository that declares its Budget, else of the first such
/// repository by name. None when no such repository exists: only the Event tells then.
pub fn target(
    r: &ApprovalRequest,
    repos: &[&ConfigRepo],
    gitea_url: &str,
    allowed: &Allowlist,
) -> Option<Target> {
    let mut followed: Vec<(&ConfigRepo, String)> = repos
        .iter()
        .filter(|c| c.namespace() == r.namespace())
        .filter_map(|c| {
            let repo = gitea_repository(&c.spec.url, gitea_url).filter(|g| allowed.allows(g))?;
            Some((*c, repo))
        })
        .collect();
    followed.sort_by_key(|(c, _)| c.name_any());
    let subject_kind = match r.spec.subject.kind {
        SubjectKind::CategorizationPlan => RepoKind::CategorizationPlan,
        SubjectKind::Transaction => RepoKind::Transaction,
    };
    let subject_uid = r
        .status
        .as_ref()
        .and_then(|s| s.issued_for.as_ref())
        .map(|i| i.subject_uid.as_str());
    let declared = |c: &ConfigRepo, kind: RepoKind, name: &str| {
        c.status.as_ref().and_then(|s| {
            s.inventory
                .iter()
                .find(|e| e.kind == kind.as_str() && e.name == name)
                .cloned()
        })
    };
    for (c, repo) in &followed {
        // The repository's own object, not another of the same name made since.
        if let Some(entry) = declared(c, subject_kind, &r.spec.subject.name)
            && entry.uid.as_deref() == subject_uid
            && let Some(commit) = entry.commit
        {
            return Some(Target::PullRequestOf {
                repo: repo.clone(),
                commit,
            });
        }
    }
    let budget = &r.spec.budget_ref.name;
    followed
        .iter()
        .find(|(c, _)| declared(c, RepoKind::Budget, budget).is_some())
        .or(followed.first())
        .map(|(_, repo)| Target::TrackingIssue { repo: repo.clone() })
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

/// The body of the tracking issue.
pub fn tracking_body() -> String {
    format!(
        "{TRACKING_MARKER}\nledgerops comments here when an ApprovalRequest of a Budget this repository configures expires without a decision and no pull request brought what it asked about. Nothing it covered was applied; the plan or Transaction asks again once it changes.\n"
    )
}

/// Whether an issue by `author` with `body` is the bot's tracking issue.
pub fn is_tracking_issue(author: &str, body: &str, bot: &str) -> bool {
    author == bot && body.lines().next() == Some(TRACKING_MARKER)
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
        "{}\n{whom}: ApprovalRequest {} of Budget {} in namespace {} expired at {} without a decision. Nothing of {subject} {} was applied ({} change(s): {}).\n\nTo apply it, change the {subject} (or ask for a new preview) and decide the new request in time.\n",
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
