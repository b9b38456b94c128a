//! `approve --drop TX --set TX=CATEGORY`: the approver's edits, read from the flags, checked
//! against the plan as ledgerops will check them, and shown as the edited preview before the
//! confirmation. ledgerops previews the edited set against fresh YNAB state again before it
//! writes it; what is shown here is what the request and the Budget list.

use std::collections::HashMap;

use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, NamedCategory};
use ledgerops::api::common::{CategoryChange, CategoryEdit, Edits};
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::logic::plan::{category_name, edit};

use super::preview::{category_move, quote_payee};
use super::table::{self, Style};

/// The edits the flags ask for, with each category name resolved to its id among the
/// Budget's `categories`. `Err` names the flag that is wrong and what to write instead.
pub fn from_flags(
    drop: &[String],
    set: &[String],
    categories: &[NamedCategory],
) -> Result<Edits, String> {
    let mut edits = Edits {
        drop: drop.iter().map(|d| d.trim().to_owned()).collect(),
        set: Vec::new(),
    };
    for value in set {
        let Some((tx, category)) = value.split_once('=') else {
            return Err(format!(
                "--set {value:?} names no category: write --set TRANSACTION=CATEGORY, e.g. --set tx-049=Groceries"
            ));
        };
        let category_id = category_name::resolve(category, categories)
            .map_err(|e| format!("--set {value}: {e}"))?;
        edits.set.push(CategoryEdit {
            transaction_id: tx.trim().to_owned(),
            category_id,
        });
    }
    if let Some(empty) = edits
        .drop
        .iter()
        .chain(edits.set.iter().map(|s| &s.transaction_id))
        .find(|t| t.is_empty())
    {
        return Err(format!(
            "an edit names no transaction ({empty:?}): write its YNAB id"
        ));
    }
    Ok(edits)
}

/// Refuses, with the reason, edits ledgerops would refuse: lines the plan does not hold (or the
/// review does not ask about), a line edited twice, nothing left, categories chosen under four
/// eyes, edits on anything but a plan.
pub fn check(
    edits: &Edits,
    request: &ApprovalRequest,
    plan: Option<&CategorizationPlan>,
    budget: &Budget,
) -> Result<(), String> {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    let Some(plan) = plan else {
        return Err(format!(
            "ApprovalRequest {name} does not ask about a CategorizationPlan that exists: only a plan's approval carries edits. Approve or reject it as it is."
        ));
    };
    edit::check(edits, plan, budget, request.spec.four_eyes)
        .map_err(|e| format!("not approving ApprovalRequest {name}: {e}"))
}

/// The edited preview: each edited line as proposed and as the approver leaves it, then the
/// counts before and after.
pub fn preview(
    edits: &Edits,
    listed: &[CategoryChange],
    change_count: u32,
    categories: &[NamedCategory],
    style: Style,
) -> String {
    let by_id: HashMap<&str, &CategoryChange> = listed
        .iter()
        .map(|c| (c.transaction_id.as_str(), c))
        .collect();
    let row = |tx: &str, yours: String| -> Vec<String> {
        match by_id.get(tx) {
            Some(c) => vec![
                tx.to_owned(),
                c.date.clone(),
                c.amount.0.clone(),
                quote_payee(c.payee.as_deref()),
                category_move(c),
                yours,
            ],
            None => vec![
                tx.to_owned(),
                "?".into(),
                "?".into(),
                "(not listed: ledgerops previews it)".into(),
                "-".into(),
                yours,
            ],
        }
    };
    let mut rows: Vec<Vec<String>> = edits
        .drop
        .iter()
        .map(|tx| row(tx, "dropped: left as it is".into()))
        .collect();
    rows.extend(edits.set.iter().map(|s| {
        let name = category_name::name_of(&s.category_id, categories);
        row(&s.transaction_id, format!("→ {name}"))
    }));
    let headers = [
        "TRANSACTION",
        "DATE",
        "AMOUNT",
        "PAYEE",
        "PROPOSED",
        "YOURS",
    ];
    let added = edits
        .set
        .iter()
        .filter(|s| !by_id.contains_key(s.transaction_id.as_str()))
        .count();
    let after = usize::try_from(change_count)
        .unwrap_or(usize::MAX)
        .saturating_sub(edits.drop.len())
        .saturating_add(added);
    let mut out = format!("\n{}\n", style.bold("Your edits"));
    out.push_str(&table::render(&headers, &rows, style));
    out.push_str(&format!(
        "{change_count} proposed; you drop {} and set {} ({added} not among the listed changes): about {after} changes are written after ledgerops previews the edited set against YNAB.\n",
        edits.drop.len(),
        edits.set.len(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::preview::tests::change;
    use crate::logic::queue::tests::request;
    use ledgerops::api::approval::ApprovalPhase;
    use ledgerops::api::autopilot::AUTOPILOT_LABEL;
    use serde_json::json;

    const PLAIN: Style = Style { colour: false };

    fn categories() -> Vec<NamedCategory> {
        serde_json::from_value(json!([
            {"id": "cat-g", "name": "Groceries", "group": "Everyday"},
            {"id": "cat-t", "name": "Transport", "group": "Everyday"},
        ]))
        .unwrap()
    }

    /// A plan; the autopilot's is the one the Budget's status lists.
    fn plan(autopilot: bool) -> CategorizationPlan {
        let name = if autopilot {
            "autopilot-1"
        } else {
            "september"
        };
        let mut p: CategorizationPlan = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
            "metadata": {"name": name},
            "spec": {"budgetRef": {"name": "household"}, "assignments": [
                {"transactionId": "tx-048", "categoryId": "cat-g"},
                {"transactionId": "tx-049", "categoryId": "cat-g"},
            ]}
        }))
        .unwrap();
        // Anyone who creates a plan can label it: the label alone makes it nobody's autopilot.
        p.metadata.labels = Some([(AUTOPILOT_LABEL.to_owned(), "household".to_owned())].into());
        p
    }

    fn budget(four_eyes: bool) -> Budget {
        serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
            "metadata": {"name": "household"},
            "spec": {"planId": "p", "tokenSecretRef": {"name": "t", "key": "k"},
                     "approval": {"fourEyes": four_eyes}},
            "status": {"autopilot": {"day": "2026-09-30", "transactions": 0, "amount": "0",
                       "plans": ["autopilot-1"],
                       "disagreements": [{"transactionId": "tx-077", "rules": ["a", "b"]}]}}
        }))
        .unwrap()
    }

    fn flags(drop: &[&str], set: &[&str]) -> Result<Edits, String> {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        from_flags(&own(drop), &own(set), &categories())
    }

    #[test]
    fn flags_become_edits_with_category_ids() {
        let e = flags(&["tx-048"], &["tx-049=transport"]).unwrap();
        assert_eq!(e.drop, ["tx-048"]);
        assert_eq!(
            (
                e.set[0].transaction_id.as_str(),
                e.set[0].category_id.as_str()
            ),
            ("tx-049", "cat-t")
        );
        for (set, want) in [
            ("tx-049", "names no category"),
            ("tx-049=Fuel", "no category is named \"Fuel\""),
            ("=Groceries", "names no transaction"),
        ] {
            let err = flags(&[], &[set]).expect_err(set);
            assert!(err.contains(want), "{set}: {err}");
        }
    }

    #[test]
    fn edits_are_checked_as_ledgerops_checks_them() {
        let r = request("ns", "september-1", 10, 100, Some(ApprovalPhase::Pending));
        let ok = |e: &Edits, p: &CategorizationPlan, b: &Budget| check(e, &r, Some(p), b);
        let set_049 = flags(&[], &["tx-049=Transport"]).unwrap();
        assert_eq!(ok(&set_049, &plan(false), &budget(false)), Ok(()));
        let four = ok(&set_049, &plan(false), &budget(true)).unwrap_err();
        assert!(four.contains("four eyes"), "{four}");
        let drop_049 = flags(&["tx-049"], &[]).unwrap();
        assert_eq!(ok(&drop_049, &plan(false), &budget(true)), Ok(()));
        let disputed = flags(&[], &["tx-077=Groceries"]).unwrap();
        assert_eq!(
            ok(&disputed, &plan(true), &budget(false)),
            Ok(()),
            "the autopilot's review asks about it"
        );
        let not_asked = ok(&disputed, &plan(false), &budget(false)).unwrap_err();
        assert!(
            not_asked.contains("tx-077 is not in the proposal"),
            "{not_asked}"
        );
        let all = flags(&["tx-048", "tx-049"], &[]).unwrap();
        assert!(
            ok(&all, &plan(false), &budget(false))
                .unwrap_err()
                .contains("reject the request instead")
        );
        let no_plan = check(&drop_049, &r, None, &budget(false)).unwrap_err();
        assert!(
            no_plan.contains("only a plan's approval carries edits"),
            "{no_plan}"
        );
    }

    #[test]
    fn the_edited_preview_shows_each_line_as_proposed_and_as_left() {
        let listed = vec![
            change("tx-048", "-8.40", Some("MONOPRIX")),
            change("tx-049", "-45.00", None),
        ];
        let e = flags(&["tx-048"], &["tx-049=Transport", "tx-077=Groceries"]).unwrap();
        let text = preview(&e, &listed, 2, &categories(), PLAIN);
        for want in [
            "tx-048        2025-09-16   -8.40    \"MONOPRIX\"",
            "dropped: left as it is",
            "→ Transport",
            "tx-077        ?            ?        (not listed: ledgerops previews it)",
            "2 proposed; you drop 1 and set 2 (1 not among the listed changes): about 2 changes are written",
        ] {
            assert!(text.contains(want), "{want:?} in {text}");
        }
    }
}
