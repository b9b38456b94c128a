//! Proposing a rule: its file committed on its own branch, only while that branch holds nothing
//! else, and a pull request in ledgerops's words (naming the category) recorded in the rule's
//! status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::error::ProposalError;
use super::ours::Ours;
use super::state::{Proposals, record};
use super::vouching::{foreign_on, withdraw};
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, Proposal};
use crate::gitea::{GiteaError, PullRequest};
use crate::logic::job::rules_report::proposal_words;

/// Opens the rule's pull request (or finds the one an interrupted attempt opened) and records
/// it in the rule's status.
pub(super) async fn propose(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
) -> Result<(), ProposalError> {
    let ours = Ours::of(repo, rule)?;
    let base = &repo.spec.branch;
    let gitea = &p.ctx.gitea;
    let now = Timestamp::now();
    let open_already = gitea
        .open_pull_request_from(target, base, &ours.branch, &p.ctx.bot)
        .await?;
    let pr = match open_already {
        // An interrupted attempt's: recorded only while its branch holds only ours.
        Some(pr) => {
            let found = foreign_on(p, target, base, &ours).await?;
            if !found.is_empty() {
                return withdraw(p, target, rule, &ours, &pr, &found, Time(now)).await;
            }
            pr
        }
        None => {
            let message = format!("Propose CategorizationRule {}", ours.name);
            let pushed = gitea
                .create_file_on_new_branch(
                    target,
                    &ours.file,
                    &ours.yaml,
                    &message,
                    base,
                    &ours.branch,
                )
                .await;
            match pushed {
                Ok(()) => {}
                // The branch is there already: an interrupted attempt's, or someone else's.
                Err(GiteaError::Status { status, .. }) if matches!(status.as_u16(), 409 | 422) => {}
                Err(e) => return Err(e.into()),
            }
            // The whole branch, before a pull request in ledgerops's words vouches for it.
            let found = foreign_on(p, target, base, &ours).await?;
            if !found.is_empty() {
                return Err(ours.foreign(target, &found));
            }
            open(p, repo, target, rule, &ours.branch, now).await?
        }
    };
    let recorded = Proposal {
        repository: target.to_owned(),
        pull_request_url: pr.url.clone(),
        key: ours.key,
        at: Time(now),
        config_repo: Some(repo.name_any()),
        branch: Some(base.clone()),
        withdrawn: None,
    };
    record(p, rule, &recorded).await?;
    tracing::info!(rule = %ours.name, repository = %target, pull = %pr.url, "rule proposed");
    Ok(())
}

/// Opens the pull request of the rule's branch, in words that name the category.
async fn open(
    p: &Proposals,
    repo: &ConfigRepo,
    target: &str,
    rule: &CategorizationRule,
    branch: &str,
    now: Timestamp,
) -> Result<PullRequest, ProposalError> {
    let category = {
        let budget = &rule.spec.budget_ref.name;
        let slot = p.ctx.budget_links.mirror(&p.ctx.namespace, budget);
        let slot = slot.state.read().await;
        slot.mirror
            .categories
            .get(&rule.spec.category_id)
            .map(|c| c.name.clone())
    };
    let (title, body) = proposal_words(rule, &repo.name_any(), category.as_deref(), now);
    Ok(p.ctx
        .gitea
        .create_pull_request(target, branch, &repo.spec.branch, &title, &body)
        .await?)
}
