//! The life of a CategorizationRule with `ledgerops run`, a real API server and the YNAB
//! simulator: learned from an approved plan (confirmations, a Candidate for what no rule
//! explains), demoted when a person changes by hand what ledgerops wrote under its blessing,
//! blessed again; and learning across a crash, with nothing lost or doubled. Learning never
//! writes to YNAB: every test counts the simulator's writes.

use std::time::Duration;

use kube::api::{ListParams, Patch, PatchParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::plan::PlanPhase;
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops::logic::rule::learn::candidate_name;
use ledgerops::logic::values::payee::normalise_payee;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{
    PATCH, Scenario, WAIT, bakery_and_train_plan, category, household, most_uncategorised_merchant,
};
use ledgerops_e2e::{kstatus, wait};
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::demo;

const BAKERY: &str = "CB BOULANGERIE DU PORT FACT 160926 525130******1";

/// The Candidate learning names for the bakery in Groceries.
fn bakery_candidate() -> String {
    candidate_name(&normalise_payee(BAKERY), &category("Groceries"))
}

async fn wait_rule(
    s: &Scenario,
    name: &str,
    what: impl Fn(&CategorizationRule) -> bool,
) -> CategorizationRule {
    wait::until(&s.api::<CategorizationRule>(), name, WAIT, what).await
}

fn phase(r: &CategorizationRule) -> Option<RulePhase> {
    r.status.as_ref().and_then(|s| s.phase)
}

fn counts(r: &CategorizationRule) -> Option<(u32, u32)> {
    let learning = r.status.as_ref()?.learning.as_ref()?;
    Some((learning.confirmations, learning.corrections))
}

#[tokio::test]
async fn a_rule_learns_from_approvals_and_is_demoted_when_a_person_overrides_it_by_hand() {
    let s = household("rules", json!({"writes": {"enabled": true}})).await;
    let rules = s.api::<CategorizationRule>();
    s.create_rule(
        "rail-co",
        "RAIL CO",
        "Transport",
        Some("2026-09-20T10:00:00Z"),
    )
    .await;

    // A person approves the bakery and the train: the train confirms rail-co, the bakery teaches a
    // Candidate, and nothing else is written to YNAB.
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.approve_plan("september").await;
    let rail = wait_rule(&s, "rail-co", |r| counts(r) == Some((1, 0))).await;
    let evidence = &rail.status.unwrap().learning.unwrap().evidence;
    assert_eq!(
        (
            evidence[0].source.as_str(),
            evidence[0].transaction_id.as_str(),
            evidence[0].verdict.as_str(),
            evidence[0].by.as_str()
        ),
        (
            "CategorizationPlan/september",
            "tx-049",
            "Confirmation",
            "admin"
        )
    );
    let learned = wait_rule(&s, &bakery_candidate(), |r| {
        phase(r) == Some(RulePhase::Candidate) && counts(r) == Some((1, 0))
    })
    .await;
    assert_eq!(learned.spec.category_id, category("Groceries"));
    assert!(learned.spec.blessing.is_none(), "learning never blesses");
    // Learned, not blessed: it does nothing until a person blesses it.
    let verdict =
        kstatus::expect::<CategorizationRule>(&s.client, &s.ns, &bakery_candidate(), "Failed")
            .await;
    assert!(verdict.message.contains("not blessed"), "{verdict:?}");
    s.wait_event("Learned", Some(&bakery_candidate())).await;
    let all = rules.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(
        all.len(),
        2,
        "the train is explained by rail-co: no Candidate for it"
    );
    assert_eq!(s.requests(PATCH).await, 1, "the plan's one bulk update");

    // Someone moves the train to Restaurants in the YNAB app: rail-co is demoted.
    s.recategorise_in_ynab("tx-049", "Restaurants").await;
    let demoted = wait_rule(&s, "rail-co", |r| phase(r) == Some(RulePhase::Demoted)).await;
    let status = demoted.status.unwrap();
    let demotion = status.demotion.unwrap();
    assert_eq!(
        (
            demotion.transaction_id.as_str(),
            demotion.written_category_id,
            demotion.current_category_id,
            demotion.blessing.by.as_str()
        ),
        (
            "tx-049",
            category("Transport"),
            Some(category("Restaurants")),
            "admin"
        )
    );
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Demoted")
    );
    let event = s.wait_event("Demoted", Some("rail-co")).await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.unwrap_or_default();
    for needle in [
        "tx-049",
        "Transport",
        "Restaurants",
        "CategorizationPlan/september",
        "admin",
    ] {
        assert!(note.contains(needle), "{note} names {needle}");
    }
    wait_rule(&s, "rail-co", |r| counts(r) == Some((0, 1))).await;
    assert_eq!(
        s.writes().await,
        1,
        "learning and demotion write nothing to YNAB"
    );

    // A new blessing lifts the demotion; the override it already weighed does not demote again.
    let again = json!({"spec": {"blessing": {"by": "admin", "at": "2026-09-25T09:00:00Z"}}});
    rules
        .patch("rail-co", &PatchParams::default(), &Patch::Merge(&again))
        .await
        .unwrap();
    wait_rule(&s, "rail-co", |r| phase(r) == Some(RulePhase::Blessed)).await;
    kstatus::expect::<CategorizationRule>(&s.client, &s.ns, "rail-co", "Current").await;
    // Learning gathers changes for two seconds before a pass: give it two passes.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let rail = rules.get("rail-co").await.unwrap();
    assert_eq!(phase(&rail), Some(RulePhase::Blessed), "{:?}", rail.status);
    assert_eq!(s.writes().await, 1);
}

/// A control plane of its own: this test kills the controller.
#[tokio::test]
async fn learning_across_a_crash_loses_and_doubles_nothing() {
    let plane = ControlPlane::start().await.expect("control plane");
    let s = Scenario::new(&plane, "learn-crash", demo::generate()).await;
    let ledgerops = Ledgerops::start(&plane).await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;

    // The policy applies the plan unasked; the controller is killed the moment it is applied,
    // before or while it learns from it.
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::Applied).await;
    drop(ledgerops);
    let rail = candidate_name("RAIL CO", &category("Transport"));
    for round in ["restarted", "restarted again"] {
        let restarted = Ledgerops::start(&plane).await;
        for name in [&rail, &bakery_candidate()] {
            let r = wait_rule(&s, name, |r| counts(r) == Some((1, 0))).await;
            assert_eq!(phase(&r), Some(RulePhase::Candidate), "{round}: {name}");
            let by = &r.status.unwrap().learning.unwrap().evidence[0].by;
            assert_eq!(by, "policy", "{round}: the policy decided");
        }
        let all = s
            .api::<CategorizationRule>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        assert_eq!(all.len(), 2, "{round}: one Candidate per lesson");
        drop(restarted);
    }
    assert_eq!(s.requests(PATCH).await, 1, "the plan was written once");

    // The autopilot is killed the moment its plan exists: counted first, made once.
    let ledgerops = Ledgerops::start(&plane).await;
    let (merchant, waiting) = most_uncategorised_merchant();
    s.create_rule(
        "merchant",
        &merchant,
        "Groceries",
        Some("2026-09-20T10:00:00Z"),
    )
    .await;
    s.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"autopilot": {"enabled": true, "maxAmountPerDay": "100000"}}}),
            ),
        )
        .await
        .unwrap();
    wait::eventually("an autopilot plan", WAIT, async || {
        !s.autopilot_plans().await.is_empty()
    })
    .await;
    drop(ledgerops);
    let _restarted = Ledgerops::start(&plane).await;
    let plans = s.autopilot_plans().await;
    assert_eq!(plans.len(), 1);
    let name = plans[0].metadata.name.clone().unwrap();
    s.wait_plan(&name, PlanPhase::Applied).await;
    for id in &waiting {
        assert_eq!(
            s.ynab_category(id).await,
            Some(category("Groceries")),
            "{id}"
        );
    }
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(s.autopilot_plans().await.len(), 1, "not made twice");
    assert_eq!(s.requests(PATCH).await, 2, "and written once");
}
