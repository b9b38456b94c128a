//! Unit tests of `logic/job/classify.rs`.

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
        let t: crate::ynab_model::TransactionSummary = serde_json::from_value(serde_json::json!({
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
