//! Unit tests of `logic/approval/powers.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use std::collections::BTreeMap;

use super::*;

fn ask(user: &str, power: Power, resource: &'static str) -> Question {
    Question {
        user: user.into(),
        groups: Vec::new(),
        power,
        resource,
    }
}

#[test]
fn names_are_read_as_the_actor_they_stand_for() {
    let cases = [
        ("alice", Actor::Person("alice".into())),
        (
            "system:serviceaccount:home:ci",
            Actor::Person("system:serviceaccount:home:ci".into()),
        ),
        ("gitea:bob", Actor::Gitea("bob".into())),
        (
            "configrepo:household",
            Actor::ConfigRepo("household".into()),
        ),
        ("ledgerops:autopilot", Actor::Controller("autopilot".into())),
    ];
    for (name, want) in cases {
        assert_eq!(actor(name), want, "{name}");
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_decision_is_checked_against_the_lineage_then_for_the_verb() {
    let approve = |u: &str| DecisionCheck::Ask(ask(u, Power::Approve, "approvalrequests"));
    let mapped = BTreeMap::from([
        ("bobby".to_owned(), "bob".to_owned()),
        ("ally".to_owned(), "alice".to_owned()),
    ]);
    type Case<'a> = (&'a str, &'a str, Vec<&'a str>, bool, Option<DecisionCheck>);
    let cases: Vec<Case> = vec![
        (
            "another person",
            "bob",
            vec!["alice"],
            true,
            Some(approve("bob")),
        ),
        ("the proposer", "alice", vec!["alice"], true, None),
        (
            "anyone who changed the subject since",
            "bob",
            vec!["alice", "bob"],
            true,
            None,
        ),
        (
            "the maker of the repository that applied it",
            "alice",
            vec!["configrepo:mine", "alice"],
            true,
            None,
        ),
        (
            "a blesser of the rules behind an autopilot plan",
            "carol",
            vec!["ledgerops:autopilot", "carol"],
            true,
            None,
        ),
        (
            "the proposer, four eyes off",
            "alice",
            vec!["alice"],
            false,
            Some(approve("alice")),
        ),
        (
            "no proposer known",
            "bob",
            vec![],
            true,
            Some(approve("bob")),
        ),
        (
            "through Gitea, mapped to someone outside the lineage",
            "gitea:bobby",
            vec!["alice"],
            true,
            Some(approve("bob")),
        ),
        (
            "through Gitea, mapped to the proposer",
            "gitea:ally",
            vec!["alice"],
            true,
            None,
        ),
        (
            "through Gitea by the commenter who proposed",
            "gitea:bobby",
            vec!["gitea:bobby"],
            true,
            None,
        ),
        (
            "through Gitea, unmapped, four eyes on",
            "gitea:stranger",
            vec!["alice"],
            true,
            None,
        ),
        (
            "through Gitea, unmapped, four eyes off",
            "gitea:stranger",
            vec!["alice"],
            false,
            Some(DecisionCheck::Gitea),
        ),
        (
            "through Gitea, mapped, four eyes off: still asked for approve",
            "gitea:ally",
            vec!["alice"],
            false,
            Some(approve("alice")),
        ),
        ("a config repo", "configrepo:x", vec![], true, None),
        ("the controller", "ledgerops:autopilot", vec![], false, None),
    ];
    for (what, by, lineage, four_eyes, want) in cases {
        let got = decision("req-1", by, &mapped, &names(&lineage), four_eyes);
        match want {
            Some(want) => assert_eq!(got, want, "{what}"),
            None => {
                let DecisionCheck::Refused(message) = got else {
                    panic!("{what}: expected a refusal, got {got:?}")
                };
                assert!(message.contains("req-1"), "{what}: {message}");
                let login = by.trim_start_matches("gitea:");
                assert!(message.contains(login), "{what}: {message}");
            }
        }
    }
}

#[test]
fn the_four_eyes_refusal_says_who_how_and_what_to_do() {
    let mapped = BTreeMap::from([("ally".to_owned(), "alice".to_owned())]);
    let lineage = names(&["configrepo:mine", "alice"]);
    let DecisionCheck::Refused(m) = decision("req-1", "alice", &mapped, &lineage, true) else {
        panic!("refused")
    };
    assert!(m.contains("alice shaped the change"), "{m}");
    assert!(m.contains("its lineage: configrepo:mine, alice"), "{m}");
    assert!(m.contains("fourEyes"), "{m}");
    let DecisionCheck::Refused(m) = decision("req-1", "gitea:ally", &mapped, &lineage, true) else {
        panic!("refused")
    };
    assert!(
        m.contains("gitea:ally (Kubernetes user alice) shaped"),
        "{m}"
    );
    let DecisionCheck::Refused(m) = decision("req-1", "gitea:eve", &mapped, &lineage, true) else {
        panic!("refused")
    };
    assert!(m.contains("maps to no Kubernetes user"), "{m}");
    assert!(m.contains("giteaUsers"), "{m}");
}

#[test]
fn a_blessing_counts_from_an_approver_outside_the_rules_lineage_or_a_governing_repo() {
    let bless = |u: &str| BlessingCheck::Ask(ask(u, Power::Bless, "categorizationrules"));
    let cases = [
        ("bob", vec!["alice"], true, Some(bless("bob"))),
        ("alice", vec!["alice"], true, None),
        ("alice", vec!["bob", "alice"], true, None),
        ("bob", vec!["ledgerops:learning", "bob"], true, None),
        ("alice", vec!["alice"], false, Some(bless("alice"))),
        ("bob", vec![], true, Some(bless("bob"))),
        (
            "configrepo:household",
            vec!["configrepo:household"],
            false,
            Some(BlessingCheck::ConfigRepo("household".into())),
        ),
        (
            "configrepo:household",
            vec!["configrepo:household"],
            true,
            Some(BlessingCheck::ConfigRepo("household".into())),
        ),
        ("gitea:bob", vec!["alice"], true, None),
        ("ledgerops:learning", vec![], true, None),
    ];
    for (by, lineage, four_eyes, want) in cases {
        let got = blessing("groceries", by, &names(&lineage), four_eyes);
        match want {
            Some(want) => assert_eq!(got, want, "{by} {lineage:?} {four_eyes}"),
            None => assert!(
                matches!(&got, BlessingCheck::Refused(m) if m.contains("groceries")),
                "{by} {lineage:?}: {got:?}"
            ),
        }
    }
}

#[test]
fn a_repo_governs_under_everyone_who_shaped_it_only_when_all_are_people() {
    assert_eq!(
        repo_governors("home", &names(&["carol"])),
        Ok(vec![ask("carol", Power::Govern, "configrepos")])
    );
    assert_eq!(
        repo_governors("home", &names(&["carol", "dave"])),
        Ok(vec![
            ask("carol", Power::Govern, "configrepos"),
            ask("dave", Power::Govern, "configrepos")
        ])
    );
    for other in [
        vec![],
        vec!["configrepo:other"],
        vec!["carol", "gitea:carol"],
    ] {
        let Err(m) = repo_governors("home", &names(&other)) else {
            panic!("{other:?}")
        };
        assert!(m.contains("Propose authority"), "{m}");
    }
}

#[test]
fn a_refusal_names_the_user_the_verb_and_the_role() {
    let m = ask("alice", Power::Approve, "approvalrequests")
        .refusal("home", "ApprovalRequest r-1 cannot be followed");
    for part in [
        "alice",
        "verb approve",
        "approvalrequests",
        "namespace home",
        "ledgerops-approver",
        "spec.decision.groups",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    // Asked with the decider's groups, the hint about recording them is not given.
    let with_groups = Question {
        groups: vec!["approvers".into()],
        ..ask("alice", Power::Approve, "approvalrequests")
    };
    assert!(
        !with_groups
            .refusal("home", "x")
            .contains("spec.decision.groups")
    );
    assert_eq!(Power::Govern.role(), "ledgerops-owner");
    assert_eq!(Power::Bless.verb(), "bless");
}

#[test]
fn a_requests_decision_counts_its_recorded_and_its_current_lineage() {
    use crate::api::approval::{ApprovalRequestSpec, Decision, Subject, SubjectKind, Verdict};
    use crate::api::common::LocalRef;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let request = |proposed_by: &[&str], four_eyes: bool, by: Option<&str>| {
        ApprovalRequest::new(
            "req-1",
            ApprovalRequestSpec {
                budget_ref: LocalRef {
                    name: "household".into(),
                },
                subject: Subject {
                    kind: SubjectKind::CategorizationPlan,
                    name: "september".into(),
                },
                preview_hash: "h".into(),
                summary: "s".into(),
                reason: "r".into(),
                changes: vec![],
                change_count: 0,
                expires_at: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
                escalate_to: vec![],
                proposed_by: names(proposed_by),
                four_eyes,
                decision: by.map(|by| Decision {
                    verdict: Verdict::Approve,
                    by: by.into(),
                    groups: vec!["approvers".into()],
                    comment: None,
                    edits: None,
                }),
                review: None,
            },
        )
    };
    let none = BTreeMap::new();
    // A person's decision is asked with the groups admission vouched for.
    let approve = |u: &str| {
        DecisionCheck::Ask(Question {
            groups: vec!["approvers".into()],
            ..ask(u, Power::Approve, "approvalrequests")
        })
    };
    let refused = |c: &DecisionCheck| matches!(c, DecisionCheck::Refused(_));
    // The recorded lineage, under the request's own four eyes or the Budget's now.
    let bob = request(&["alice", "bob"], true, Some("bob"));
    assert!(refused(&decision_on(&bob, &[], &none, false)));
    let bob = request(&["bob"], false, Some("bob"));
    assert!(refused(&decision_on(&bob, &[], &none, true)));
    assert_eq!(decision_on(&bob, &[], &none, false), approve("bob"));
    // Whoever shaped the subject since.
    let bob = request(&["alice"], true, Some("bob"));
    assert!(refused(&decision_on(
        &bob,
        &names(&["alice", "bob"]),
        &none,
        false
    )));
    assert_eq!(
        decision_on(&bob, &names(&["alice"]), &none, true),
        approve("bob")
    );
    // No proposer known (made by the controller's own user), and no decision at all.
    let bob = request(&[], true, Some("bob"));
    assert_eq!(decision_on(&bob, &[], &none, true), approve("bob"));
    assert!(refused(&decision_on(
        &request(&["alice"], true, None),
        &[],
        &none,
        true
    )));
    // A Gitea login's mapped user is asked by name alone: admission vouched for no groups.
    let gitea = request(&["alice"], true, Some("gitea:bobby"));
    let mapped = BTreeMap::from([("bobby".to_owned(), "bob".to_owned())]);
    assert_eq!(
        decision_on(&gitea, &[], &mapped, true),
        DecisionCheck::Ask(ask("bob", Power::Approve, "approvalrequests"))
    );
}
