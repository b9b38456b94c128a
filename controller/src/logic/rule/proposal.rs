//! Proposing a learned rule to a config repository: which Candidates are due (enough
//! confirmations, never corrected, not proposed yet as they stand), which repository proposes,
//! and the pull request's branch and file (its words: `logic::job::rules_report`). Merging the
//! pull request is the blessing.

use super::matching::Matcher;
use super::standing::is_demoted;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::{CategorizationRule, CategorizationRuleSpec, Proposal};
use crate::logic::plan::hash::hex_sha256;
use crate::logic::values::yaml_text;
use serde_saphyr::SerializeError;

/// What a proposal is about: the rule's budget, match and category.
pub fn key(spec: &CategorizationRuleSpec) -> String {
    let about = serde_json::json!({
        "budget": spec.budget_ref.name,
        "match": spec.matches,
        "category": spec.category_id,
    });
    hex_sha256(about.to_string().as_bytes())[..16].to_owned()
}

/// Whether `rule` should be proposed now, with `after` confirmations needed: a well-formed
/// Candidate (not blessed, not demoted) with that many confirmations and no correction, not
/// proposed yet as it stands.
pub fn due(rule: &CategorizationRule, after: u32) -> bool {
    let Some(status) = &rule.status else {
        return false;
    };
    let learning = status.learning.as_ref();
    let confirmed = learning.is_some_and(|l| l.confirmations >= after && l.corrections == 0);
    after > 0
        && confirmed
        && !proposed(rule)
        && rule.spec.blessing.is_none()
        && !is_demoted(rule)
        && Matcher::new(&rule.spec).is_ok()
}

/// Whether `rule` counts as proposed: a pull request proposed it as it stands and ledgerops has
/// not withdrawn it.
pub fn proposed(rule: &CategorizationRule) -> bool {
    recorded(rule).is_some_and(|p| p.withdrawn.is_none())
}

/// The proposal recorded for `rule` as it stands, withdrawn or not.
fn recorded(rule: &CategorizationRule) -> Option<&Proposal> {
    let proposal = rule.status.as_ref()?.proposal.as_ref()?;
    (proposal.key == key(&rule.spec)).then_some(proposal)
}

/// The pull request to look at again in `repository` for `rule`: one proposed there as the rule
/// stands, not withdrawn, of a rule not blessed yet (merging it blesses it).
pub fn watched<'a>(rule: &'a CategorizationRule, repository: &str) -> Option<&'a Proposal> {
    recorded(rule).filter(|p| {
        p.withdrawn.is_none() && p.repository == repository && rule.spec.blessing.is_none()
    })
}

/// Which of `repos` (one namespace's, each with the Gitea repository it is, when it is one the
/// agent may speak in) proposes: the first by name that can. A repository that applies as its
/// own ServiceAccount cannot bless (only the controller records a `configrepo:` blessing), and
/// one with `proposeRulesAfter: 0` does not want proposals.
pub fn proposer<'a>(
    repos: &[(&'a ConfigRepo, Option<String>)],
) -> Option<(&'a ConfigRepo, String)> {
    let mut able: Vec<(&ConfigRepo, String)> = repos
        .iter()
        .filter(|(r, _)| {
            r.spec.service_account_name.is_none()
                && r.spec.propose_rules_after > 0
                && !r.spec.suspend
        })
        .filter_map(|(r, target)| Some((*r, target.clone()?)))
        .collect();
    able.sort_by(|(a, _), (b, _)| a.metadata.name.cmp(&b.metadata.name));
    able.into_iter().next()
}

/// The branch a proposal is made on: one per rule and key, so that a proposal interrupted
/// half-way is found again, never made twice.
pub fn branch(rule: &str, key: &str) -> String {
    format!("{BRANCH_PREFIX}{rule}-{}", &key[..8])
}

const BRANCH_PREFIX: &str = "ledgerops-rule-";

/// Whether `branch` is one a proposal is made on: a push to it is looked at.
pub fn is_branch(branch: &str) -> bool {
    branch.starts_with(BRANCH_PREFIX)
}

/// Where the rule's file goes in the repository: under the repository's `spec.path`, in
/// `rules/`.
pub fn file(repo_path: &str, rule: &str) -> String {
    let base = repo_path.trim_start_matches("./").trim_matches('/');
    if base.is_empty() || base == "." {
        format!("rules/{rule}.yaml")
    } else {
        format!("{base}/rules/{rule}.yaml")
    }
}

/// The rule's file: its name and spec without a blessing (the merge blesses it).
pub fn manifest(rule: &CategorizationRule) -> Result<String, SerializeError> {
    let spec = CategorizationRuleSpec {
        blessing: None,
        ..rule.spec.clone()
    };
    let object = CategorizationRule {
        metadata: kube::api::ObjectMeta {
            name: rule.metadata.name.clone(),
            ..Default::default()
        },
        spec,
        status: None,
    };
    let yaml = yaml_text::to_string(&object)?;
    Ok(format!(
        "# Learned by ledgerops from approved decisions. Merging blesses it as\n# configrepo:<ConfigRepo name>; never write spec.blessing here.\n{yaml}"
    ))
}

#[cfg(test)]
#[path = "proposal_tests.rs"]
mod tests;
