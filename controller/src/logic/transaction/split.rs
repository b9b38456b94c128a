//! Split transactions: their lines must add up to the transaction (summed with checked
//! arithmetic, so that no amount wraps), and YNAB's API cannot change the lines of a
//! transaction it already holds as a split, so such a write is refused before it is tried.

use crate::logic::transaction::converge::{Allocation, Blocked, EndState, Line};
use crate::logic::values::money;

/// Why `lines` cannot be the split of transaction `id`, whose amount is `amount` milliunits;
/// amounts are written with `digits` decimals.
pub fn sum_problem(id: &str, amount: i64, lines: &[Line], digits: u8) -> Option<String> {
    let amount_text = money::to_decimal(amount, digits);
    match lines
        .iter()
        .try_fold(0i64, |sum, l| sum.checked_add(l.amount))
    {
        None => Some(format!(
            "The split lines of {id} add up to more than an amount can hold (±9223372036854775.807): make the lines add up to the transaction's amount, {amount_text}."
        )),
        Some(sum) if sum != amount => Some(format!(
            "The split lines of {id} add up to {} but the transaction is {amount_text}: make the lines add up to its amount.",
            money::to_decimal(sum, digits)
        )),
        Some(_) => None,
    }
}

/// Refuses to write another allocation over a split YNAB holds: its API cannot change or
/// remove a split's lines, so the write would be refused or ignored.
pub fn unwritable(id: &str, current: &EndState, target: &EndState) -> Option<Blocked> {
    match (&current.allocation, &target.allocation) {
        (Some(now @ Allocation::Split(_)), Some(wanted)) if now != wanted => Some(Blocked {
            reason: "SplitInYnab",
            message: format!(
                "Transaction {id} is split in YNAB, and YNAB's API cannot change or remove the lines of a split: change the split in YNAB to what the spec declares (ledgerops then adopts it), or change the spec's categoryId or split to match YNAB, or remove them from the spec."
            ),
        }),
        _ => None,
    }
}

/// The category ids of a split's lines; empty when `state` is not a split.
pub fn line_categories(state: &EndState) -> Vec<&str> {
    match &state.allocation {
        Some(Allocation::Split(lines)) => lines.iter().map(|l| l.category_id.as_str()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
