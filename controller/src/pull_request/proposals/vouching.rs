//! Whether ledgerops still vouches for a rule proposal's branch: what it holds, read from
//! Gitea and judged in [`crate::logic::rule::vouch`], and the withdrawal of a pull request whose
//! branch came to hold what ledgerops did not write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::error::ProposalError;
use super::ours::Ours;
use super::state::{Proposals, RESYNC, record};
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, Proposal, Withdrawal};
use crate::gitea::PullRequest;
use crate::logic::job::trust::issue_number_of;
use crate::logic::rule::vouch::{self, Foreign};

/// Looks again at the pull request recorded for `rule`: while it is open, a branch that holds
/// anything ledgerops did not write has it withdrawn. One found closed is not looked at again.
pub(super) async fn recheck(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
    recorded: &Proposal,
) -> Result<(), ProposalError> {
    let url = &recorded.pull_request_url;
    if p.settled.lock().expect("settled lock").contains(url) {
        return Ok(());
    }
    let Some(number) = issue_number_of(url) else {
        return Ok(());
    };
    let ours = Ours::of(repo, rule)?;
    let begun = p.looks.lock().expect("looks lock").begin(
        &ours.branch,
        std::time::Instant::now(),
        RESYNC / 2,
    );
    let Some(look) = begun else {
        return Ok(());
    };
    let pr = p.ctx.gitea.pull_request(target, number).await?;
    // Only the bot's own pull request from the rule's branch is ever closed, whatever a status
    // names.
    if !pr.open || pr.author != p.ctx.bot || pr.head != ours.branch {
        p.settled.lock().expect("settled lock").insert(url.clone());
        return Ok(());
    }
    let found = foreign_on(p, target, &pr.base, &ours).await?;
    // Looked at: not again until a push to the branch (one since the look began too), or the
    // next resync.
    p.looks.lock().expect("looks lock").done(&ours.branch, look);
    if found.is_empty() {
        return Ok(());
    }
    withdraw(p, target, rule, &ours, &pr, &found, recorded.at.clone()).await
}

/// What on the rule's branch ledgerops did not write, against `base`. A span of commits is
/// read once (a push makes a new one).
pub(super) async fn foreign_on(
    p: &Proposals,
    target: &str,
    base: &str,
    ours: &Ours,
) -> Result<Vec<Foreign>, ProposalError> {
    let gitea = &p.ctx.gitea;
    let commits = gitea.branch_commits(target, base, &ours.branch).await?;
    let span = match vouch::span(&commits.unwrap_or_default()) {
        Ok(Some(span)) => span,
        // Gone, or nothing of its own: the branch does not add the rule's file.
        Ok(None) => return Ok(vec![Foreign::Content(ours.file.clone())]),
        Err(merges) => return Ok(merges),
    };
    let seen = format!(
        "{target} {} {} {}..{}",
        ours.file, ours.key, span.from, span.head
    );
    if let Some(found) = p.seen.lock().expect("seen lock").get(&seen) {
        return Ok(found.clone());
    }
    let from = gitea.tree(target, &span.from).await?;
    let head = gitea.tree(target, &span.head).await?;
    let there = gitea.file_on_branch(target, &ours.file, &span.head).await?;
    let found = vouch::foreign(&from, &head, &ours.file, there.as_deref(), &ours.yaml);
    p.seen
        .lock()
        .expect("seen lock")
        .insert(seen, found.clone());
    Ok(found)
}

/// Closes the bot's pull request `pr`, whose branch holds `found`, saying so once, and records
/// that the rule no longer counts as proposed. Recorded before the close, so that a withdrawal
/// cut short is finished by [`super::propose::propose`], which finds the pull request still open.
pub(super) async fn withdraw(
    p: &Proposals,
    target: &str,
    rule: &CategorizationRule,
    ours: &Ours,
    pr: &PullRequest,
    found: &[Foreign],
    proposed_at: Time,
) -> Result<(), ProposalError> {
    let gitea = &p.ctx.gitea;
    let comments = gitea.list_comments(target, pr.number).await?;
    let said = comments
        .iter()
        .any(|c| c.author == p.ctx.bot && c.body.starts_with(vouch::WITHDRAWN));
    if !said {
        let body = vouch::withdrawal_comment(&ours.name, &ours.branch, found);
        gitea.create_comment(target, pr.number, &body).await?;
    }
    let named = vouch::named(found);
    let withdrawn = Proposal {
        repository: target.to_owned(),
        pull_request_url: pr.url.clone(),
        key: ours.key.clone(),
        at: proposed_at,
        // Withdrawn: no ConfigRepo takes it over.
        config_repo: None,
        branch: None,
        withdrawn: Some(Withdrawal {
            at: Time(Timestamp::now()),
            found: named.clone(),
        }),
    };
    record(p, rule, &withdrawn).await?;
    gitea.close_pull_request(target, pr.number).await?;
    tracing::warn!(rule = %ours.name, pull = %pr.url, found = ?named, "closed a rule's pull request whose branch holds what ledgerops did not write");
    Ok(())
}
