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
        let digits = mirror.decimal_digits();
        problems.extend(split::sum_problem(&tx.id, tx.amount, lines, digits));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join(" "))
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
