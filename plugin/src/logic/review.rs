//! A proposal's review as one screen: the lines to look at first and what the rules disagree
//! on, then (for a long proposal, instead of every line) the groups by payee and category and
//! the money per category, as ledgerops computed them from every line.

use ledgerops::api::common::{Review, ReviewGroup};

use super::preview::{self, quote_payee};
use super::table::{self, Style};

/// Up to this many changes, every listed line is shown; beyond, the groups are.
pub const SHORT: u32 = 20;

/// Whether a proposal of `change_count` changes is shown by its groups rather than line by line.
pub fn grouped(review: Option<&Review>, change_count: u32) -> bool {
    review.is_some() && change_count > SHORT
}

/// The review's sections: exceptions and questions always, groups and totals when `grouped`.
pub fn block(review: &Review, grouped: bool, style: Style) -> String {
    let mut out = String::new();
    let mut section = |title: String, headers: &[&str], rows: Vec<Vec<String>>| {
        if !rows.is_empty() {
            out.push_str(&format!("{title}\n"));
            out.push_str(&table::render(headers, &rows, style));
            out.push('\n');
        }
    };
    let listed = review.exceptions.len();
    let all = review
        .exception_count
        .max(u32::try_from(listed).unwrap_or(u32::MAX));
    let exceptions = review.exceptions.iter().map(|e| {
        let mut cells = preview::row(&e.change);
        cells.push(e.why.clone());
        cells
    });
    section(
        format!(
            "{} ({listed} of {all} listed)",
            style.bold("Look at these first")
        ),
        &["TRANSACTION", "DATE", "AMOUNT", "PAYEE", "CATEGORY", "WHY"],
        exceptions.collect(),
    );
    let questions = review.questions.iter().map(|q| {
        let mut cells = preview::row(&q.change);
        cells[4] = q.categories.join(" or ");
        cells.push(q.rules.join(", "));
        cells
    });
    section(
        format!(
            "{} (answer with --set TRANSACTION=CATEGORY in the same approval, or leave them for later)",
            style.bold("The rules disagree on")
        ),
        &[
            "TRANSACTION",
            "DATE",
            "AMOUNT",
            "PAYEE",
            "CATEGORY",
            "RULES",
        ],
        questions.collect(),
    );
    if grouped {
        section(
            style.bold("By payee"),
            &["PAYEE", "CATEGORY", "LINES", "TOTAL"],
            groups(&review.groups, true),
        );
        section(
            style.bold("By category"),
            &["CATEGORY", "LINES", "TOTAL"],
            groups(&review.categories, false),
        );
    }
    out
}

fn groups(groups: &[ReviewGroup], with_payee: bool) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            let category = g
                .category
                .clone()
                .unwrap_or_else(|| "(uncategorized)".into());
            let mut row = vec![category, g.count.to_string(), g.total.0.clone()];
            if with_payee {
                let payee = g
                    .payee
                    .as_deref()
                    .map_or_else(|| "(other payees)".to_owned(), |p| quote_payee(Some(p)));
                row.insert(0, payee);
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::preview::tests::change;
    use ledgerops::api::common::{Amount, ReviewException, ReviewQuestion};

    const PLAIN: Style = Style { colour: false };

    fn group(payee: Option<&str>, category: &str, count: u32, total: &str) -> ReviewGroup {
        ReviewGroup {
            payee: payee.map(Into::into),
            category: Some(category.into()),
            count,
            total: Amount(total.into()),
        }
    }

    fn review() -> Review {
        Review {
            groups: vec![
                group(Some("Alpha Mart"), "Groceries", 50, "1275.00"),
                group(Some("Beta Rail\u{1b}[31m"), "Transport", 50, "1275.00"),
            ],
            categories: vec![group(None, "Groceries", 50, "1275.00")],
            exceptions: vec![ReviewException {
                change: change("tx-7", "-900.00", Some("Zeta Pharmacy")),
                why: "at least 500.00 (the Budget's auto-approve limit)".into(),
            }],
            exception_count: 3,
            questions: vec![ReviewQuestion {
                change: change("tx-9", "-2.00", Some("Twin Market")),
                rules: vec!["twin-groceries".into(), "twin-household".into()],
                categories: vec!["Groceries".into(), "Household".into()],
            }],
        }
    }

    #[test]
    fn a_long_proposal_reads_as_exceptions_questions_groups_and_totals() {
        let r = review();
        assert!(grouped(Some(&r), 300) && !grouped(Some(&r), 20) && !grouped(None, 300));
        let text = block(&r, true, PLAIN);
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s:?} in {text}"));
        assert!(at("Look at these first (1 of 3 listed)") < at("The rules disagree on"));
        assert!(at("The rules disagree on") < at("By payee"));
        assert!(at("By payee") < at("By category"));
        for want in [
            "tx-7",
            "at least 500.00 (the Budget's auto-approve limit)",
            "Groceries or Household   twin-groceries, twin-household",
            "\"Alpha Mart\"            Groceries   50      1275.00",
            "\"Beta Rail\\u{1b}[31m\"",
        ] {
            assert!(text.contains(want), "{want:?} in {text}");
        }
        assert!(
            !text.contains('\u{1b}'),
            "bank text cannot colour the terminal"
        );
        let short = block(&r, false, PLAIN);
        assert!(short.contains("Look at these first") && !short.contains("By payee"));
    }
}
