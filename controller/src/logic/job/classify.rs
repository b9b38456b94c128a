//! The `suggest` classifier: for each uncategorized transaction, the category its Blessed
//! CategorizationRules lead to, or else the one its payee was given most often before, with a
//! confidence. Payees are normalised first, because banks add noise (card prefixes, store
//! numbers, references) to the same merchant.

use std::collections::{BTreeMap, HashMap};

use crate::logic::budget::mirror::Mirror;
use crate::logic::rule::{Facts, RuleBook, Verdict};
use crate::logic::values::payee::normalise_payee;

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub transaction_id: String,
    pub date: String,
    /// Milliunits.
    pub amount: i64,
    /// The payee as YNAB shows it (untrusted text).
    pub payee: String,
    pub category_id: String,
    pub category_name: String,
    /// 0..=100: the share of the payee's past transactions in this category, discounted when
    /// there are few of them.
    pub confidence: u8,
    /// How many past transactions of the payee went to this category.
    pub support: u32,
    /// Where the category comes from.
    pub source: Source,
}

/// Where a suggestion comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Blessed rules (their names) that all lead to the category.
    Rules(Vec<String>),
    /// The payee's history.
    History,
    /// The payee's history, because these Blessed rules match and disagree.
    HistoryRulesDisagree(Vec<String>),
}

/// Whether `date` (YYYY-MM-DD) is in `month` (YYYY-MM), or any month when None.
fn in_month(date: &str, month: Option<&str>) -> bool {
    month.is_none_or(|m| date.starts_with(m) && date.as_bytes().get(7) == Some(&b'-'))
}

/// Suggestions for the uncategorized transactions of `month` (all when None), oldest first:
/// from the Blessed rules in `rules` when they agree on a category that is in use, else from the
/// payee's history. Transfers, split transactions and transactions that neither a rule nor the
/// payee's history speaks for are left out.
pub fn suggest(mirror: &Mirror, rules: &RuleBook, month: Option<&str>) -> Vec<Suggestion> {
    let payee_name = |t| mirror.payee_name(t);
    let category_name = |id: &str| {
        mirror
            .categories
            .get(id)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    };
    // History: normalised payee -> category -> count.
    let mut history: HashMap<String, BTreeMap<String, u32>> = HashMap::new();
    for t in mirror.transactions.values() {
        if t.deleted || t.transfer_account_id.is_some() {
            continue;
        }
        let Some(cat) = t.category_id.as_deref() else {
            continue;
        };
        if !mirror.offers_category(cat) || mirror.subtransactions.contains_key(&t.id) {
            continue;
        }
        let key = normalise_payee(&payee_name(t));
        if key.is_empty() {
            continue;
        }
        *history
            .entry(key)
            .or_default()
            .entry(cat.to_owned())
            .or_default() += 1;
    }
    let mut out: Vec<Suggestion> = mirror
        .transactions
        .values()
        .filter(|t| mirror.is_uncategorised(t) && in_month(&t.date, month))
        .filter_map(|t| {
            let payee = payee_name(t);
            let normalised = normalise_payee(&payee);
            let facts = Facts {
                payee: &payee,
                normalised: &normalised,
                account_id: &t.account_id,
                amount: t.amount,
                memo: t.memo.as_deref(),
            };
            let suggestion = |category_id: String, confidence, support, source| Suggestion {
                transaction_id: t.id.clone(),
                date: t.date.clone(),
                amount: t.amount,
                payee: payee.clone(),
                category_name: category_name(&category_id),
                category_id,
                confidence,
                support,
                source,
            };
            let disagree = match rules.verdict(&facts) {
                Verdict::Category { category_id, rules }
                    if mirror.offers_category(&category_id) =>
                {
                    return Some(suggestion(category_id, 100, 0, Source::Rules(rules)));
                }
                Verdict::Disagree { rules, .. } => Some(rules),
                _ => None,
            };
            let counts = history.get(&normalised)?;
            let total: u32 = counts.values().sum();
            // Highest count; ties go to the lowest category id, for determinism.
            let (best, support) = counts
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
            let confidence = (100 * u64::from(*support) / (u64::from(total) + 1)).min(100) as u8;
            let source = match disagree {
                Some(rules) => Source::HistoryRulesDisagree(rules),
                None => Source::History,
            };
            Some(suggestion(best.clone(), confidence, *support, source))
        })
        .collect();
    out.sort_by(|a, b| (&a.date, &a.transaction_id).cmp(&(&b.date, &b.transaction_id)));
    out
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
