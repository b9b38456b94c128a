//! Unit tests of `logic/budget/autopilot.rs`.

use super::*;
use crate::api::autopilot::{AutopilotStatus, Disagreement};
use crate::api::common::Amount;
use crate::logic::rule::Verdict;

fn agreed(id: &str, date: &str, amount: i64, category: &str, rule: &str) -> Candidate {
    Candidate {
        transaction_id: id.into(),
        date: date.into(),
        amount,
        verdict: Verdict::Category {
            category_id: category.into(),
            rules: vec![rule.into()],
        },
    }
}

fn disputed(id: &str) -> Candidate {
    Candidate {
        transaction_id: id.into(),
        date: "2026-09-01".into(),
        amount: -1_000,
        verdict: Verdict::Disagree {
            rules: vec!["a".into(), "b".into()],
            categories: vec!["cat-a".into(), "cat-b".into()],
        },
    }
}

fn counted(day: &str, transactions: u32, amount: &str, plans: &[&str]) -> AutopilotStatus {
    AutopilotStatus {
        day: day.into(),
        transactions,
        amount: Amount(amount.into()),
        plans: plans.iter().map(|p| (*p).into()).collect(),
        tripped: None,
        disagreements: Vec::new(),
    }
}

/// (what, counted before, candidates, planned, what `tripped` says)
type Case = (
    &'static str,
    Option<AutopilotStatus>,
    Vec<Candidate>,
    Vec<&'static str>,
    Option<&'static str>,
);

const LIMITS: Limits = Limits {
    transactions: 3,
    amount: 100_000,
};

fn planned(p: &Pass) -> Vec<&str> {
    p.plan
        .iter()
        .flat_map(|p| &p.assignments)
        .map(|a| a.transaction_id.as_str())
        .collect()
}

#[test]
fn agreed_transactions_go_into_one_plan_oldest_first_within_the_days_limits() {
    let candidates = vec![
        agreed("t3", "2026-09-03", -20_000, "transport", "rail-co"),
        agreed("t1", "2026-09-01", -45_000, "transport", "rail-co"),
        agreed("t2", "2026-09-02", 5_000, "groceries", "monoprix"),
        Candidate {
            verdict: Verdict::Silent,
            ..agreed("t0", "2026-08-01", -1, "x", "x")
        },
    ];
    let p = pass("household", "2026-12-02", "N0", None, LIMITS, 2, candidates);
    assert_eq!(planned(&p), ["t1", "t2", "t3"]);
    let plan = p.plan.as_ref().unwrap();
    assert_eq!(plan.name, "autopilot-household-2026-12-02-1-n0");
    assert_eq!(
        plan.rules,
        ["monoprix", "rail-co"],
        "the rules behind its lines"
    );
    assert_eq!(plan.assignments[0].category_id, "transport");
    assert!(
        plan.description.contains("monoprix (1), rail-co (2)"),
        "{}",
        plan.description
    );
    assert_eq!(
        p.status,
        AutopilotStatus {
            plans: vec![plan.name.clone()],
            ..counted("2026-12-02", 3, "70.000", &[])
        }
    );
    assert_eq!(p.status.tripped, None);
}

#[test]
fn the_circuit_breaker_stops_at_the_first_transaction_past_a_limit() {
    let cases: Vec<Case> = vec![
        (
            "count: the fourth waits",
            None,
            (1..=4)
                .map(|i| agreed(&format!("t{i}"), &format!("2026-09-0{i}"), -1_000, "c", "r"))
                .collect(),
            vec!["t1", "t2", "t3"],
            Some("already put 3 transaction(s) into plans"),
        ),
        (
            "amount: sign ignored, and nothing after the first too large",
            None,
            vec![
                agreed("t1", "2026-09-01", 60_000, "c", "r"),
                agreed("t2", "2026-09-02", -50_000, "c", "r"),
                agreed("t3", "2026-09-03", -1_000, "c", "r"),
            ],
            vec!["t1"],
            Some(
                "transaction t2 (-50.00) would bring the day's plans to 110.00, over spec.autopilot.maxAmountPerDay 100.00",
            ),
        ),
        (
            "what was counted earlier today counts",
            Some(counted(
                "2026-12-02",
                2,
                "10",
                &["autopilot-household-2026-12-02-1"],
            )),
            vec![
                agreed("t1", "2026-09-01", -1_000, "c", "r"),
                agreed("t2", "2026-09-02", -1_000, "c", "r"),
            ],
            vec!["t1"],
            Some("already put 3"),
        ),
        (
            "yesterday's count does not",
            Some(counted(
                "2026-12-01",
                3,
                "100",
                &["autopilot-household-2026-12-01-1"],
            )),
            vec![agreed("t1", "2026-09-01", -1_000, "c", "r")],
            vec!["t1"],
            None,
        ),
        (
            "a count that cannot be read stops it (fail closed)",
            Some(counted("2026-12-02", 0, "garbage", &[])),
            vec![agreed("t1", "2026-09-01", -1, "c", "r")],
            vec![],
            Some("over spec.autopilot.maxAmountPerDay"),
        ),
    ];
    for (what, previous, candidates, want, tripped) in cases {
        let p = pass(
            "household",
            "2026-12-02",
            "N0",
            previous.as_ref(),
            LIMITS,
            2,
            candidates,
        );
        assert_eq!(planned(&p), want, "{what}");
        match (tripped, &p.status.tripped) {
            (None, None) => {}
            (Some(says), Some(got)) => assert!(got.contains(says), "{what}: {got}"),
            (want, got) => panic!("{what}: tripped {got:?}, want {want:?}"),
        }
    }
    let second = pass(
        "household",
        "2026-12-02",
        "N0",
        Some(&counted(
            "2026-12-02",
            1,
            "1",
            &["autopilot-household-2026-12-02-1"],
        )),
        LIMITS,
        2,
        vec![agreed("t9", "2026-09-09", -1_000, "c", "r")],
    );
    assert_eq!(
        second.plan.unwrap().name,
        "autopilot-household-2026-12-02-2-n0"
    );
    assert_eq!(second.status.plans.len(), 2);
    assert_eq!(
        (second.status.transactions, second.status.amount.0.as_str()),
        (2, "2.000")
    );
}

#[test]
fn rules_that_disagree_make_no_plan_and_ask_once() {
    let p = pass(
        "household",
        "2026-12-02",
        "N0",
        None,
        LIMITS,
        2,
        vec![disputed("t1")],
    );
    assert_eq!(p.plan, None);
    assert_eq!(
        p.status.disagreements,
        [Disagreement {
            transaction_id: "t1".into(),
            rules: vec!["a".into(), "b".into()],
            categories: vec!["cat-a".into(), "cat-b".into()],
        }]
    );
    let asked = announcements(None, &p.status);
    assert_eq!(asked.len(), 1);
    let (warning, reason, note) = &asked[0];
    assert!(*warning && *reason == "RulesDisagree");
    assert!(
        note.contains("t1 (a, b)") && note.contains("Which one is right?"),
        "{note}"
    );
    assert!(
        announcements(Some(&p.status), &p.status).is_empty(),
        "asked once, not at every pass"
    );
}

#[test]
fn tripping_is_announced_once_a_day() {
    let p = pass(
        "household",
        "2026-12-02",
        "N0",
        Some(&counted("2026-12-02", 3, "3", &[])),
        LIMITS,
        2,
        vec![agreed("t1", "2026-09-01", -1, "c", "r")],
    );
    let said = announcements(None, &p.status);
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].1, "AutopilotStopped");
    assert!(said[0].2.contains("waits for a person"), "{}", said[0].2);
    assert!(announcements(Some(&p.status), &p.status).is_empty());
}

mod selection {
    use std::collections::HashSet;

    use super::*;
    use crate::api::autopilot::AUTOPILOT_LABEL;
    use crate::api::common::PROPOSED_BY;
    use crate::api::plan::{CategorizationPlanStatus, PlanPhase};
    use crate::api::transaction::{Transaction, TransactionSpec};
    use crate::logic::plan::fixtures::mirror;
    use crate::logic::rule::fixtures::{merchant, spec};
    use crate::logic::rule::{RuleBook, blessed};
    use crate::logic::values::payee::normalise_payee;

    fn book(rules: &[(&str, &str)]) -> RuleBook {
        RuleBook::new(rules.iter().filter_map(|(payee, category)| {
            let key = normalise_payee(payee);
            blessed(payee, &spec(merchant(&key), category, true))
        }))
    }

    fn ids(candidates: &[Candidate]) -> Vec<&str> {
        candidates
            .iter()
            .map(|c| c.transaction_id.as_str())
            .collect()
    }

    #[test]
    fn only_uncategorised_transactions_a_rule_speaks_for_are_candidates() {
        let m = mirror();
        let none = HashSet::new();
        assert!(candidates(&m, &book(&[]), &none).is_empty());
        let rail = book(&[("RAIL CO", "cat-transport")]);
        assert_eq!(ids(&candidates(&m, &rail, &none)), ["tx-049"]);
        // Held (a pending plan or a Transaction has it): left alone.
        assert!(candidates(&m, &rail, &HashSet::from(["tx-049"])).is_empty());
        // A category YNAB no longer offers proposes nothing.
        let hidden = book(&[("RAIL CO", "cat-old")]);
        assert!(candidates(&m, &hidden, &none).is_empty());
    }

    #[test]
    fn transactions_of_unsettled_or_autopilot_plans_and_of_transactions_are_held() {
        let tx = Transaction::new(
            "t",
            serde_json::from_value::<TransactionSpec>(serde_json::json!({
                "budgetRef": {"name": "b"}, "transactionId": "tx-066"
            }))
            .unwrap(),
        );
        // (settled, label, lineage) → its transaction held. The autopilot is known by its name
        // in the lineage admission keeps, never by the label anyone with edit sets or removes.
        type Case = (bool, bool, &'static str, bool);
        let cases: [Case; 6] = [
            (false, false, "alice", true),
            (true, false, "alice", false),
            (true, true, "alice", false),
            (true, false, "ledgerops:autopilot,carol", true),
            (true, true, "ledgerops:autopilot", true),
            (true, false, "alice,ledgerops:autopilotx", false),
        ];
        for (settled, label, lineage, want) in cases {
            let mut plan = CategorizationPlan::new(
                "p",
                serde_json::from_value(serde_json::json!({
                    "budgetRef": {"name": "b"},
                    "assignments": [{"transactionId": "tx-048", "categoryId": "cat-groceries"}]
                }))
                .unwrap(),
            );
            plan.metadata.generation = Some(1);
            plan.metadata.annotations = Some([(PROPOSED_BY.to_owned(), lineage.to_owned())].into());
            if label {
                plan.metadata.labels = Some([(AUTOPILOT_LABEL.to_owned(), "b".into())].into());
            }
            if settled {
                plan.status = Some(CategorizationPlanStatus {
                    phase: Some(PlanPhase::Applied),
                    finished_generation: Some(1),
                    ..CategorizationPlanStatus::default()
                });
            }
            let mut want_held = HashSet::from(["tx-066"]);
            if want {
                want_held.insert("tx-048");
            }
            assert_eq!(
                held([&plan], [&tx]),
                want_held,
                "{settled} {label} {lineage}"
            );
        }
    }
}
