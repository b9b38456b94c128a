//! A proposal summed up for one screen: a 300-line plan is read as a handful of groups (payee
//! and category), the money per category, the few lines that deserve a look first, and the
//! transactions the rules disagree on, asked in the same review. Computed from every line; the
//! request and the plan list only the first 100.

use std::collections::BTreeMap;

use super::preview::{PlannedChange, planned_change};
use crate::api::autopilot::Disagreement;
use crate::api::common::{Amount, Review, ReviewException, ReviewGroup, ReviewQuestion};
use crate::logic::budget::mirror::Mirror;
use crate::logic::values::money;

/// How many payee groups, exceptions and questions a review lists.
const GROUPS: usize = 50;
const EXCEPTIONS: usize = 50;
const QUESTIONS: usize = 20;
/// How many categories it totals.
const CATEGORIES: usize = 100;

/// A line moving this many times its group's median (or more) stands out, in a group of at
/// least [`OUTLIER_GROUP`] lines.
const OUTLIER_TIMES: i64 = 5;
const OUTLIER_GROUP: usize = 3;

/// What makes a line an exception, besides its own content.
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// Lines moving at least this much (milliunits, sign ignored) are large: the Budget's
    /// auto-approve limit, when it has one.
    pub large_from: Option<i64>,
    pub decimal_digits: u8,
}

/// The review of `changes`, with `questions` asked besides.
pub fn review(changes: &[PlannedChange], watch: Watch, questions: Vec<ReviewQuestion>) -> Review {
    let amount =
        |c: &PlannedChange| money::parse_decimal(&c.change.amount.0).map_or(0, i64::saturating_abs);
    let key = |c: &PlannedChange| {
        let category = c
            .change
            .to_category
            .clone()
            .or_else(|| c.change.to_category_id.clone());
        (c.change.payee.clone(), category)
    };
    let mut members: BTreeMap<(Option<String>, Option<String>), Vec<i64>> = BTreeMap::new();
    for c in changes {
        members.entry(key(c)).or_default().push(amount(c));
    }
    let mut categories: BTreeMap<Option<String>, (u32, i64)> = BTreeMap::new();
    let mut exceptions = Vec::new();
    for c in changes {
        let m = amount(c);
        let slot = categories.entry(key(c).1).or_default();
        slot.0 = slot.0.saturating_add(1);
        slot.1 = slot.1.saturating_add(m);
        let typical = members.get(&key(c)).and_then(|all| median(all));
        if let Some(why) = exception(c, m, typical, watch) {
            exceptions.push(ReviewException {
                change: c.change.clone(),
                why,
            });
        }
    }
    let groups: BTreeMap<_, (u32, i64)> = members
        .into_iter()
        .map(|(k, all)| {
            let count = u32::try_from(all.len()).unwrap_or(u32::MAX);
            (k, (count, all.into_iter().fold(0i64, i64::saturating_add)))
        })
        .collect();
    let shown = |count: u32, total: i64| (count, money::to_decimal(total, watch.decimal_digits));
    let mut groups: Vec<ReviewGroup> = groups
        .into_iter()
        .map(|((payee, category), (count, total))| {
            let (count, total) = shown(count, total);
            ReviewGroup {
                payee,
                category,
                count,
                total: Amount(total),
            }
        })
        .collect();
    groups.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.payee.cmp(&b.payee)));
    let rest = fold_rest(&mut groups, watch.decimal_digits);
    groups.extend(rest);
    let mut by_money: Vec<(Option<String>, u32, i64)> = categories
        .into_iter()
        .map(|(c, (n, t))| (c, n, t))
        .collect();
    by_money.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let categories = by_money
        .into_iter()
        .take(CATEGORIES)
        .map(|(category, count, total)| {
            let (count, total) = shown(count, total);
            ReviewGroup {
                payee: None,
                category,
                count,
                total: Amount(total),
            }
        })
        .collect();
    let exception_count = u32::try_from(exceptions.len()).unwrap_or(u32::MAX);
    exceptions.truncate(EXCEPTIONS);
    Review {
        groups,
        categories,
        exceptions,
        exception_count,
        questions: questions.into_iter().take(QUESTIONS).collect(),
    }
}

/// Beyond [`GROUPS`], the smallest groups are counted in one last group with no payee.
fn fold_rest(groups: &mut Vec<ReviewGroup>, digits: u8) -> Option<ReviewGroup> {
    if groups.len() <= GROUPS {
        return None;
    }
    let rest = groups.split_off(GROUPS - 1);
    let count = rest.iter().map(|g| g.count).fold(0u32, u32::saturating_add);
    let total = rest
        .iter()
        .filter_map(|g| money::parse_decimal(&g.total.0).ok())
        .fold(0i64, i64::saturating_add);
    Some(ReviewGroup {
        payee: None,
        category: Some(format!("{} more groups", rest.len())),
        count,
        total: Amount(money::to_decimal(total, digits)),
    })
}

/// The median of a group's amounts, when the group is large enough to have a typical line.
fn median(amounts: &[i64]) -> Option<i64> {
    if amounts.len() < OUTLIER_GROUP {
        return None;
    }
    let mut sorted = amounts.to_vec();
    sorted.sort_unstable();
    Some(sorted[sorted.len() / 2])
}

/// Why line `c` (moving `moved`, in a group whose median line moves `typical`) deserves a look
/// first, if it does.
fn exception(c: &PlannedChange, moved: i64, typical: Option<i64>, watch: Watch) -> Option<String> {
    let mut why = Vec::new();
    if let Some(from) = c
        .change
        .from_category
        .as_ref()
        .or(c.change.from_category_id.as_ref())
    {
        why.push(format!("moves it out of {from}, which someone chose"));
    }
    if let Some(typical) = typical.filter(|t| *t > 0)
        && moved >= typical.saturating_mul(OUTLIER_TIMES)
    {
        why.push(format!(
            "{}× the typical {} of its payee's lines",
            moved / typical,
            money::to_decimal(typical, watch.decimal_digits)
        ));
    }
    if let Some(limit) = watch.large_from
        && moved >= limit
    {
        why.push(format!(
            "at least {} (the Budget's auto-approve limit)",
            money::to_decimal(limit, watch.decimal_digits)
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// The questions of `disagreements` on `mirror`: each transaction as it is, with the rules
/// that disagree on it. Transactions the mirror no longer holds, or that a person categorised
/// meanwhile, are not asked.
pub fn questions(
    disagreements: &[Disagreement],
    mirror: &Mirror,
    digits: u8,
) -> Vec<ReviewQuestion> {
    disagreements
        .iter()
        .filter_map(|d| {
            let tx = mirror.transactions.get(&d.transaction_id)?;
            let uncategorised = tx.category_id.as_ref().is_none_or(|id| {
                mirror
                    .categories
                    .get(id)
                    .is_some_and(super::is_uncategorized)
            });
            let mut categories: Vec<String> = d
                .categories
                .iter()
                .map(|id| mirror.category_name(id))
                .collect();
            categories.sort();
            uncategorised.then(|| ReviewQuestion {
                change: planned_change(tx, None, mirror, digits).change,
                rules: d.rules.clone(),
                categories,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
