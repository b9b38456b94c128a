//! Unit tests of `logic/approval/powers.rs`.

use std::collections::BTreeMap;

use super::*;

fn ask(user: &str, power: Power, resource: &'static str) -> Question {
    Question {
        user: user.into(),
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

#[test]
fn the_proposer_is_the_annotation_when_it_names_someone() {
    let with = |v: &str| BTreeMap::from([(PROPOSED_BY.to_owned(), v.to_owned())]);
    assert_eq!(proposer(Some(&with("alice"))), Some("alice"));
    assert_eq!(proposer(Some(&with("  "))), None);
    assert_eq!(proposer(Some(&BTreeMap::new())), None);
    assert_eq!(proposer(None), None);
}

#[test]
fn a_decision_is_checked_for_four_eyes_then_for_the_verb() {
    let approve = |u: &str| DecisionCheck::Ask(ask(u, Power::Approve, "approvalrequests"));
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
            "whoever changed the subject since",
            "bob",
            vec!["alice", "bob"],
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
            "through Gitea",
            "gitea:bob",
            vec!["alice"],
            true,
            Some(DecisionCheck::Gitea),
        ),
        (
            "through Gitea by the commenter who proposed",
            "gitea:bob",
            vec!["gitea:bob"],
            true,
            None,
        ),
        ("a config repo", "configrepo:x", vec![], true, None),
        ("the controller", "ledgerops:autopilot", vec![], false, None),
    ];
    for (what, by, proposers, four_eyes, want) in cases {
        let got = decision("req-1", by, &proposers, four_eyes);
        match want {
            Some(want) => assert_eq!(got, want, "{what}"),
            None => {
                let DecisionCheck::Refused(message) = got else {
                    panic!("{what}: expected a refusal, got {got:?}")
                };
                assert!(message.contains("req-1"), "{what}: {message}");
                assert!(message.contains(by), "{what}: {message}");
            }
        }
    }
}

#[test]
fn the_four_eyes_refusal_says_who_and_what_to_do() {
    let DecisionCheck::Refused(m) = decision("req-1", "alice", &["alice"], true) else {
        panic!("refused")
    };
    assert!(m.contains("alice proposed the change"), "{m}");
    assert!(m.contains("fourEyes"), "{m}");
}

#[test]
fn a_blessing_counts_from_an_approver_other_than_its_author_or_a_governing_repo() {
    let bless = |u: &str| BlessingCheck::Ask(ask(u, Power::Bless, "categorizationrules"));
    let cases = [
        ("bob", Some("alice"), true, Some(bless("bob"))),
        ("alice", Some("alice"), true, None),
        ("alice", Some("alice"), false, Some(bless("alice"))),
        ("bob", None, true, Some(bless("bob"))),
        (
            "configrepo:household",
            Some("configrepo:household"),
            false,
            Some(BlessingCheck::ConfigRepo("household".into())),
        ),
        (
            "configrepo:household",
            Some("configrepo:household"),
            true,
            Some(BlessingCheck::ConfigRepo("household".into())),
        ),
        ("gitea:bob", Some("alice"), true, None),
        ("ledgerops:learning", None, true, None),
    ];
    for (by, author, four_eyes, want) in cases {
        let got = blessing("groceries", by, author, four_eyes);
        match want {
            Some(want) => assert_eq!(got, want, "{by} {author:?} {four_eyes}"),
            None => assert!(
                matches!(&got, BlessingCheck::Refused(m) if m.contains("groceries")),
                "{by} {author:?}: {got:?}"
            ),
        }
    }
}

#[test]
fn a_repo_governs_under_its_last_changer_only_when_a_person() {
    assert_eq!(
        repo_governor("home", Some("carol")),
        Ok(ask("carol", Power::Govern, "configrepos"))
    );
    for other in [None, Some("configrepo:other"), Some("gitea:carol")] {
        let Err(m) = repo_governor("home", other) else {
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
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert_eq!(Power::Govern.role(), "ledgerops-owner");
    assert_eq!(Power::Bless.verb(), "bless");
}

#[test]
fn a_requests_decision_counts_its_recorded_and_its_current_proposer() {
    use crate::api::approval::{ApprovalRequestSpec, Decision, Subject, SubjectKind, Verdict};
    use crate::api::common::LocalRef;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let request = |proposed_by: &str, four_eyes: bool, by: Option<&str>| {
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
                proposed_by: proposed_by.into(),
                four_eyes,
                decision: by.map(|by| Decision {
                    verdict: Verdict::Approve,
                    by: by.into(),
                    comment: None,
                    edits: None,
                }),
                review: None,
            },
        )
    };
    let approve = |u: &str| DecisionCheck::Ask(ask(u, Power::Approve, "approvalrequests"));
    let refused = |c: &DecisionCheck| matches!(c, DecisionCheck::Refused(_));
    // The recorded proposer, under the request's own four eyes or the Budget's now.
    assert!(refused(&decision_on(
        &request("bob", true, Some("bob")),
        None,
        false
    )));
    assert!(refused(&decision_on(
        &request("bob", false, Some("bob")),
        None,
        true
    )));
    assert_eq!(
        decision_on(&request("bob", false, Some("bob")), None, false),
        approve("bob")
    );
    // Whoever changed the subject since.
    assert!(refused(&decision_on(
        &request("alice", true, Some("bob")),
        Some("bob"),
        false
    )));
    assert_eq!(
        decision_on(&request("alice", true, Some("bob")), Some("alice"), true),
        approve("bob")
    );
    // No proposer known (made by the controller's own user), and no decision at all.
    assert_eq!(
        decision_on(&request("", true, Some("bob")), None, true),
        approve("bob")
    );
    assert!(refused(&decision_on(
        &request("alice", true, None),
        None,
        true
    )));
}
