//! Unit tests of `logic/rule/proposal.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::rule::{Blessing, Withdrawal};
use crate::logic::rule::fixtures::{demotion, merchant, rule, spec};

fn candidate(confirmations: u32, corrections: u32) -> CategorizationRule {
    let spec = spec(merchant("RAIL CO"), "transport", false);
    rule("learned-rail-co", spec, (confirmations, corrections))
}

fn at() -> Time {
    Time(Timestamp::from_second(1_790_000_000).unwrap())
}

fn proposed(confirmations: u32) -> CategorizationRule {
    let mut rule = candidate(confirmations, 0);
    rule.status.as_mut().unwrap().proposal = Some(Proposal {
        repository: "household/config".into(),
        pull_request_url: "http://gitea/household/config/pulls/1".into(),
        key: key(&rule.spec),
        at: at(),
        config_repo: Some("config".into()),
        branch: Some("main".into()),
        withdrawn: None,
    });
    rule
}

fn withdrawn(mut rule: CategorizationRule) -> CategorizationRule {
    let proposal = rule.status.as_mut().unwrap().proposal.as_mut().unwrap();
    proposal.withdrawn = Some(Withdrawal {
        at: at(),
        found: vec!["budget.yaml".into()],
    });
    rule
}

#[test]
fn a_candidate_is_due_once_confirmed_enough_never_corrected_and_not_proposed_as_it_stands() {
    let proposed = proposed(5);
    let mut changed_since = proposed.clone();
    changed_since.spec.category_id = "gifts".into();
    let mut blessed = candidate(9, 0);
    blessed.spec.blessing = Some(Blessing {
        by: "alice".into(),
        at: None,
    });
    let mut demoted = candidate(9, 0);
    demoted.status.as_mut().unwrap().demotion = Some(demotion(1));
    let mut malformed = candidate(9, 0);
    malformed.spec.matches.payee = Some("RAIL CO".into());
    let cases = [
        ("enough", candidate(5, 0), 5, true),
        ("more than enough", candidate(7, 0), 5, true),
        ("not enough", candidate(4, 0), 5, false),
        ("corrected once", candidate(9, 1), 5, false),
        (
            "never learned",
            CategorizationRule::new("x", candidate(0, 0).spec),
            1,
            false,
        ),
        ("proposed as it stands", proposed.clone(), 5, false),
        ("its proposal withdrawn", withdrawn(proposed), 5, true),
        ("changed since its proposal", changed_since, 5, true),
        ("blessed already", blessed, 5, false),
        ("demoted", demoted, 5, false),
        ("malformed", malformed, 5, false),
        ("proposals off", candidate(9, 0), 0, false),
    ];
    for (what, rule, after, want) in cases {
        assert_eq!(due(&rule, after), want, "{what}");
    }
}

#[test]
fn a_proposal_is_watched_in_its_repository_until_withdrawn_or_the_rule_is_blessed_or_changed() {
    let mut blessed = proposed(5);
    blessed.spec.blessing = Some(Blessing {
        by: "configrepo:household".into(),
        at: None,
    });
    let mut changed_since = proposed(5);
    changed_since.spec.category_id = "gifts".into();
    let cases = [
        ("proposed here", proposed(5), "household/config", true),
        ("proposed elsewhere", proposed(5), "household/other", false),
        (
            "withdrawn",
            withdrawn(proposed(5)),
            "household/config",
            false,
        ),
        ("blessed", blessed, "household/config", false),
        ("changed since", changed_since, "household/config", false),
        ("never proposed", candidate(5, 0), "household/config", false),
    ];
    for (what, rule, repository, want) in cases {
        assert_eq!(watched(&rule, repository).is_some(), want, "{what}");
    }
}

#[test]
fn the_first_repository_that_can_bless_proposes() {
    let repo = |name: &str, after: u32, account: Option<&str>| {
        let mut r: ConfigRepo = serde_json::from_value(serde_json::json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
            "metadata": {"name": name},
            "spec": {"url": "http://gitea/o/r.git", "proposeRulesAfter": after}
        }))
        .unwrap();
        r.spec.service_account_name = account.map(Into::into);
        r
    };
    let (a, b, c, d) = (
        repo("a-own-account", 5, Some("deployer")),
        repo("b-off", 0, None),
        repo("c-elsewhere", 5, None),
        repo("d-household", 5, None),
    );
    let repos = [
        (&d, Some("o/household".to_owned())),
        (&c, None),
        (&b, Some("o/b".to_owned())),
        (&a, Some("o/a".to_owned())),
    ];
    let (chosen, target) = proposer(&repos).unwrap();
    assert_eq!(
        (chosen.metadata.name.as_deref(), target.as_str()),
        (Some("d-household"), "o/household")
    );
    assert!(proposer(&repos[1..]).is_none());
}

#[test]
fn the_file_and_branch_are_the_rules_and_the_file_carries_no_blessing() {
    assert_eq!(file(".", "r"), "rules/r.yaml");
    assert_eq!(file("./", "r"), "rules/r.yaml");
    assert_eq!(file("./household/", "r"), "household/rules/r.yaml");
    let rule = candidate(5, 0);
    let k = key(&rule.spec);
    assert_eq!(
        branch("learned-rail-co", &k),
        format!("ledgerops-rule-learned-rail-co-{}", &k[..8])
    );
    assert!(is_branch(&branch("learned-rail-co", &k)));
    assert!(!is_branch("main") && !is_branch("agent-plan-1"));
    let mut blessed = rule.clone();
    blessed.spec.blessing = Some(Blessing {
        by: "mallory".into(),
        at: None,
    });
    let yaml = manifest(&blessed).unwrap();
    // Read as the ConfigRepo that merges the pull request reads it.
    let doc = crate::logic::config_repo::yaml::values(&yaml)
        .unwrap()
        .remove(0);
    assert!(doc["spec"].get("blessing").is_none(), "{yaml}");
    assert!(doc.get("status").is_none(), "{yaml}");
    assert_eq!(doc["metadata"]["name"], "learned-rail-co");
    assert_eq!(doc["kind"], "CategorizationRule");
    assert_eq!(doc["spec"]["match"]["payeeNormalised"], "RAIL CO");
}
