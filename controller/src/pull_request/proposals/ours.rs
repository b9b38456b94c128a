//! What ledgerops proposes for a rule, as [`crate::logic::rule::proposal`] decides it: the
//! branch, the file and its content; the content is all ledgerops vouches for on that branch.

use kube::ResourceExt;

use super::error::ProposalError;
use crate::api::config_repo::ConfigRepo;
use crate::api::rule::CategorizationRule;
use crate::logic::rule::proposal;
use crate::logic::rule::vouch::{self, Foreign};

/// What ledgerops proposes for a rule: the branch, the file and its content.
pub(super) struct Ours {
    pub(super) name: String,
    pub(super) key: String,
    pub(super) branch: String,
    pub(super) file: String,
    pub(super) yaml: String,
}

impl Ours {
    pub(super) fn of(repo: &ConfigRepo, rule: &CategorizationRule) -> Result<Self, ProposalError> {
        let name = rule.name_any();
        let key = proposal::key(&rule.spec);
        let yaml = proposal::manifest(rule).map_err(|source| ProposalError::Yaml {
            rule: name.clone(),
            source,
        })?;
        Ok(Self {
            branch: proposal::branch(&name, &key),
            file: proposal::file(&repo.spec.path, &name),
            name,
            key,
            yaml,
        })
    }

    pub(super) fn foreign(&self, target: &str, found: &[Foreign]) -> ProposalError {
        ProposalError::Foreign {
            rule: self.name.clone(),
            repository: target.to_owned(),
            branch: self.branch.clone(),
            found: vouch::named(found).join(", "),
        }
    }
}
