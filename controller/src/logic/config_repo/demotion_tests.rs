//! Unit tests of `logic/config_repo/demotion.rs`.

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
        made: None,
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
