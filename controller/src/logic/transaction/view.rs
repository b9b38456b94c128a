//! How a Transaction's change reads to a person: category names instead of ids, the
//! before/after row an ApprovalRequest shows, and the divergence message.

use super::split;
use crate::api::budget::ManagedField;
use crate::api::common::{Amount, CategoryChange};
use crate::api::transaction::{Flag, ObservedTransaction};
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::{CategoryRef, LineMoves, PlannedChange};
use crate::logic::transaction::converge::{Allocation, EndState, still_to_write};
use crate::logic::values::money;
use crate::ynab_model::TransactionSummary;

/// The allocation in words: a category's name, `Split (Groceries -5.00, Household -3.40)`, or
/// `uncategorized`.
pub fn allocation_words(state: &EndState, mirror: &Mirror) -> String {
    match &state.allocation {
        Some(Allocation::Category(c)) => mirror.category_name(c),
        Some(Allocation::Split(lines)) => {
            let digits = mirror.decimal_digits();
            let lines: Vec<String> = lines
                .iter()
                .map(|l| {
                    let amount = money::to_decimal(l.amount, digits);
                    format!("{} {amount}", mirror.category_name(&l.category_id))
                })
                .collect();
            format!("Split ({})", lines.join(", "))
        }
        Some(Allocation::Uncategorized) => "uncategorized".into(),
        None => "its category unchanged".into(),
    }
}

/// The change as an approver and the approval policy see it, or `None` when YNAB already
/// holds `target`. A change other than a single category names its fields; the categories of
/// split lines on both sides are listed, so that a blocked one is seen.
pub fn planned_change(
    tx: &TransactionSummary,
    current: &EndState,
    target: &EndState,
    mirror: &Mirror,
    digits: u8,
) -> Option<PlannedChange> {
    let writes = still_to_write(current, target);
    if writes == EndState::default() {
        return None;
    }
    let (to_category_id, to_category) = match &writes.allocation {
        Some(Allocation::Category(c)) => (Some(c.clone()), Some(mirror.category_name(c))),
        Some(Allocation::Split(_)) => (None, Some(allocation_words(target, mirror))),
        // The category does not move: the row shows where it stays.
        _ => (
            tx.category_id.clone(),
            tx.category_id.as_ref().map(|c| mirror.category_name(c)),
        ),
    };
    let moving = writes.allocation.is_some();
    let refs = |state: &EndState| {
        split::line_categories(state)
            .into_iter()
            .map(|id| CategoryRef {
                id: id.to_owned(),
                name: mirror.categories.get(id).map(|c| c.name.clone()),
            })
            .collect()
    };
    let lines = if moving {
        LineMoves {
            out_of: refs(current),
            into: refs(target),
        }
    } else {
        LineMoves::default()
    };
    let split_involved = !lines.out_of.is_empty() || !lines.into.is_empty();
    let fields = [
        (split_involved, ManagedField::Split),
        (writes.memo.is_some(), ManagedField::Memo),
        (writes.flag.is_some(), ManagedField::FlagColor),
        (writes.approved.is_some(), ManagedField::Approved),
    ]
    .into_iter()
    .filter_map(|(changes, field)| changes.then_some(field))
    .collect();
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
            from_category: tx.category_id.as_ref().map(|c| mirror.category_name(c)),
            to_category_id,
            to_category,
        },
        payee_id: tx.payee_id.clone(),
        lines,
        fields,
    })
}

/// The change in words, field by field: `uncategorized → Groceries, memo "a" → "b"`. Memos are
/// quoted: they are data, never part of the sentence.
pub fn change_words(current: &EndState, target: &EndState, mirror: &Mirror) -> String {
    let writes = still_to_write(current, target);
    let mut parts = Vec::new();
    if writes.allocation.is_some() {
        parts.push(format!(
            "{} → {}",
            allocation_words(current, mirror),
            allocation_words(target, mirror)
        ));
    }
    if let Some(memo) = &writes.memo {
        parts.push(format!(
            "memo {:?} → {memo:?}",
            current.memo.as_deref().unwrap_or_default()
        ));
    }
    if let Some(flag) = writes.flag {
        let was = current.flag.map_or_else(|| "none".into(), flag_words);
        parts.push(format!("flag {was} → {}", flag_words(flag)));
    }
    if let Some(approved) = writes.approved {
        parts.push(if approved { "approve" } else { "unapprove" }.to_owned());
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}

fn flag_words(flag: Flag) -> String {
    serde_json::to_value(flag)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The transaction as YNAB shows it, for the status.
/// What `before` showed, if YNAB still shows that: only the plan's server knowledge moved. A
/// Transaction's status changes when its record does, not with every sync of the plan.
pub fn refreshed(
    before: Option<ObservedTransaction>,
    now: ObservedTransaction,
) -> ObservedTransaction {
    match before {
        Some(before)
            if ObservedTransaction {
                server_knowledge: now.server_knowledge,
                ..before.clone()
            } == now =>
        {
            before
        }
        _ => now,
    }
}

/// Transaction `id` as the mirror shows it, in the plan's currency.
pub fn observed_in(mirror: &Mirror, id: &str) -> Option<ObservedTransaction> {
    let digits = mirror.decimal_digits();
    mirror
        .transactions
        .get(id)
        .map(|tx| observed(tx, mirror, digits))
}

pub fn observed(tx: &TransactionSummary, mirror: &Mirror, digits: u8) -> ObservedTransaction {
    let split = mirror
        .subtransactions
        .get(&tx.id)
        .is_some_and(|l| !l.is_empty());
    let flag = crate::logic::transaction::converge::observe(
        tx,
        &[],
        &EndState {
            flag: Some(crate::api::transaction::Flag::None),
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
            tx.category_id.as_ref().map(|c| mirror.category_name(c))
        },
        memo: tx.memo.clone(),
        approved: tx.approved,
        flag_color: flag.filter(|f| *f != crate::api::transaction::Flag::None),
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
#[path = "view_tests.rs"]
mod tests;
