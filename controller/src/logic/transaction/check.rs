//! What YNAB's data says about a Transaction's target before anything is decided: the
//! transaction must take a category at all, every category (a split's lines' too) must be one a
//! person may use, and a split's lines must add up. That YNAB already holds a split is no
//! problem here: whether it is the declared one, someone else's edit, or a split the API cannot
//! rewrite is for converge and `split` to decide.

use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::validate::{allocation_problem, category_problem};
use crate::logic::transaction::converge::{Allocation, EndState};
use crate::logic::transaction::split;
use crate::ynab_model::TransactionSummary;

/// Every problem with `target` for `tx`, each naming the id and what to do, in one sentence
/// each; `Ok` when there is none.
pub fn check_target(
    tx: &TransactionSummary,
    target: &EndState,
    mirror: &Mirror,
) -> Result<(), String> {
    let (categories, lines) = match &target.allocation {
        Some(Allocation::Category(c)) => (vec![c.as_str()], None),
        Some(Allocation::Split(lines)) => (split::line_categories(target), Some(lines)),
        Some(Allocation::Uncategorized) | None => (Vec::new(), None),
    };
    let mut problems: Vec<String> = Vec::new();
    if !categories.is_empty()
        && let Some(problem) = allocation_problem(&tx.id, mirror)
    {
        problems.push(problem.to_string());
    }
    for c in categories {
        if let Some(problem) = category_problem(c, mirror) {
            let problem = problem.to_string();
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
    }
    if let Some(lines) = lines {
        let digits = mirror.currency.as_ref().map_or(2, |c| c.decimal_digits);
        problems.extend(split::sum_problem(&tx.id, tx.amount, lines, digits));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::plan::test_support::mirror;
    use crate::logic::transaction::converge::test_states::{category, split};

    #[test]
    fn checks_what_ynab_can_take() {
        let memo_only = EndState {
            memo: Some("x".into()),
            ..EndState::default()
        };
        let cases: Vec<(&str, &str, EndState, Result<(), &str>)> = vec![
            ("a category", "tx-048", category("cat-groceries"), Ok(())),
            (
                "the split YNAB already holds is not an error",
                "tx-split",
                split(&[("cat-groceries", -30_000), ("cat-transport", -30_000)]),
                Ok(()),
            ),
            (
                "a category over a split is not invalid either: converge decides",
                "tx-split",
                category("cat-groceries"),
                Ok(()),
            ),
            (
                "a split that adds up",
                "tx-048",
                split(&[("cat-groceries", -8_000), ("cat-transport", -400)]),
                Ok(()),
            ),
            (
                "a split that does not add up",
                "tx-048",
                split(&[("cat-groceries", -8_000), ("cat-transport", -500)]),
                Err(
                    "The split lines of tx-048 add up to -8.50 but the transaction is -8.40: make the lines add up to its amount.",
                ),
            ),
            (
                "a split whose lines overflow",
                "tx-048",
                split(&[("cat-groceries", i64::MIN), ("cat-transport", -1)]),
                Err(
                    "The split lines of tx-048 add up to more than an amount can hold (±9223372036854775.807): make the lines add up to the transaction's amount, -8.40.",
                ),
            ),
            (
                "every line's category is checked, each problem once",
                "tx-048",
                split(&[("cat-old", -4_000), ("cat-nope", -4_000), ("cat-old", -400)]),
                Err(
                    "Category cat-nope is not in the Budget's YNAB plan: use a categoryId from the Budget's categories. Category cat-old is hidden: unhide it in YNAB or choose another.",
                ),
            ),
            (
                "a transfer between budget accounts takes no split",
                "tx-014",
                split(&[("cat-groceries", -200_000), ("cat-transport", -200_000)]),
                Err(
                    "Transaction tx-014 is a transfer between two on-budget accounts: YNAB gives it no category.",
                ),
            ),
            ("a memo on a transfer is fine", "tx-014", memo_only, Ok(())),
        ];
        let m = mirror();
        for (name, id, target, want) in cases {
            let tx = m.transactions.get(id).expect("in the fixture");
            assert_eq!(
                check_target(tx, &target, &m),
                want.map_err(str::to_owned),
                "{name}"
            );
        }
    }
}
