//! Unit tests of `logic/rule/learn.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::api::autopilot::{AUTOPILOT_LABEL, AUTOPILOT_PROPOSER};
use crate::api::common::{CategoryEdit, DecisionRecord, Edits, LocalRef};
use crate::api::common::{PROPOSED_BY, WriteIntent};
use crate::api::plan::{
    Assignment, CategorizationPlan, CategorizationPlanSpec, CategorizationPlanStatus, PlanPhase,
};
use crate::api::rule::CategorizationRuleSpec;
use crate::api::transaction::{AppliedState, Transaction, TransactionSpec, TransactionStatus};
use crate::logic::budget::mirror::Mirror;
use crate::logic::rule::decisions;
use crate::logic::rule::fixtures::{merchant, spec};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + second).unwrap()
}

/// A decision of `source` writing `category` to `tx` (payee `payee`) at `second`, which YNAB
/// shows as `now`.
fn decision(
    source: &str,
    tx: &str,
    payee: &str,
    category: &str,
    second: i64,
    now: Now,
) -> Decision {
    Decision {
        source: source.into(),
        transaction_id: tx.into(),
        category_id: category.into(),
        by: "gitea:alice".into(),
        at: at(second),
        payee: payee.into(),
        account_id: "checking".into(),
        amount: -12_000,
        memo: None,
        now,
        teaches: true,
    }
}

fn shows(category: &str) -> Now {
    Now::Category(Some(category.into()))
}

fn view<'a>(
    name: &'a str,
    spec: &'a CategorizationRuleSpec,
    acting_since: Option<i64>,
) -> RuleView<'a> {
    RuleView {
        name,
        spec,
        generation: 4,
        acting_since: acting_since.map(at),
    }
}

#[test]
fn each_decision_confirms_or_corrects_the_rules_that_match_it() {
    let rail = spec(merchant("RAIL CO"), "transport", true);
    let gifts = spec(merchant("RAIL CO"), "gifts", false);
    let other = spec(merchant("MONOPRIX"), "groceries", false);
    let rules = [
        view("rail", &rail, Some(0)),
        view("rail-gifts", &gifts, None),
        view("monoprix", &other, None),
    ];
    let decisions = [
        decision(
            "CategorizationPlan/march",
            "t1",
            "RAIL CO 0042",
            "transport",
            10,
            shows("transport"),
        ),
        decision(
            "Transaction/t2",
            "t2",
            "Rail Co.",
            "transport",
            20,
            shows("transport"),
        ),
        decision(
            "CategorizationPlan/april",
            "t3",
            "RAIL CO",
            "gifts",
            30,
            shows("gifts"),
        ),
    ];
    let learned = learn("household", &rules, &decisions, at(100));
    let rail = &learned.learning["rail"];
    assert_eq!((rail.confirmations, rail.corrections), (2, 1));
    assert_eq!(rail.last_used, Some(Time(at(20))));
    let verdicts: Vec<(&str, &str)> = rail
        .evidence
        .iter()
        .map(|e| (e.transaction_id.as_str(), e.verdict.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("t3", "Correction"),
            ("t2", "Confirmation"),
            ("t1", "Confirmation")
        ],
        "newest first"
    );
    assert_eq!(rail.evidence[1].source, "Transaction/t2");
    assert_eq!(rail.evidence[1].by, "gitea:alice");
    let gifts = &learned.learning["rail-gifts"];
    assert_eq!((gifts.confirmations, gifts.corrections), (1, 2));
    let monoprix = &learned.learning["monoprix"];
    assert_eq!(
        (
            monoprix.confirmations,
            monoprix.corrections,
            monoprix.evidence.len()
        ),
        (0, 0, 0)
    );
    assert!(learned.demotions.is_empty(), "no override: nothing demoted");
    assert!(
        learned.candidates.is_empty(),
        "every decision is explained by a rule"
    );
    assert_eq!(
        learn("household", &rules, &decisions, at(100)),
        learned,
        "counted again, the same: nothing lost or doubled"
    );
}

/// (what, acting since, decision time, YNAB now, later write by ledgerops, demoted)
type OverrideCase = (&'static str, Option<i64>, i64, Now, bool, bool);

#[test]
fn an_override_by_hand_demotes_the_rule_that_acted_and_only_that() {
    let rail = spec(merchant("RAIL CO"), "transport", true);
    let cases: Vec<OverrideCase> = vec![
        (
            "changed by hand after a write under the blessing",
            Some(0),
            10,
            shows("gifts"),
            false,
            true,
        ),
        (
            "made uncategorised by hand",
            Some(0),
            10,
            Now::Category(None),
            false,
            true,
        ),
        ("unchanged", Some(0), 10, shows("transport"), false, false),
        (
            "written before the blessing",
            Some(50),
            10,
            shows("gifts"),
            false,
            false,
        ),
        (
            "a candidate never acted",
            None,
            10,
            shows("gifts"),
            false,
            false,
        ),
        (
            "a write in flight: not known yet",
            Some(0),
            10,
            Now::Unknown,
            false,
            false,
        ),
        (
            "ledgerops wrote it again later",
            Some(0),
            10,
            shows("gifts"),
            true,
            false,
        ),
    ];
    for (what, since, second, now, rewritten, demoted) in cases {
        let rules = [view("rail", &rail, since)];
        let mut decisions = vec![decision(
            "CategorizationPlan/march",
            "t1",
            "RAIL CO",
            "transport",
            second,
            now.clone(),
        )];
        if rewritten {
            decisions.push(decision(
                "CategorizationPlan/fix",
                "t1",
                "RAIL CO",
                "gifts",
                second + 5,
                now,
            ));
        }
        let learned = learn("household", &rules, &decisions, at(100));
        assert_eq!(learned.demotions.contains_key("rail"), demoted, "{what}");
        let corrections = learned.learning["rail"].corrections;
        let overridden = !matches!(what, "unchanged" | "a write in flight: not known yet");
        assert_eq!(corrections, u32::from(overridden), "{what}");
        if demoted {
            let d = &learned.demotions["rail"];
            assert_eq!(d.generation, 4, "{what}");
            assert_eq!(d.blessing.by, "alice", "{what}");
            assert_eq!(
                (d.transaction_id.as_str(), d.written_category_id.as_str()),
                ("t1", "transport")
            );
            assert_eq!(d.source, "CategorizationPlan/march");
            assert_eq!(d.at, Time(at(100)));
            assert!(
                learned.candidates.is_empty(),
                "{what}: an overridden write teaches nothing new"
            );
        }
    }
}

#[test]
fn the_autopilots_own_unasked_plan_teaches_nothing_but_its_override_demotes() {
    let rail = spec(merchant("RAIL CO"), "transport", true);
    let rules = [view("rail", &rail, Some(0))];
    let own = |now: Now| Decision {
        teaches: false,
        ..decision(
            "CategorizationPlan/autopilot-1",
            "t1",
            "RAIL CO",
            "transport",
            10,
            now,
        )
    };
    let kept = learn("household", &rules, &[own(shows("transport"))], at(100));
    assert_eq!(
        kept.learning["rail"].confirmations, 0,
        "a rule does not confirm itself"
    );
    assert!(kept.learning["rail"].evidence.is_empty());
    let stray = Decision {
        teaches: false,
        ..decision(
            "CategorizationPlan/autopilot-1",
            "t2",
            "SHELL",
            "fuel",
            10,
            shows("fuel"),
        )
    };
    assert!(
        learn("household", &rules, &[stray], at(100))
            .candidates
            .is_empty()
    );
    let overridden = learn("household", &rules, &[own(shows("gifts"))], at(100));
    assert_eq!(overridden.learning["rail"].corrections, 1);
    assert!(overridden.demotions.contains_key("rail"));
}

#[test]
fn what_no_rule_explains_becomes_a_candidate_once() {
    let rail = spec(merchant("RAIL CO"), "transport", false);
    let rules = [view("rail", &rail, None)];
    let decisions = [
        decision(
            "CategorizationPlan/march",
            "t1",
            "RAIL CO",
            "transport",
            10,
            shows("transport"),
        ),
        decision(
            "CategorizationPlan/march",
            "t2",
            "CARTE 01/06 MONOPRIX 0042",
            "groceries",
            10,
            shows("groceries"),
        ),
        decision(
            "CategorizationPlan/march",
            "t3",
            "MONOPRIX",
            "groceries",
            10,
            shows("groceries"),
        ),
        decision(
            "CategorizationPlan/march",
            "t4",
            "RAIL CO",
            "gifts",
            10,
            shows("gifts"),
        ),
        decision(
            "CategorizationPlan/march",
            "t5",
            "1234",
            "groceries",
            10,
            shows("groceries"),
        ),
        decision(
            "CategorizationPlan/march",
            "t6",
            "SHELL",
            "fuel",
            10,
            shows("groceries"),
        ),
    ];
    let learned = learn("household", &rules, &decisions, at(100));
    let made: Vec<(&str, &str, &str)> = learned
        .candidates
        .iter()
        .map(|(name, spec)| {
            assert_eq!(spec.budget_ref.name, "household");
            assert!(spec.blessing.is_none(), "learning never blesses");
            (
                name.as_str(),
                spec.matches.payee_normalised.as_deref().unwrap(),
                spec.category_id.as_str(),
            )
        })
        .collect();
    let monoprix = candidate_name("MONOPRIX", "groceries");
    let rail_gifts = candidate_name("RAIL CO", "gifts");
    assert_eq!(
        made,
        [
            (monoprix.as_str(), "MONOPRIX", "groceries"),
            (rail_gifts.as_str(), "RAIL CO", "gifts")
        ],
        "most supported first; no merchant (digits only) and an overridden write teach nothing"
    );
    assert!(monoprix.starts_with("learned-monoprix-"), "{monoprix}");
    assert_ne!(
        candidate_name("MONOPRIX", "groceries"),
        candidate_name("MONOPRIX", "gifts")
    );
    assert!(candidate_name(&"LONG MERCHANT NAME ".repeat(10), "c").len() <= 63);
}

#[test]
fn a_pass_creates_a_bounded_number_of_candidates() {
    let decisions: Vec<Decision> = (0..CANDIDATES_PER_PASS + 5)
        .map(|i| {
            let payee = format!(
                "SHOP {}",
                char::from(b'A' + (i % 26) as u8)
                    .to_string()
                    .repeat(i / 26 + 2)
            );
            decision(
                "CategorizationPlan/big",
                &format!("t{i}"),
                &payee,
                "shopping",
                1,
                shows("shopping"),
            )
        })
        .collect();
    let learned = learn("household", &[], &decisions, at(100));
    assert_eq!(learned.candidates.len(), CANDIDATES_PER_PASS);
}

fn plan(
    name: &str,
    assignments: &[(&str, &str)],
    phase: PlanPhase,
    undo_of: Option<&str>,
) -> CategorizationPlan {
    let spec = CategorizationPlanSpec {
        budget_ref: LocalRef {
            name: "household".into(),
        },
        assignments: (!assignments.is_empty()).then(|| {
            assignments
                .iter()
                .map(|(t, c)| Assignment {
                    transaction_id: (*t).into(),
                    category_id: (*c).into(),
                })
                .collect()
        }),
        undo_of: undo_of.map(Into::into),
        description: None,
    };
    let mut p = CategorizationPlan::new(name, spec);
    p.metadata.generation = Some(1);
    p.status = Some(CategorizationPlanStatus {
        phase: Some(phase),
        finished_generation: Some(1),
        observed_generation: Some(1),
        applied_at: Some(Time(at(10))),
        decision: Some(record()),
        ..CategorizationPlanStatus::default()
    });
    p
}

fn record() -> DecisionRecord {
    DecisionRecord {
        verdict: "Approve".into(),
        by: "gitea:alice".into(),
        comment: None,
        request: None,
        decided_at: None,
        preview_hash: "h".into(),
        edited_hash: None,
        edits: None,
    }
}

fn mirror() -> Mirror {
    let mut m = Mirror::default();
    for (id, category, deleted) in [
        ("t1", Some("transport"), false),
        ("t2", Some("gifts"), false),
        ("gone", None, true),
    ] {
        let t: crate::ynab_model::TransactionSummary = serde_json::from_value(serde_json::json!({
            "id": id, "date": "2026-03-01", "amount": -12000, "cleared": "cleared",
            "approved": true, "account_id": "checking", "import_payee_name": "RAIL CO",
            "category_id": category, "deleted": deleted,
        }))
        .unwrap();
        m.transactions.insert(id.into(), t);
    }
    m
}

#[test]
fn only_applied_plans_at_their_generation_and_not_undone_are_decisions() {
    let m = mirror();
    let applied = plan(
        "march",
        &[("t1", "transport"), ("gone", "x"), ("unknown", "x")],
        PlanPhase::Applied,
        None,
    );
    let mut edited = plan("edited", &[("t1", "gifts")], PlanPhase::Applied, None);
    edited.metadata.generation = Some(2);
    let awaiting = plan(
        "waiting",
        &[("t1", "gifts")],
        PlanPhase::AwaitingApproval,
        None,
    );
    let undone = plan("april", &[("t2", "gifts")], PlanPhase::Applied, None);
    let undo = plan("undo-april", &[], PlanPhase::Applied, Some("april"));
    let plans = [&applied, &edited, &awaiting, &undone, &undo];
    let got = decisions::of_plans(&plans, &m, &Default::default());
    let seen: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|d| {
            (
                d.source.as_str(),
                d.transaction_id.as_str(),
                d.category_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [("CategorizationPlan/march", "t1", "transport")],
        "deleted and unknown transactions, a spec edited since, an unapproved plan and an undone one say nothing"
    );
    assert_eq!(got[0].payee, "RAIL CO");
    assert_eq!(got[0].by, "gitea:alice");
    assert_eq!(got[0].now, shows("transport"));
    let mut own = plan(
        "autopilot-1",
        &[("t1", "transport")],
        PlanPhase::Applied,
        None,
    );
    let teaches =
        |p: &CategorizationPlan| decisions::of_plans(&[p], &m, &Default::default())[0].teaches;
    own.status.as_mut().unwrap().decision.as_mut().unwrap().by = "policy".into();
    // The label anyone with edit can set or remove is not asked; the lineage admission keeps is.
    own.metadata.labels = Some([(AUTOPILOT_LABEL.to_owned(), "household".to_owned())].into());
    assert!(
        teaches(&own),
        "a label alone does not make a plan the autopilot's"
    );
    own.metadata.labels = None;
    let lineage = format!("{AUTOPILOT_PROPOSER},carol");
    own.metadata.annotations = Some([(PROPOSED_BY.to_owned(), lineage)].into());
    assert!(!teaches(&own), "the autopilot's plan, run by the policy");
    own.status.as_mut().unwrap().decision.as_mut().unwrap().by = "gitea:alice".into();
    assert!(teaches(&own), "a person approved it");
    let applying = plan("fix", &[("t1", "gifts")], PlanPhase::Applying, None);
    let busy = decisions::busy(&[&applied, &applying], &[]);
    assert_eq!(
        decisions::of_plans(&[&applied], &m, &busy)[0].now,
        Now::Unknown
    );
}

#[test]
fn an_approval_with_edits_teaches_what_was_written_not_what_was_proposed() {
    let mut m = mirror();
    m.transactions.get_mut("t1").unwrap().category_id = Some("gifts".into());
    let mut p = plan(
        "month-end",
        &[("t1", "transport"), ("t2", "transport")],
        PlanPhase::Applied,
        None,
    );
    p.status.as_mut().unwrap().decision.as_mut().unwrap().edits = Some(Edits {
        drop: vec!["t2".into()],
        set: vec![CategoryEdit {
            transaction_id: "t1".into(),
            category_id: "gifts".into(),
        }],
    });
    let got = decisions::of_plans(&[&p], &m, &Default::default());
    let seen: Vec<(&str, &str)> = got
        .iter()
        .map(|d| (d.transaction_id.as_str(), d.category_id.as_str()))
        .collect();
    assert_eq!(seen, [("t1", "gifts")], "the dropped line teaches nothing");
    // A rule that proposed transport for t1 is corrected by it.
    let rule = spec(merchant("RAIL CO"), "transport", true);
    let views = [view("rail", &rule, Some(0))];
    let learned = learn("household", &views, &got, at(100));
    let rail = &learned.learning["rail"];
    assert_eq!((rail.confirmations, rail.corrections), (0, 1));
}

#[test]
fn a_transaction_is_a_decision_once_ledgerops_wrote_its_category_on_approval() {
    let m = mirror();
    let tx = |name: &str, category: Option<&str>, decided: bool, intent: bool| {
        let mut t = Transaction::new(
            name,
            TransactionSpec {
                budget_ref: LocalRef {
                    name: "household".into(),
                },
                transaction_id: "t2".into(),
                category_id: category.map(Into::into),
                split: None,
                memo: None,
                approved: None,
                flag_color: None,
            },
        );
        t.status = Some(TransactionStatus {
            applied: Some(AppliedState {
                hash: "h".into(),
                category_id: category.map(Into::into),
                split: None,
                memo: None,
                approved: None,
                flag_color: None,
                at: Time(at(30)),
            }),
            decision: decided.then(record),
            intent: intent.then(|| WriteIntent {
                attempt_id: "op".into(),
                target_hash: "h".into(),
                from_hash: None,
                knowledge: None,
                started_at: Time(at(40)),
            }),
            ..TransactionStatus::default()
        });
        t
    };
    let written = tx("written", Some("transport"), true, false);
    let adopted = tx("adopted", Some("transport"), false, false);
    let memo_only = tx("memo-only", None, true, false);
    let all = [&written, &adopted, &memo_only];
    let got = decisions::of_transactions(&all, &m, &decisions::busy(&[], &all));
    assert_eq!(
        got.len(),
        1,
        "adopted without a write, or no category written: no decision"
    );
    assert_eq!(
        (got[0].source.as_str(), got[0].category_id.as_str()),
        ("Transaction/written", "transport")
    );
    assert_eq!((got[0].at, got[0].now.clone()), (at(30), shows("gifts")));
    let writing = tx("writing", Some("transport"), true, true);
    let got = decisions::of_transactions(&[&writing], &m, &decisions::busy(&[], &[&writing]));
    assert_eq!(got[0].now, Now::Unknown, "a write in flight");
}

#[test]
fn a_candidate_names_the_people_whose_decisions_taught_it() {
    let by = |who: &str, tx: &str| Decision {
        by: who.into(),
        ..decision(
            "CategorizationPlan/march",
            tx,
            "MONOPRIX",
            "groceries",
            10,
            shows("groceries"),
        )
    };
    let decisions = [by("bob", "t1"), by("policy", "t2"), by("gitea:alice", "t3")];
    let learned = learn("household", &[], &decisions, at(100));
    let monoprix = candidate_name("MONOPRIX", "groceries");
    assert_eq!(learned.candidates.len(), 1);
    assert_eq!(
        learned.taught_by[&monoprix],
        ["bob", "gitea:alice"],
        "the deciders, not the policy"
    );
}
