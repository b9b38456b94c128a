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
        ("configrepo:household", Actor::ConfigRepo("household".into())),
        ("ledgerops:autopilot", Actor::Controller("autopilot".into())),
    ];
    for (name, want) in cases {
        assert_eq!(actor(name), want, "{name}");
    }
}

#[test]
fn a_decision_is_followed_only_from_a_person_holding_approve_or_through_gitea() {
    let cases = [
        (
            "bob",
            Some(DecisionCheck::Ask(ask("bob", Power::Approve, "approvalrequests"))),
        ),
        (
            "system:serviceaccount:home:ci",
            Some(DecisionCheck::Ask(ask(
                "system:serviceaccount:home:ci",
                Power::Approve,
                "approvalrequests",
            ))),
        ),
        ("gitea:bob", Some(DecisionCheck::Gitea)),
        ("configrepo:x", None),
        ("ledgerops:autopilot", None),
    ];
    for (by, want) in cases {
        let got = decision("req-1", by);
        match want {
            Some(want) => assert_eq!(got, want, "{by}"),
            None => assert!(
                matches!(&got, DecisionCheck::Refused(m) if m.contains("req-1") && m.contains(by)),
                "{by}: {got:?}"
            ),
        }
    }
}

#[test]
fn a_blessing_counts_from_a_person_holding_bless_or_a_governing_repo() {
    let cases = [
        (
            "bob",
            Some(BlessingCheck::Ask(ask("bob", Power::Bless, "categorizationrules"))),
        ),
        (
            "configrepo:household",
            Some(BlessingCheck::ConfigRepo("household".into())),
        ),
        ("gitea:bob", None),
        ("ledgerops:learning", None),
    ];
    for (by, want) in cases {
        let got = blessing("groceries", by);
        match want {
            Some(want) => assert_eq!(got, want, "{by}"),
            None => assert!(
                matches!(&got, BlessingCheck::Refused(m) if m.contains("groceries")),
                "{by}: {got:?}"
            ),
        }
    }
}

#[test]
fn a_refusal_names_the_user_the_verb_and_the_role() {
    let m = ask("alice", Power::Approve, "approvalrequests")
        .refusal("home", "ApprovalRequest r-1 cannot be followed");
    for part in [
        "ApprovalRequest r-1 cannot be followed",
        "user alice",
        "verb approve",
        "approvalrequests",
        "namespace home",
        "ledgerops-approver",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    assert_eq!(Power::Govern.role(), "ledgerops-owner");
    assert_eq!(Power::Govern.verb(), "govern");
    assert_eq!(Power::Bless.verb(), "bless");
}
