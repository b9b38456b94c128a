//! Demotions that outlive the rule object: a repository's rule a person's override demoted is
//! remembered by what it says (its match and category), so deleting the rule, or taking its
//! blessing off so the repository applies it again, does not bless it again. It stays demoted
//! until the repository declares a changed rule, or an approver blesses it in their own name.

use std::collections::{BTreeMap, BTreeSet};

use super::RepoKind;
use super::decide::Live;
use super::documents::Document;
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
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(name: &str, demoted: Option<&str>) -> Live {
        Live {
            kind: RepoKind::CategorizationRule,
            name: name.into(),
            uid: format!("u-{name}"),
            resource_version: "1".into(),
            generation: Some(2),
            opted_out: false,
            applying: false,
            demoted: demoted.map(Into::into),
            proposed_to: None,
        }
    }

    fn entry(name: &str) -> InventoryEntry {
        InventoryEntry {
            kind: "CategorizationRule".into(),
            name: name.into(),
            digest: "d".into(),
            generation: Some(2),
            commit: None,
            uid: Some(format!("u-{name}")),
        }
    }

    fn doc(name: &str, key: &str) -> Document {
        Document {
            file: "rules.yaml".into(),
            line: 1,
            kind: RepoKind::CategorizationRule,
            name: name.into(),
            body: json!({}),
            digest: "d".into(),
            rule_key: Some(key.into()),
        }
    }

    fn recorded(name: &str, key: &str) -> DemotedRule {
        DemotedRule {
            name: name.into(),
            key: key.into(),
        }
    }

    #[test]
    fn demoted_keys_come_from_the_record_and_from_our_demoted_rules() {
        let live = [
            rule("ours-demoted", Some("k1")),
            rule("ours-fine", None),
            rule("someone-elses", Some("k9")),
        ];
        let inventory = [entry("ours-demoted"), entry("ours-fine")];
        let keys = keys(&[recorded("deleted", "k2")], &live, &inventory);
        assert_eq!(keys, BTreeSet::from(["k1".into(), "k2".into()]));
    }

    #[test]
    fn a_demotion_is_kept_while_the_same_rule_is_declared_under_any_name() {
        let keys = BTreeSet::from(["k1".to_owned(), "k2".to_owned(), "k3".to_owned()]);
        let documents = [
            doc("same", "k1"),
            doc("renamed", "k2"),
            doc("changed", "k4"),
        ];
        assert_eq!(
            still_declared(&keys, &documents),
            [recorded("same", "k1"), recorded("renamed", "k2")]
        );
    }
}
