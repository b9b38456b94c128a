//! The autopilot with `ledgerops run`, a real API server and the YNAB simulator: off by default;
//! once on, Blessed rules' agreed transactions become a plan that the approval policy asks about
//! (or runs unasked), with the simulator's writes counted; an unasked write overridden by hand
//! demotes its rule; the daily circuit breaker stops it and says so; rules that disagree make
//! no plan and ask one question.

use std::time::Duration;

use kube::api::{ListParams, Patch, PatchParams};
use ledgerops::api::budget::Budget;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops_e2e::controller::plugin_as;
use ledgerops_e2e::scenario::{
    PATCH, Scenario, WAIT, category, household, most_uncategorised_merchant,
};
use ledgerops_e2e::wait;
use serde_json::json;
use ynab_sim::demo;

const BLESSED_AT: Option<&str> = Some("2026-09-20T10:00:00Z");

/// Waits until the autopilot made `n` plans; returns them.
async fn wait_autopilot_plans(s: &Scenario, n: usize) -> Vec<CategorizationPlan> {
    let mut plans = Vec::new();
    wait::eventually(&format!("{n} autopilot plan(s)"), WAIT, async || {
        plans = s.autopilot_plans().await;
        plans.len() == n
    })
    .await;
    plans
}

fn assigned(plan: &CategorizationPlan) -> Vec<(String, String)> {
    plan.spec
        .assignments
        .iter()
        .flatten()
        .map(|a| (a.transaction_id.clone(), a.category_id.clone()))
        .collect()
}

async fn autopilot(s: &Scenario, spec: serde_json::Value) {
    s.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"autopilot": spec}})),
        )
        .await
        .unwrap();
}

/// The per-Budget rule controller gathers changes for two seconds before a pass: a wait for
/// something that must *not* happen gives it two passes.
async fn two_passes() {
    tokio::time::sleep(Duration::from_secs(6)).await;
}

#[tokio::test]
async fn the_autopilot_is_off_by_default_and_its_plan_passes_the_approval_policy() {
    let s = household("autopilot", json!({"writes": {"enabled": true}})).await;
    s.create_rule("rail-co", "RAIL CO", "Transport", BLESSED_AT)
        .await;
    two_passes().await;
    assert!(s.autopilot_plans().await.is_empty(), "off by default");

    autopilot(&s, json!({"enabled": true})).await;
    let plans = wait_autopilot_plans(&s, 1).await;
    let plan = &plans[0];
    assert_eq!(
        assigned(plan),
        [("tx-049".to_owned(), category("Transport"))],
        "the train, which rail-co speaks for; nothing else"
    );
    let name = plan.metadata.name.clone().unwrap();
    assert!(name.starts_with("autopilot-household-"), "{name}");
    // The Budget's policy asks a person (no autoApproveBelow): nothing is written before.
    s.wait_plan(&name, PlanPhase::AwaitingApproval).await;
    s.wait_event("AutopilotPlanned", Some("household")).await;
    let counted = s
        .api::<Budget>()
        .get("household")
        .await
        .unwrap()
        .status
        .unwrap()
        .autopilot
        .unwrap();
    assert_eq!(
        (counted.transactions, counted.plans),
        (1, vec![name.clone()])
    );
    assert_eq!(s.writes().await, 0);

    s.approve_plan(&name).await;
    assert_eq!(s.requests(PATCH).await, 1);
    assert_eq!(s.ynab_category("tx-049").await, Some(category("Transport")));
    // A person approved it: it confirms the rule.
    wait::until(&s.api::<CategorizationRule>(), "rail-co", WAIT, |r| {
        r.status
            .as_ref()
            .and_then(|s| s.learning.as_ref())
            .is_some_and(|l| l.confirmations == 1)
    })
    .await;
    two_passes().await;
    assert_eq!(
        s.autopilot_plans().await.len(),
        1,
        "nothing left to propose"
    );
    assert_eq!(s.writes().await, 1);
}

#[tokio::test]
async fn an_unasked_autopilot_write_overridden_by_hand_demotes_its_rule() {
    let s = Scenario::new(
        ledgerops_testenv::ControlPlane::shared(),
        "autopilot-run",
        demo::generate(),
    )
    .await;
    ledgerops_e2e::controller::Ledgerops::shared().await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", ledgerops::api::budget::BudgetPhase::Ready)
        .await;
    s.create_rule("rail-co", "RAIL CO", "Transport", BLESSED_AT)
        .await;
    autopilot(&s, json!({"enabled": true})).await;
    let plans = wait_autopilot_plans(&s, 1).await;
    let name = plans[0].metadata.name.clone().unwrap();
    let applied = s.wait_plan(&name, PlanPhase::Applied).await;
    assert_eq!(applied.status.unwrap().decision.unwrap().by, "policy");
    assert_eq!(s.requests(PATCH).await, 1);

    s.recategorise_in_ynab("tx-049", "Restaurants").await;
    let demoted = wait::until(&s.api::<CategorizationRule>(), "rail-co", WAIT, |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(RulePhase::Demoted)
    })
    .await;
    let status = demoted.status.unwrap();
    assert_eq!(
        status.demotion.unwrap().source,
        format!("CategorizationPlan/{name}")
    );
    let learning = status.learning.unwrap();
    assert_eq!(
        (learning.confirmations, learning.corrections),
        (0, 1),
        "its own unasked plan never confirmed it; the override corrects it"
    );
    assert_eq!(s.writes().await, 1, "the override is not written back");
}

#[tokio::test]
async fn the_circuit_breaker_stops_the_autopilot_for_the_day_and_says_so() {
    let s = household("autopilot-breaker", json!({"writes": {"enabled": true}})).await;
    let (merchant, waiting) = most_uncategorised_merchant();
    assert!(waiting.len() >= 2, "the demo has {merchant}: {waiting:?}");
    s.create_rule("merchant", &merchant, "Groceries", BLESSED_AT)
        .await;
    autopilot(&s, json!({"enabled": true, "maxTransactionsPerDay": 1})).await;
    let plans = wait_autopilot_plans(&s, 1).await;
    let first: Vec<String> = assigned(&plans[0]).into_iter().map(|(t, _)| t).collect();
    assert_eq!(first, waiting[..1], "the oldest");
    let event = s.wait_event("AutopilotStopped", Some("household")).await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains("maxTransactionsPerDay") && note.contains("waits for a person"),
        "{note}"
    );
    let budget = s.api::<Budget>().get("household").await.unwrap();
    let counted = budget.status.unwrap().autopilot.unwrap();
    assert_eq!(counted.transactions, 1);
    assert!(counted.tripped.is_some());
    two_passes().await;
    assert_eq!(s.autopilot_plans().await.len(), 1, "stopped for the day");

    // A person raises the limit: the rest follows in a second plan.
    autopilot(&s, json!({"enabled": true, "maxTransactionsPerDay": 50})).await;
    let plans = wait_autopilot_plans(&s, 2).await;
    let second: Vec<String> = assigned(&plans[1]).into_iter().map(|(t, _)| t).collect();
    assert_eq!(second, waiting[1..]);
    wait::until(&s.api::<Budget>(), "household", WAIT, |b| {
        b.status
            .as_ref()
            .and_then(|s| s.autopilot.as_ref())
            .is_some_and(|a| a.tripped.is_none() && a.transactions as usize == waiting.len())
    })
    .await;
    assert_eq!(
        s.writes().await,
        0,
        "the policy asks: nothing written unapproved"
    );
}

#[tokio::test]
async fn rules_that_disagree_make_no_plan_and_ask_one_question() {
    let s = household("autopilot-disagree", json!({"writes": {"enabled": true}})).await;
    s.create_rule("rail-transport", "RAIL CO", "Transport", BLESSED_AT)
        .await;
    s.create_rule("rail-gifts", "RAIL CO", "Gifts", BLESSED_AT)
        .await;
    autopilot(&s, json!({"enabled": true})).await;
    let event = s.wait_event("RulesDisagree", Some("household")).await;
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains("tx-049 (rail-gifts, rail-transport)")
            && note.contains("Which one is right?"),
        "{note}"
    );
    two_passes().await;
    assert!(s.autopilot_plans().await.is_empty());
    let events = s
        .api::<k8s_openapi::api::events::v1::Event>()
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let asked = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("RulesDisagree"))
        .map(|e| e.series.as_ref().map_or(1, |s| s.count))
        .sum::<i32>();
    assert_eq!(asked, 1, "asked once, not at every pass");
    assert_eq!(s.writes().await, 0);
}

/// The month-end of `ledgerops_e2e::month_end`: one plan for everything the rules agree on, one
/// approval, and five YNAB requests from the autopilot's switch to the last write.
#[tokio::test]
async fn a_month_end_of_300_purchases_is_one_plan_one_approval_and_five_requests() {
    use ledgerops_e2e::month_end::{self, DISPUTED, UNCOVERED};

    let s = Scenario::new(
        ledgerops_testenv::ControlPlane::shared(),
        "month-end",
        month_end::fixture(),
    )
    .await;
    ledgerops_e2e::controller::Ledgerops::shared().await;
    month_end::prepare(&s, json!({})).await;
    s.sim.control().reset_counters().await.unwrap();

    month_end::autopilot_on(&s).await;
    let plans = wait_autopilot_plans(&s, 1).await;
    let mut proposed: Vec<String> = assigned(&plans[0]).into_iter().map(|(t, _)| t).collect();
    proposed.sort();
    let mut covered = month_end::covered();
    covered.sort();
    let missing: Vec<&String> = covered.iter().filter(|c| !proposed.contains(c)).collect();
    let extra: Vec<&String> = proposed.iter().filter(|p| !covered.contains(p)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "every covered purchase, nothing else: missing {missing:?}, extra {extra:?}"
    );
    // The disputed ones are asked about once, in the same review.
    let event = s.wait_event("RulesDisagree", Some("household")).await;
    let note = event.note.unwrap_or_default();
    for i in 0..DISPUTED.1 {
        assert!(
            note.contains(&month_end::purchase_id(DISPUTED.0, i)),
            "{note}"
        );
    }
    let name = plans[0].metadata.name.clone().unwrap();
    s.wait_plan(&name, PlanPhase::AwaitingApproval).await;
    let requests = s.approval_requests().await;
    assert_eq!(requests.len(), 1, "one question");
    let request = requests[0].metadata.name.clone().unwrap();
    let plane = ledgerops_testenv::ControlPlane::shared();
    ledgerops_e2e::attacker::approver(plane, &s.ns, "bob").await;

    // One screen: the line that stands out and the disputed ones first, then six groups of 50
    // and the money per category, not 300 lines.
    let (code, screen) = plugin_as(plane, "bob", &["show", &request, "-n", &s.ns]).await;
    println!("$ kubectl ledgerops show {request}\n{screen}");
    assert_eq!(code, 0, "{screen}");
    let outlier = month_end::outlier();
    let disputed: Vec<String> = (0..DISPUTED.1)
        .map(|i| month_end::purchase_id(DISPUTED.0, i))
        .collect();
    let at = |s: &str| {
        screen
            .find(s)
            .unwrap_or_else(|| panic!("{s:?} in {screen}"))
    };
    assert!(at("Look at these first (1 of 1 listed)") < at(&outlier));
    assert!(at(&outlier) < at("The rules disagree on"));
    assert!(at("The rules disagree on") < at(&disputed[0]) && at(&disputed[1]) < at("By payee"));
    assert!(at("By payee") < at("By category"));
    for (merchant, category) in month_end::MERCHANTS {
        assert!(
            screen.contains(&format!("\"{merchant}\"")) && screen.contains(category),
            "{merchant} in {screen}"
        );
    }
    assert!(screen.contains("300 to change, 8500.00 moved"), "{screen}");
    assert!(
        screen.contains("Groceries or Household"),
        "the rules' categories: {screen}"
    );
    assert!(screen.lines().count() < 60, "one screen: {screen}");

    // One human action: approve, less the outlier, with one disputed purchase answered.
    let answer = format!("{}=Groceries", disputed[0]);
    let args = [
        "approve", &request, "-n", &s.ns, "--drop", &outlier, "--set", &answer, "--yes",
    ];
    let (code, out) = plugin_as(plane, "bob", &args).await;
    println!("$ kubectl ledgerops approve {request} --drop {outlier} --set {answer} --yes\n{out}");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Applied: operation"), "{out}");
    let counters = s.sim.control().counters().await.unwrap();
    println!("month-end YNAB requests: {:?}", counters.by_endpoint);
    assert_eq!(s.requests(PATCH).await, 3, "three bulk updates of 100");
    assert!(
        counters.total <= 5,
        "one delta sync, one fresh read, three bulk updates: {:?}",
        counters.by_endpoint
    );
    for id in covered.iter().filter(|id| **id != outlier) {
        assert!(s.ynab_category(id).await.is_some(), "{id}");
    }
    assert_eq!(s.ynab_category(&outlier).await, None, "dropped: waits");
    assert_eq!(
        s.ynab_category(&disputed[0]).await,
        Some(ledgerops_e2e::scenario::category("Groceries")),
        "answered in the same review"
    );
    assert_eq!(s.ynab_category(&disputed[1]).await, None, "left for later");
    for i in 0..UNCOVERED.1 {
        let id = month_end::purchase_id(UNCOVERED.0, i);
        assert_eq!(s.ynab_category(&id).await, None, "{id} waits for a person");
    }
}
