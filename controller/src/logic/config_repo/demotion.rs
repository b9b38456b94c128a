//! Demotions that outlive the rule object: a repository's rule a person's override demoted is
//! remembered by what it says (its match and category), so deleting the rule, or taking its
//! blessing off so the repository applies it again, does not bless it again. It stays demoted
//! until the repository declares a changed rule, or an approver blesses it in their own name.

use std::collections::{BTreeMap, BTreeSet};

use super::documents::Document;
use super::{Live, RepoKind};
use crate::api::config_repo::{DemotedRule, InventoryEntry};

/// The content keys to apply without the merge's blessing: those `recorded` in the ConfigRepo's
/// status, and those of the repository's own rules (`inventory`) that are demoted now.
pub fn keys(
    recorded: &[DemotedRule],
    live: &[Live],
    inventory: &[InventoryEntry],
) -> BTreeSet<String> {
    let ours: BTreeSet<&str> = inventory
        .iter()
        .filter(|e| e.kind == RepoKind::CategorizationRule.as_str())
        .map(|e| e.name.as_str())
        .collect();
    let demoted_now = live
        .iter()
        .filter(|l| l.kind == RepoKind::CategorizationRule && ours.contains(l.name.as_str()))
        .filter_map(|l| l.demoted.clone());
    recorded
        .iter()
        .map(|d| d.key.clone())
        .chain(demoted_now)
        .collect()
}

/// What stays recorded: the demoted keys the revision still declares, under the name that
/// declares them (a key the repository no longer declares was changed by a merge, or removed).
pub fn still_declared(keys: &BTreeSet<String>, documents: &[Document]) -> Vec<DemotedRule> {
    let declared: BTreeMap<&str, &str> = documents
        .iter()
        .filter_map(|d| Some((d.rule_key.as_deref()?, d.name.as_str())))
        .collect();
    keys.iter()
        .filter_map(|k| {
            Some(DemotedRule {
                name: declared.get(k.as_str())?.to_string(),
                key: k.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "demotion_tests.rs"]
mod tests;
