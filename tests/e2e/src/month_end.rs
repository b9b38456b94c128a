//! A household's month-end, as the suites and `--bench month_end` run it: 300 new uncategorised
//! purchases at six merchants, each merchant with a Blessed rule; 10 at a merchant no rule
//! covers; 2 at one on which two Blessed rules disagree; one purchase far above its merchant's
//! others. The autopilot is switched on, and a
//! person approves what it proposes.

use kube::api::{Patch, PatchParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::logic::values::payee::normalise_payee;
use ledgerops::ynab_model::Payee;
use serde_json::json;
use ynab_sim::{Fixture, demo};

use crate::scenario::{Scenario, uncategorised};

/// The merchants with a Blessed rule each, and the category it leads to.
pub const MERCHANTS: [(&str, &str); 6] = [
    ("Alpha Mart", "Groceries"),
    ("Beta Rail", "Transport"),
    ("Gamma Fuel", "Fuel"),
    ("Delta Books", "Hobbies"),
    ("Epsilon Bistro", "Restaurants"),
    ("Zeta Pharmacy", "Pharmacy"),
];

/// Purchases per merchant with a rule.
pub const PER_MERCHANT: usize = 50;

/// The merchant no rule covers, and its purchases.
pub const UNCOVERED: (&str, usize) = ("Omega Kiosk", 10);

/// The merchant two Blessed rules disagree on (Groceries, Household), and its purchases.
pub const DISPUTED: (&str, usize) = ("Twin Market", 2);

/// The one purchase far above its merchant's others (900.00 at Alpha Mart, whose others move
/// 1.00 to 49.00): the review lists it first.
pub fn outlier() -> String {
    purchase_id(MERCHANTS[0].0, PER_MERCHANT - 1)
}

/// When the rules were blessed.
pub const BLESSED_AT: &str = "2026-09-20T10:00:00Z";

/// The id of purchase `i` at `merchant`.
pub fn purchase_id(merchant: &str, i: usize) -> String {
    let slug: String = merchant
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("me-{slug}-{i:03}")
}

/// The purchases the rules cover, merchant by merchant.
pub fn covered() -> Vec<String> {
    MERCHANTS
        .iter()
        .flat_map(|(m, _)| (0..PER_MERCHANT).map(|i| purchase_id(m, i)))
        .collect()
}

/// The demo fixture with the month's purchases added (uncategorised, unreconciled, each at a
/// payee of its own merchant).
pub fn fixture() -> Fixture {
    let mut fixture = demo::generate();
    let plan = &mut fixture.plans[0];
    let all = MERCHANTS
        .iter()
        .map(|(m, _)| (*m, PER_MERCHANT))
        .chain([UNCOVERED, DISPUTED]);
    for (n, (merchant, count)) in all.enumerate() {
        let payee_id = format!("0000e0d0-0000-4000-8000-{n:012}");
        plan.payees.push(Payee {
            id: payee_id.clone(),
            name: merchant.to_owned(),
            transfer_account_id: None,
            deleted: false,
        });
        for i in 0..count {
            let mut t = uncategorised(&plan.transactions, &purchase_id(merchant, i));
            t.summary.payee_id = Some(payee_id.clone());
            t.payee_name = Some(merchant.to_owned());
            t.summary.amount = -1_000 * (i as i64 + 1);
            if t.summary.id == outlier() {
                t.summary.amount = -900_000;
            }
            plan.transactions.push(t);
        }
    }
    fixture
}

/// The Budget `household` of `s` on [`fixture`], synced, writes on, the approval policy as
/// given, and its rules Blessed: one per merchant, two that disagree on [`DISPUTED`].
pub async fn prepare(s: &Scenario, approval: serde_json::Value) {
    s.create_budget(
        "household",
        demo::TOKEN,
        json!({"writes": {"enabled": true}, "approval": approval}),
    )
    .await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    let rules = MERCHANTS
        .iter()
        .map(|(m, c)| (*m, *c))
        .chain([(DISPUTED.0, "Groceries"), (DISPUTED.0, "Household")]);
    for (n, (merchant, category)) in rules.enumerate() {
        let name = format!("rule-{n}");
        s.create_rule(
            &name,
            &normalise_payee(merchant),
            category,
            Some(BLESSED_AT),
        )
        .await;
    }
}

/// Switches the autopilot on, with a breaker well above the month (1,000 purchases, 10,000 a
/// day; the month's 300 move 8,500).
pub async fn autopilot_on(s: &Scenario) {
    let autopilot =
        json!({"enabled": true, "maxTransactionsPerDay": 1000, "maxAmountPerDay": "10000"});
    let spec = json!({"spec": {"autopilot": autopilot}});
    s.api::<Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .unwrap();
}
