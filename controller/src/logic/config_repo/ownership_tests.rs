//! Unit tests of `logic/config_repo/ownership.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use super::*;
use crate::logic::config_repo::Proposed;

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
        proposed_to: proposed_to.map(|r| Proposed {
            repository: r.into(),
            config_repo: "config".into(),
            branch: "main".into(),
        }),
        made: None,
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
            "a rule another ConfigRepo of the repository proposed",
            None,
            Some(Live {
                proposed_to: Some(Proposed {
                    repository: "household/config".into(),
                    config_repo: "other".into(),
                    branch: "main".into(),
                }),
                ..live(Rule, "u1", None)
            }),
            home,
            true,
        ),
        (
            "a rule proposed to another branch",
            None,
            Some(Live {
                proposed_to: Some(Proposed {
                    repository: "household/config".into(),
                    config_repo: "config".into(),
                    branch: "experiment".into(),
                }),
                ..live(Rule, "u1", None)
            }),
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
        let owner = Owner {
            repository,
            name: "config",
            branch: "main",
            maker: None,
        };
        let got = claim(e.as_ref(), l.as_ref(), &owner);
        assert_eq!(foreign(&got), want_foreign, "{what}: {got:?}");
        if l.is_none() {
            assert_eq!(got, Claim::Free, "{what}");
        }
    }
}

/// An object this repository made whose inventory entry was lost (a sync cut off between its
/// apply and its status: seen as a ConfigRepo held on `Conflict` for good in CI) is still its
/// own, by the proposer only the controller may write; anything else stays foreign.
#[test]
fn what_this_repository_made_is_its_own_when_the_inventory_lost_it() {
    let since = Timestamp::from_second(1_790_000_000).unwrap();
    let made = |proposer: &str, seconds: i64| {
        let mut l = live(RepoKind::Transaction, "u2", None);
        l.made = Some((proposer.into(), Timestamp::from_second(seconds).unwrap()));
        l
    };
    let trusted = Owner {
        repository: None,
        name: "first",
        branch: "main",
        maker: Some(Maker {
            proposer: "configrepo:first",
            since,
        }),
    };
    let untrusted = Owner::default();
    // (what, inventory entry, live object, owner) → ours
    let cases: Vec<(&str, Option<InventoryEntry>, Live, &Owner, bool)> = vec![
        (
            "made by it, not recorded",
            None,
            made("configrepo:first", 1_790_000_005),
            &trusted,
            true,
        ),
        (
            "made by it in the second it was made",
            None,
            made("configrepo:first", 1_790_000_000),
            &trusted,
            true,
        ),
        (
            "re-made by it, the new uid not recorded",
            Some(entry(Some("u1"))),
            made("configrepo:first", 1_790_000_005),
            &trusted,
            true,
        ),
        (
            "a deleted namesake's, made before it",
            None,
            made("configrepo:first", 1_789_999_999),
            &trusted,
            false,
        ),
        (
            "another repository's",
            None,
            made("configrepo:second", 1_790_000_005),
            &trusted,
            false,
        ),
        (
            "made by it, changed by a person since",
            None,
            made("configrepo:first,carol", 1_790_000_005),
            &trusted,
            true,
        ),
        (
            "a person's",
            None,
            made("alice", 1_790_000_005),
            &trusted,
            false,
        ),
        (
            "a person's, who added the repository's name after her own",
            None,
            made("alice,configrepo:first", 1_790_000_005),
            &trusted,
            false,
        ),
        (
            "the same name while admission is not verified",
            None,
            made("configrepo:first", 1_790_000_005),
            &untrusted,
            false,
        ),
        (
            "no proposer at all",
            None,
            live(RepoKind::Transaction, "u2", None),
            &trusted,
            false,
        ),
    ];
    for (what, e, l, owner, ours) in cases {
        let got = claim(e.as_ref(), Some(&l), owner);
        assert_eq!(got == Claim::Ours, ours, "{what}: {got:?}");
    }
}
