//! Unit tests of `logic/job/rules_report.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::logic::rule::fixtures::{self, demotion, merchant, spec};

fn rule(name: &str, payee: &str, blessed: bool, counts: (u32, u32)) -> CategorizationRule {
    fixtures::rule(
        name,
        spec(merchant(payee), "cat-transport", blessed),
        counts,
    )
}

#[test]
fn candidates_come_first_most_confirmed_on_top_then_blessed_then_demoted() {
    let mut demoted = rule("shell", "SHELL", true, (0, 1));
    demoted.status.as_mut().unwrap().demotion = Some(demotion(1));
    let rules = [
        rule("few", "MONOPRIX", false, (1, 0)),
        demoted,
        rule("rail-co", "RAIL CO", true, (3, 0)),
        rule("many", "BOULANGERIE", false, (5, 1)),
    ];
    let refs: Vec<&CategorizationRule> = rules.iter().collect();
    let names = |_: &str, id: &str| (id == "cat-transport").then(|| "Transport".to_owned());
    let report = rules_report(&refs, "home", &names);
    let order: Vec<usize> = ["`many`", "`few`", "`rail-co`", "`shell`"]
        .iter()
        .map(|n| report.find(n).unwrap_or_else(|| panic!("{n} in {report}")))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{report}");
    for needle in [
        "Candidates (learned or written, not blessed: they never act): 2",
        "Blessed (used by `/agent suggest` before the payee's history): 1",
        "Demoted (a person changed by hand what ledgerops wrote under them): 1",
        "| `many` | `household` | \\~ BOULANGERIE | Transport (`cat-transport`) | 5 | 1 | 2026-09-21 |",
        "kubectl patch categorizationrule <rule> -n home",
    ] {
        assert!(report.contains(needle), "{needle} in {report}");
    }
}

#[test]
fn a_long_list_is_cut_and_says_where_the_rest_is() {
    let rules: Vec<CategorizationRule> = (0..LISTED + 3)
        .map(|i| rule(&format!("r{i}"), "SHOP", false, (0, 0)))
        .collect();
    let refs: Vec<&CategorizationRule> = rules.iter().collect();
    let report = rules_report(&refs, "home", &|_, _| None);
    assert!(
        report.contains("…and 3 more: `kubectl get categorizationrules -n home`"),
        "{report}"
    );
    assert!(rules_report(&[], "home", &|_, _| None).contains("None."));
}

#[test]
fn a_proposal_says_what_was_learned_from_whom_and_what_merging_does() {
    let mut r = rule("learned-rail-co", "RAIL CO", false, (3, 0));
    r.status
        .as_mut()
        .unwrap()
        .learning
        .as_mut()
        .unwrap()
        .evidence = vec![crate::api::rule::Evidence {
        source: "CategorizationPlan/september".into(),
        transaction_id: "tx-049".into(),
        category_id: "cat-transport".into(),
        by: "gitea:alice".into(),
        at: Time(Timestamp::from_second(1_790_000_000).unwrap()),
        verdict: "Confirmation".into(),
    }];
    let now = Timestamp::from_second(1_790_000_600).unwrap();
    let (title, body) = proposal_words(&r, "household", Some("Transport"), now);
    assert_eq!(title, "Bless rule learned-rail-co: ~ RAIL CO → Transport");
    for needle in [
        "from 3 approved decision(s), none corrected",
        "Transport (`cat-transport`)",
        "blesses it as `configrepo:household`",
        "| `CategorizationPlan/september` | `tx-049` | gitea\\:alice | 2026-09-21 |",
    ] {
        assert!(body.contains(needle), "{needle} in {body}");
    }
}
