//! The autopilot's decisions for one Budget and one pass: which uncategorised transactions the
//! Blessed rules agree on go into the next plan, oldest first, while the day's circuit breaker
//! (transactions and money per day) allows; which are left for a person because rules disagree.
//! The plan it makes is an ordinary CategorizationPlan: the approval policy decides on it.

use std::collections::{BTreeMap, HashSet};

use crate::api::autopilot::{AUTOPILOT_PROPOSER, AutopilotStatus, Disagreement};
use crate::api::common::Amount;
use crate::api::plan::{Assignment, CategorizationPlan};
use crate::api::transaction::Transaction;
use crate::logic::approval::lineage;
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::status as plan_status;
use crate::logic::rule::{Facts, RuleBook, Verdict};
use crate::logic::values::money;
use crate::logic::values::payee::normalise_payee;

/// How many disagreements the status lists.
const DISAGREEMENTS_KEPT: usize = 20;

/// An uncategorised transaction no plan or Transaction holds yet, and what the rules say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub transaction_id: String,
    pub date: String,
    /// Milliunits.
    pub amount: i64,
    pub verdict: Verdict,
}

/// The day's circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub transactions: u32,
    /// Milliunits.
    pub amount: i64,
}

/// A plan to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPlan {
    pub name: String,
    pub assignments: Vec<Assignment>,
    pub description: String,
    /// The rules behind its lines: their blessers shaped it.
    pub rules: Vec<String>,
}

/// What one pass decides: the status to write first, then the plan to make (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    pub status: AutopilotStatus,
    pub plan: Option<NewPlan>,
}

/// Decides a pass for Budget `budget` on `day` (YYYY-MM-DD, UTC), from what was counted so far
/// (`previous`: another day's counts start again from zero). Amounts are shown with `digits`.
/// A plan it makes is named with `nonce` (random, from the caller): nobody can make a plan
/// under the autopilot's next name before it does.
pub fn pass(
    budget: &str,
    day: &str,
    nonce: &str,
    previous: Option<&AutopilotStatus>,
    limits: Limits,
    digits: u8,
    mut candidates: Vec<Candidate>,
) -> Pass {
    let today = previous.filter(|p| p.day == day);
    let mut count = today.map_or(0, |t| t.transactions);
    let mut amount = today.map_or(0, |t| money::parse_decimal(&t.amount.0).unwrap_or(i64::MAX));
    let mut plans: Vec<String> = today.map(|t| t.plans.clone()).unwrap_or_default();
    candidates.sort_by(|a, b| (&a.date, &a.transaction_id).cmp(&(&b.date, &b.transaction_id)));
    let mut assignments = Vec::new();
    let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut tripped = None;
    for c in candidates {
        match c.verdict {
            Verdict::Silent => {}
            Verdict::Disagree { rules, categories } => disagreements.push(Disagreement {
                transaction_id: c.transaction_id,
                rules,
                categories,
            }),
            Verdict::Category { category_id, rules } => {
                if tripped.is_some() {
                    continue;
                }
                let moved = amount.saturating_add(c.amount.saturating_abs());
                if count + 1 > limits.transactions {
                    tripped = Some(format!(
                        "the autopilot stopped for {day}: it already put {count} transaction(s) into plans, the most spec.autopilot.maxTransactionsPerDay allows"
                    ));
                    continue;
                }
                if moved > limits.amount {
                    tripped = Some(format!(
                        "the autopilot stopped for {day}: transaction {} ({}) would bring the day's plans to {}, over spec.autopilot.maxAmountPerDay {}",
                        c.transaction_id,
                        money::to_decimal(c.amount, digits),
                        money::to_decimal(moved, digits),
                        money::to_decimal(limits.amount, digits)
                    ));
                    continue;
                }
                count += 1;
                amount = moved;
                for r in rules {
                    *by_rule.entry(r).or_default() += 1;
                }
                assignments.push(Assignment {
                    transaction_id: c.transaction_id,
                    category_id,
                });
            }
        }
    }
    disagreements.truncate(DISAGREEMENTS_KEPT);
    let plan = (!assignments.is_empty()).then(|| {
        let name = plan_name(budget, day, plans.len() + 1, nonce);
        plans.push(name.clone());
        let from: Vec<String> = by_rule
            .iter()
            .map(|(rule, n)| format!("{rule} ({n})"))
            .collect();
        NewPlan {
            name,
            description: format!(
                "Made by the autopilot of Budget {budget} from Blessed rules: {}. It passes spec.approval like any plan.",
                from.join(", ")
            ),
            assignments,
            rules: by_rule.into_keys().collect(),
        }
    });
    Pass {
        status: AutopilotStatus {
            day: day.to_owned(),
            transactions: count,
            amount: Amount(money::to_decimal(amount, 3)),
            plans,
            tripped,
            disagreements,
        },
        plan,
    }
}

/// The `n`th plan the autopilot makes for `budget` on `day`, made unguessable by `nonce`.
fn plan_name(budget: &str, day: &str, n: usize, nonce: &str) -> String {
    let mut budget = budget.to_owned();
    budget.truncate(200);
    let nonce: String = nonce
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .take(12)
        .collect();
    format!("autopilot-{budget}-{day}-{n}-{nonce}")
}

/// The Event a pass deserves, as `(warning, reason, note)`: the circuit breaker tripping, or a
/// new set of disagreements (asked once, not at every pass).
pub fn announcements(
    previous: Option<&AutopilotStatus>,
    next: &AutopilotStatus,
) -> Vec<(bool, &'static str, String)> {
    let mut out = Vec::new();
    let same_day = previous.filter(|p| p.day == next.day);
    if let Some(why) = &next.tripped
        && same_day.and_then(|p| p.tripped.as_ref()) != Some(why)
    {
        out.push((
            true,
            "AutopilotStopped",
            format!("{why}. The rest waits for a person: /agent suggest proposes them, or raise the limit in spec.autopilot"),
        ));
    }
    let before = previous
        .map(|p| p.disagreements.as_slice())
        .unwrap_or_default();
    if !next.disagreements.is_empty() && next.disagreements != before {
        let listed: Vec<String> = next
            .disagreements
            .iter()
            .take(5)
            .map(|d| format!("{} ({})", d.transaction_id, d.rules.join(", ")))
            .collect();
        out.push((
            true,
            "RulesDisagree",
            format!(
                "Blessed rules lead {} transaction(s) to different categories, so the autopilot leaves them alone: {}. Which one is right? Bless only that one, or narrow their matches",
                next.disagreements.len(),
                listed.join("; ")
            ),
        ));
    }
    out
}

/// Whether the autopilot made `plan`: its lineage, which admission keeps truthful, holds the
/// autopilot's name (a label anyone could set or remove is not asked).
pub fn made_by_autopilot(plan: &CategorizationPlan) -> bool {
    lineage::of(plan.metadata.annotations.as_ref())
        .iter()
        .any(|n| n == AUTOPILOT_PROPOSER)
}

/// The transactions the autopilot leaves alone: those of a plan not settled yet, of any plan it
/// made before (a person may have rejected it), and those a Transaction declares.
pub fn held<'a>(
    plans: impl IntoIterator<Item = &'a CategorizationPlan>,
    transactions: impl IntoIterator<Item = &'a Transaction>,
) -> HashSet<&'a str> {
    let mut held: HashSet<&str> = transactions
        .into_iter()
        .map(|t| t.spec.transaction_id.as_str())
        .collect();
    for p in plans {
        let settled = p
            .status
            .as_ref()
            .is_some_and(|s| plan_status::settled(s, p.metadata.generation));
        if made_by_autopilot(p) || !settled {
            held.extend(
                p.spec
                    .assignments
                    .iter()
                    .flatten()
                    .map(|a| a.transaction_id.as_str()),
            );
        }
    }
    held
}

/// The uncategorised transactions of `mirror`, outside `held`, on which the Blessed rules of
/// `book` say something: agree on a category YNAB still offers, or disagree (asked in the same
/// review). A rule that leads to a category YNAB no longer offers proposes nothing.
pub fn candidates(mirror: &Mirror, book: &RuleBook, held: &HashSet<&str>) -> Vec<Candidate> {
    mirror
        .transactions
        .values()
        .filter(|t| mirror.is_uncategorised(t) && !held.contains(t.id.as_str()))
        .filter_map(|t| {
            let payee = mirror.payee_name(t);
            let normalised = normalise_payee(&payee);
            let verdict = book.verdict(&Facts {
                payee: &payee,
                normalised: &normalised,
                account_id: &t.account_id,
                amount: t.amount,
                memo: t.memo.as_deref(),
            });
            match &verdict {
                Verdict::Silent => None,
                Verdict::Category { category_id, .. } if !mirror.offers_category(category_id) => {
                    None
                }
                _ => Some(Candidate {
                    transaction_id: t.id.clone(),
                    date: t.date.clone(),
                    amount: t.amount,
                    verdict,
                }),
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "autopilot_tests.rs"]
mod tests;
