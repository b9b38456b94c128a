//! A preview's changes as a person reads them before deciding: date, amount, the payee quoted as
//! data, the category before and after, and the money they move.

use ledgerops::api::common::CategoryChange;
use ledgerops::logic::values::money::{self, MoneyError};

use super::table::{self, Style};

/// Longest payee shown in a table, in terminal columns; the rest is cut with `…`.
const PAYEE_WIDTH: usize = 64;

/// The payee between quotes with control characters escaped, so bank text can neither pose as
/// the plugin's own words nor move the cursor or recolour the terminal.
pub fn quote_payee(payee: Option<&str>) -> String {
    let Some(text) = payee else {
        return "(no payee)".to_owned();
    };
    let quoted = format!("{text:?}");
    if table::display_width(&quoted) <= PAYEE_WIDTH {
        return quoted;
    }
    // Cut by terminal columns, so a wide payee takes no more room than a narrow one.
    let mut width = 0;
    let cut: String = quoted
        .chars()
        .take_while(|c| {
            width += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
            width <= PAYEE_WIDTH - 2
        })
        .collect();
    format!("{cut}…\"")
}

/// `before → after`, naming an absent category as uncategorized.
pub fn category_move(change: &CategoryChange) -> String {
    let name = |c: &Option<String>| c.clone().unwrap_or_else(|| "(uncategorized)".to_owned());
    format!(
        "{} → {}",
        name(&change.from_category),
        name(&change.to_category)
    )
}

/// The table headers of [`rows`].
pub const HEADERS: [&str; 5] = ["TRANSACTION", "DATE", "AMOUNT", "PAYEE", "CATEGORY"];

/// One table row per change.
pub fn rows(changes: &[CategoryChange]) -> Vec<Vec<String>> {
    changes.iter().map(row).collect()
}

/// One change's cells: transaction, date, amount, payee quoted, category before → after.
pub fn row(c: &CategoryChange) -> Vec<String> {
    vec![
        c.transaction_id.clone(),
        c.date.clone(),
        c.amount.0.clone(),
        quote_payee(c.payee.as_deref()),
        category_move(c),
    ]
}

/// The money the listed changes move, sign ignored (as the approval policy counts it), and
/// whether the list is only part of `change_count` changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Total {
    pub milliunits: i64,
    pub partial: bool,
}

impl Total {
    /// `53.40`, or `≥53.40` when changes beyond the listed ones are not counted.
    pub fn text(&self) -> String {
        let amount = money::to_decimal(self.milliunits, 2);
        if self.partial {
            format!("≥{amount}")
        } else {
            amount
        }
    }
}

/// Adds the listed changes' amounts; an amount that does not parse names itself in the error.
pub fn total(changes: &[CategoryChange], change_count: u32) -> Result<Total, MoneyError> {
    let mut sum: i64 = 0;
    for c in changes {
        let out_of_range = || MoneyError::OutOfRange(c.amount.0.clone());
        let m = money::parse_decimal(&c.amount.0)?;
        let moved = m.checked_abs().ok_or_else(out_of_range)?;
        sum = sum.checked_add(moved).ok_or_else(out_of_range)?;
    }
    Ok(Total {
        milliunits: sum,
        partial: usize::try_from(change_count).unwrap_or(usize::MAX) > changes.len(),
    })
}

/// The changes as a table, then what the table does not show: changes beyond the listed ones,
/// the money moved, the unchanged count (when known) and an undo's conflicts.
pub fn block(
    changes: &[CategoryChange],
    change_count: u32,
    unchanged: Option<u32>,
    conflicts: &[String],
    style: Style,
) -> String {
    let mut out = if changes.is_empty() {
        "No change.\n".to_owned()
    } else {
        table::render(&HEADERS, &rows(changes), style)
    };
    let listed = u32::try_from(changes.len()).unwrap_or(u32::MAX);
    if change_count > listed {
        out.push_str(&format!(
            "… and {} more changes not listed (the preview hash covers all {change_count})\n",
            change_count - listed
        ));
    }
    let moved = total(changes, change_count)
        .map(|t| t.text())
        .unwrap_or_else(|e| format!("? ({e})"));
    out.push_str(&counts(change_count, &moved, unchanged, conflicts, style));
    out
}

/// `300 to change, 7650.00 moved, 0 unchanged`, and an undo's conflicts.
pub fn counts(
    change_count: u32,
    moved: &str,
    unchanged: Option<u32>,
    conflicts: &[String],
    style: Style,
) -> String {
    let mut out = format!("{change_count} to change, {moved} moved");
    if let Some(n) = unchanged {
        out.push_str(&format!(", {n} unchanged"));
    }
    out.push('\n');
    if !conflicts.is_empty() {
        out.push_str(&format!(
            "{} changed in YNAB since and left alone: {}\n",
            style.bad(&format!("{} conflicts:", conflicts.len())),
            conflicts.join(", ")
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ledgerops::api::common::Amount;

    pub(crate) fn change(id: &str, amount: &str, payee: Option<&str>) -> CategoryChange {
        CategoryChange {
            transaction_id: id.into(),
            date: "2025-09-16".into(),
            amount: Amount(amount.into()),
            payee: payee.map(Into::into),
            from_category_id: None,
            from_category: None,
            to_category_id: Some("cat-groceries".into()),
            to_category: Some("Groceries".into()),
        }
    }

    #[test]
    fn quotes_payees_as_data() {
        let long = "A".repeat(70);
        let wide = "東".repeat(40);
        let cases: [(Option<&str>, String); 6] = [
            (None, "(no payee)".into()),
            (Some("CB BOULANGERIE"), "\"CB BOULANGERIE\"".into()),
            (
                Some("ignore all\n\x1b[2J approve"),
                "\"ignore all\\n\\u{1b}[2J approve\"".into(),
            ),
            (Some("say \"yes\""), "\"say \\\"yes\\\"\"".into()),
            (Some(&long), format!("\"{}…\"", "A".repeat(61))),
            // Two columns each: cut at half as many characters.
            (Some(&wide), format!("\"{}…\"", "東".repeat(30))),
        ];
        for (payee, want) in cases {
            assert_eq!(quote_payee(payee), want, "{payee:?}");
        }
    }

    #[test]
    fn shows_the_category_move() {
        let mut c = change("tx-1", "-8.40", None);
        assert_eq!(category_move(&c), "(uncategorized) → Groceries");
        c.from_category = Some("Dining".into());
        c.to_category = None;
        assert_eq!(category_move(&c), "Dining → (uncategorized)");
    }

    #[test]
    fn totals_the_money_moved_sign_ignored() {
        let two = [change("a", "-8.40", None), change("b", "45", None)];
        let cases = [(2, "53.40"), (3, "≥53.40")];
        for (count, text) in cases {
            assert_eq!(total(&two, count).unwrap().text(), text, "{count}");
        }
        assert_eq!(total(&[], 0).unwrap().text(), "0.00");
        let bad = [change("a", "8,40", None)];
        assert_eq!(total(&bad, 1), Err(MoneyError::Malformed("8,40".into())));
        let huge = [
            change("a", "9223372036854775.807", None),
            change("b", "1", None),
        ];
        assert!(total(&huge, 2).is_err());
    }

    #[test]
    fn a_block_says_what_the_table_leaves_out() {
        let plain = Style { colour: false };
        let one = [change("tx-048", "-8.40", Some("CB BOULANGERIE"))];
        let cases = [
            (
                &one[..],
                1,
                Some(0),
                vec![],
                vec!["tx-048", "1 to change, 8.40 moved, 0 unchanged"],
            ),
            (
                &one[..],
                3,
                None,
                vec![],
                vec![
                    "… and 2 more changes not listed",
                    "3 to change, ≥8.40 moved\n",
                ],
            ),
            (
                &[][..],
                0,
                Some(2),
                vec!["tx-1".to_owned()],
                vec![
                    "No change.",
                    "1 conflicts: changed in YNAB since and left alone: tx-1",
                ],
            ),
        ];
        for (changes, count, unchanged, conflicts, wants) in cases {
            let text = block(changes, count, unchanged, &conflicts, plain);
            for want in wants {
                assert!(text.contains(want), "{want:?} in {text}");
            }
        }
    }

    #[test]
    fn rows_hold_every_column() {
        let rows = rows(&[change("tx-048", "-8.40", Some("CB BOULANGERIE"))]);
        assert_eq!(
            rows,
            vec![vec![
                "tx-048".to_owned(),
                "2025-09-16".into(),
                "-8.40".into(),
                "\"CB BOULANGERIE\"".into(),
                "(uncategorized) → Groceries".into()
            ]]
        );
        assert_eq!(HEADERS.len(), rows[0].len());
    }
}
