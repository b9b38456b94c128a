//! Unit tests of `logic/config_repo/ownership.rs`.

use super::*;

fn live(kind: RepoKind, uid: &str, proposed_to: Option<&str>) -> Live {
    Live {
        kind,
        name: "x".into(),
        uid: uid.into(),
        resource_version: "1".into(),
        generation: Some(1),
        opted_out: false,
        applying: false,
        demoted: None,
        proposed_to: proposed_to.map(Into::into),
    }
}

fn entry(uid: Option<&str>) -> InventoryEntry {
    InventoryEntry {
        kind: "Transaction".into(),
        name: "x".into(),
        digest: "d".into(),
        generation: Some(1),
        commit: None,
        uid: uid.map(Into::into),
    }
}

#[test]
fn table() {
    use RepoKind::{CategorizationRule as Rule, Transaction as Tx};
    let home = Some("household/config");
    let foreign = |c: &Claim| matches!(c, Claim::Foreign(_));
    // (what, inventory entry, live object, this ConfigRepo's repository, foreign)
    type Case<'a> = (
        &'a str,
        Option<InventoryEntry>,
        Option<Live>,
        Option<&'a str>,
        bool,
    );
    let cases: Vec<Case> = vec![
        ("nothing there", None, None, home, false),
        (
            "our uid",
            Some(entry(Some("u1"))),
            Some(live(Tx, "u1", None)),
            home,
            false,
        ),
        (
            "legacy entry",
            Some(entry(None)),
            Some(live(Tx, "u1", None)),
            home,
            false,
        ),
        (
            "re-made by someone",
            Some(entry(Some("u1"))),
            Some(live(Tx, "u2", None)),
            home,
            true,
        ),
        ("never ours", None, Some(live(Tx, "u1", None)), home, true),
        (
            "a rule proposed here",
            None,
            Some(live(Rule, "u1", home)),
            home,
            false,
        ),
        (
            "a rule proposed elsewhere",
            None,
            Some(live(Rule, "u1", Some("other/config"))),
            home,
            true,
        ),
        (
            "a rule, no Gitea repository",
            None,
            Some(live(Rule, "u1", None)),
            None,
            true,
        ),
        (
            "a Transaction claiming a proposal",
            None,
            Some(live(Tx, "u1", home)),
            home,
            true,
        ),
    ];
    for (what, e, l, repository, want_foreign) in cases {
        let got = claim(e.as_ref(), l.as_ref(), repository);
        assert_eq!(foreign(&got), want_foreign, "{what}: {got:?}");
        if l.is_none() {
            assert_eq!(got, Claim::Free, "{what}");
        }
    }
}
