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
    let usable = |id: &str| {
        mirror
            .categories
            .get(id)
            .is_some_and(|c| !c.hidden && !c.internal && !c.deleted)
    };
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
        if !usable(cat) || mirror.subtransactions.contains_key(&t.id) {
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
                Verdict::Category { category_id, rules } if usable(&category_id) => {
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
mod tests {
    use super::*;

    fn mirror() -> Mirror {
        let mut m = Mirror::default();
        for (id, name, hidden) in [
            ("groc", "Groceries", false),
            ("fuel", "Fuel", false),
            ("old", "Old", true),
        ] {
            let c: crate::ynab_model::Category = serde_json::from_value(serde_json::json!({
                "id": id, "category_group_id": "g", "name": name, "hidden": hidden,
                "internal": false, "budgeted": 0, "activity": 0, "balance": 0, "deleted": false
            }))
            .unwrap();
            m.categories.insert(id.into(), c);
        }
        let tx = |id: &str, date: &str, payee: &str, cat: Option<&str>, transfer: bool| {
            let t: crate::ynab_model::TransactionSummary =
                serde_json::from_value(serde_json::json!({
                    "id": id, "date": date, "amount": -12340, "cleared": "cleared",
                    "approved": true, "account_id": "a", "import_payee_name": payee,
                    "category_id": cat, "deleted": false,
                    "transfer_account_id": if transfer { Some("b") } else { None },
                }))
                .unwrap();
            (id.to_owned(), t)
        };
        m.transactions.extend([
            tx(
                "h1",
                "2026-06-01",
                "CARTE 01/06 MONOPRIX PARIS 11",
                Some("groc"),
                false,
            ),
            tx(
                "h2",
                "2026-06-08",
                "CARTE 08/06 MONOPRIX PARIS 11",
                Some("groc"),
                false,
            ),
            tx(
                "h3",
                "2026-06-09",
                "CARTE 09/06 MONOPRIX PARIS 11",
                Some("fuel"),
                false,
            ),
            tx("h4", "2026-06-10", "SQ *SHELL 0042", Some("old"), false),
            tx(
                "u1",
                "2026-07-02",
                "CARTE 02/07 MONOPRIX PARIS 11",
                None,
                false,
            ),
            tx("u2", "2026-07-03", "SQ *SHELL 0043", None, false),
            tx("u3", "2026-07-04", "NEVER SEEN", None, false),
            tx(
                "u4",
                "2026-07-05",
                "CARTE 05/07 MONOPRIX PARIS 11",
                None,
                true,
            ),
            tx(
                "u5",
                "2026-08-01",
                "CARTE 01/08 MONOPRIX PARIS 11",
                None,
                false,
            ),
        ]);
        m.server_knowledge = 1;
        m
    }

    #[test]
    fn suggests_the_payees_usual_category_with_a_confidence() {
        let m = mirror();
        let july = suggest(&m, &RuleBook::default(), Some("2026-07"));
        // u2's payee was only put in a hidden category, u3 has no history, u4 is a transfer.
        assert_eq!(july.len(), 1, "{july:?}");
        let s = &july[0];
        assert_eq!(
            (s.transaction_id.as_str(), s.category_id.as_str()),
            ("u1", "groc")
        );
        assert_eq!(s.category_name, "Groceries");
        assert_eq!(s.support, 2);
        // 2 of 3 past transactions, discounted for the small sample: 2 / (3 + 1).
        assert_eq!(s.confidence, 50);
        let all = suggest(&m, &RuleBook::default(), None);
        let ids: Vec<&str> = all.iter().map(|s| s.transaction_id.as_str()).collect();
        assert_eq!(ids, ["u1", "u5"]);
        assert_eq!(
            suggest(&m, &RuleBook::default(), None),
            all,
            "deterministic"
        );
        assert!(all.iter().all(|s| s.source == Source::History));
    }

    fn book(rules: &[(&str, &str, &str)]) -> RuleBook {
        use crate::api::rule::{Blessing, CategorizationRuleSpec, RuleMatch};
        RuleBook::new(rules.iter().map(|(name, pattern, category)| {
            let spec = CategorizationRuleSpec {
                budget_ref: crate::api::common::LocalRef { name: "b".into() },
                matches: RuleMatch {
                    payee_pattern: Some((*pattern).into()),
                    ..RuleMatch::default()
                },
                category_id: (*category).into(),
                blessing: Some(Blessing {
                    by: "alice".into(),
                    at: None,
                }),
            };
            crate::logic::rule::blessed(name, &spec).expect("blessed")
        }))
    }

    #[test]
    fn blessed_rules_come_before_history_and_say_so() {
        let m = mirror();
        let rules = book(&[
            ("shell", "shell*", "fuel"),
            ("never", "never*", "groc"),
            ("mono-groc", "monoprix*", "groc"),
            ("mono-fuel", "*paris", "fuel"),
        ]);
        let july = suggest(&m, &rules, Some("2026-07"));
        let got: Vec<(&str, &str, &Source)> = july
            .iter()
            .map(|s| (s.transaction_id.as_str(), s.category_id.as_str(), &s.source))
            .collect();
        let names = |n: &[&str]| n.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        assert_eq!(
            got,
            [
                // Rules that disagree: the history speaks, and says they disagree.
                (
                    "u1",
                    "groc",
                    &Source::HistoryRulesDisagree(names(&["mono-fuel", "mono-groc"]))
                ),
                // No usable history, but a Blessed rule.
                ("u2", "fuel", &Source::Rules(names(&["shell"]))),
                // No history at all, but a Blessed rule.
                ("u3", "groc", &Source::Rules(names(&["never"]))),
            ]
        );
        assert_eq!(july[1].confidence, 100);
        // A rule leading to a hidden category does not speak: the history does.
        let hidden = book(&[("old", "monoprix*", "old")]);
        let u1 = &suggest(&m, &hidden, Some("2026-07"))[0];
        assert_eq!(
            (u1.category_id.as_str(), &u1.source),
            ("groc", &Source::History)
        );
    }

    #[test]
    fn months() {
        assert!(in_month("2026-07-04", Some("2026-07")));
        assert!(!in_month("2026-07-04", Some("2026-08")));
        assert!(in_month("2026-07-04", None));
    }
}
