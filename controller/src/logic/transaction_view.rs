//! How a Transaction's change reads to a person: category names instead of ids, the
//! before/after row an ApprovalRequest shows, and the divergence message.

use super::converge::{Allocation, EndState};
use super::mirror::Mirror;
use super::money;
use super::plan::PlannedChange;
use crate::api::common::{Amount, CategoryChange};
use crate::api::transaction::ObservedTransaction;
use crate::ynab::model::TransactionSummary;

/// The allocation in words: a category's name, `Split (n lines)`, or `uncategorized`.
pub fn allocation_words(state: &EndState, mirror: &Mirror) -> String {
    match &state.allocation {
        Some(Allocation::Category(c)) => category_name(mirror, c),
        Some(Allocation::Split(lines)) => format!("Split ({} lines)", lines.len()),
        Some(Allocation::Uncategorized) => "uncategorized".into(),
        None => "its category unchanged".into(),
    }
}

fn category_name(mirror: &Mirror, id: &str) -> String {
    mirror
        .categories
        .get(id)
        .map_or_else(|| id.to_owned(), |c| c.name.clone())
}

/// The change as an approver sees it, or `None` when the category does not move (a memo,
/// flag or approval change moves no money between categories).
pub fn planned_change(
    tx: &TransactionSummary,
    current: &EndState,
    target: &EndState,
    mirror: &Mirror,
    digits: u8,
) -> Option<PlannedChange> {
    let to = target.allocation.as_ref()?;
    if current.allocation.as_ref() == Some(to) {
        return None;
    }
    let (to_category_id, to_category) = match to {
        Allocation::Category(c) => (Some(c.clone()), Some(category_name(mirror, c))),
        Allocation::Split(_) => (None, Some(allocation_words(target, mirror))),
        Allocation::Uncategorized => (None, None),
    };
    Some(PlannedChange {
        change: CategoryChange {
            transaction_id: tx.id.clone(),
            date: tx.date.clone(),
            amount: Amount(money::to_decimal(tx.amount, digits)),
            payee: tx
                .payee_id
                .as_ref()
                .and_then(|p| mirror.payees.get(p))
                .map(|p| p.name.clone()),
            from_category_id: tx.category_id.clone(),
            from_category: tx.category_id.as_ref().map(|c| category_name(mirror, c)),
            to_category_id,
            to_category,
        },
        payee_id: tx.payee_id.clone(),
    })
}

/// The transaction as YNAB shows it, for the status.
pub fn observed(tx: &TransactionSummary, mirror: &Mirror, digits: u8) -> ObservedTransaction {
    let split = mirror
        .subtransactions
        .get(&tx.id)
        .is_some_and(|l| !l.is_empty());
    let flag = super::converge::observe(
        tx,
        &[],
        &EndState {
            flag: Some(crate::api::transaction::FlagColor::None),
            ..EndState::default()
        },
    )
    .flag;
    ObservedTransaction {
        date: tx.date.clone(),
        amount: Amount(money::to_decimal(tx.amount, digits)),
        account_id: tx.account_id.clone(),
        payee_name: tx
            .payee_id
            .as_ref()
            .and_then(|p| mirror.payees.get(p))
            .map(|p| p.name.clone()),
        category_id: tx.category_id.clone(),
        category_name: if split {
            Some("Split".into())
        } else {
            tx.category_id.as_ref().map(|c| category_name(mirror, c))
        },
        memo: tx.memo.clone(),
        approved: tx.approved,
        flag_color: flag.filter(|f| *f != crate::api::transaction::FlagColor::None),
        cleared: serde_json::to_value(tx.cleared)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        server_knowledge: mirror.server_knowledge,
    }
}

/// The Diverged message: YNAB's state, what ledgerops last applied and what the spec asks, by
/// category name, and how to settle it.
pub fn divergence_message(current: &str, ours: &str, wanted: &str, annotation: &str) -> String {
    format!(
        "Someone changed this transaction in YNAB: it shows {current}, ledgerops last applied {ours}, and the spec asks for {wanted}. Nothing was written. Annotate {annotation}=ours to write the spec anyway, or {annotation}=theirs to keep YNAB's."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::plan::test_support;

    #[test]
    fn a_category_change_reads_by_name() {
        let m = test_support::mirror();
        let tx = m
            .transactions
            .get("tx-048")
            .expect("seed 002's bakery transaction")
            .clone();
        let groceries = m
            .categories
            .values()
            .find(|c| c.name == "Groceries")
            .unwrap()
            .id
            .clone();
        let current = EndState {
            allocation: Some(Allocation::Uncategorized),
            ..EndState::default()
        };
        let target = EndState {
            allocation: Some(Allocation::Category(groceries.clone())),
            ..EndState::default()
        };
        let change = planned_change(&tx, &current, &target, &m, 2).unwrap();
        assert_eq!(change.change.amount.0, "-8.40");
        assert_eq!(change.change.to_category.as_deref(), Some("Groceries"));
        assert_eq!(change.change.from_category_id, None);
        assert_eq!(allocation_words(&target, &m), "Groceries");
        assert!(planned_change(&tx, &target, &target, &m, 2).is_none());
        let memo_only = EndState {
            memo: Some("x".into()),
            ..EndState::default()
        };
        assert!(planned_change(&tx, &current, &memo_only, &m, 2).is_none());
        let msg = divergence_message("Dining", "Groceries", "Transport", "ledgerops.dev/resolve");
        assert!(msg.contains("shows Dining") && msg.contains("=theirs"));
    }
}
