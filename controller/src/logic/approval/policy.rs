//! Seed 001's approval policy, for one submission (a plan's changes, or one Transaction's):
//! run it on its own, ask a person, or block it. Blocked categories block, on either side of a
//! change and on any split line; a change to anything but a single category asks unless the
//! Budget lists the field; the limits bound the submission as a whole, its total and its count.
//! The reason is one sentence, shown to the person in the ApprovalRequest.

use std::collections::HashSet;

use crate::api::budget::{ApprovalPolicy, ManagedField};
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::{CategoryRef, PlannedChange, is_uncategorized};
use crate::logic::values::money::{parse_decimal, to_decimal};

/// What happens to a set of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Write without asking.
    Run,
    /// Write once a person approves.
    Ask,
    /// Never write: a policy forbids it.
    Block,
}

/// An action and the sentence that explains it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub reason: String,
}

impl Decision {
    fn new(action: Action, reason: impl Into<String>) -> Self {
        Self {
            action,
            reason: reason.into(),
        }
    }
}

/// Decides on `changes`, submitted together, under `policy`. `known_payees` are the payees
/// categorised before (see [`known_payees`]). Blocking wins over asking; the reason names the
/// change that decided, or the submission's total and count.
pub fn decide(
    changes: &[PlannedChange],
    policy: &ApprovalPolicy,
    known_payees: &HashSet<String>,
) -> Decision {
    if changes.is_empty() {
        return Decision::new(Action::Run, "there is nothing to write");
    }
    if let Some(reason) = blocked(changes, &policy.blocked_category_ids) {
        return Decision::new(Action::Block, reason);
    }
    let Some(limit_text) = &policy.auto_approve_below else {
        return Decision::new(
            Action::Ask,
            "every write needs a person: spec.approval.autoApproveBelow is not set",
        );
    };
    let Ok(limit) = parse_decimal(&limit_text.0) else {
        return Decision::new(
            Action::Ask,
            format!(
                "every write needs a person: spec.approval.autoApproveBelow {:?} is not an amount",
                limit_text.0
            ),
        );
    };
    let limit_text = &limit_text.0;
    if let Some(reason) = unlisted_field(changes, &policy.auto_approve_fields) {
        return Decision::new(Action::Ask, reason);
    }
    let max = policy.auto_approve_max_changes;
    if changes.len() > usize::try_from(max).unwrap_or(usize::MAX) {
        return Decision::new(
            Action::Ask,
            format!(
                "{} changes are more than the {max} that spec.approval.autoApproveMaxChanges lets run without asking",
                changes.len()
            ),
        );
    }
    let total = match total(changes) {
        Ok(total) => total,
        Err(tx) => {
            return Decision::new(
                Action::Ask,
                format!(
                    "the amounts up to {tx} add up to more than YNAB can hold, above the auto-approve limit of {limit_text}"
                ),
            );
        }
    };
    let total_text = to_decimal(total, decimals(changes));
    // Sign ignored on both sides; a negative limit lets nothing through.
    if total >= limit.max(0) {
        let reason = match changes {
            [one] => format!(
                "{} moves {total_text}, at or above the auto-approve limit of {limit_text}",
                one.change.transaction_id
            ),
            many => format!(
                "the {} changes move {total_text} in total, at or above the auto-approve limit of {limit_text}",
                many.len()
            ),
        };
        return Decision::new(Action::Ask, reason);
    }
    if policy.ask_on_new_payee
        && let Some(reason) = new_payee(changes, known_payees)
    {
        return Decision::new(Action::Ask, reason);
    }
    let payees = if policy.ask_on_new_payee {
        ", and every payee was categorised before"
    } else {
        ""
    };
    Decision::new(
        Action::Run,
        format!(
            "{total_text} in total over {} changes is below the auto-approve limit of {limit_text} and within {max} changes{payees}",
            changes.len()
        ),
    )
}

/// The sum of the changes' amounts, sign ignored, in milliunits; `Err` names the transaction
/// whose amount cannot be read or makes the sum overflow (both are above any limit).
fn total(changes: &[PlannedChange]) -> Result<i64, String> {
    changes.iter().try_fold(0i64, |sum, c| {
        parse_decimal(&c.change.amount.0)
            .ok()
            .and_then(i64::checked_abs)
            .and_then(|m| sum.checked_add(m))
            .ok_or_else(|| c.change.transaction_id.clone())
    })
}

/// The decimals the amounts are written with, to write their total the same way.
fn decimals(changes: &[PlannedChange]) -> u8 {
    changes
        .iter()
        .filter_map(|c| c.change.amount.0.split_once('.'))
        .map(|(_, frac)| u8::try_from(frac.len()).unwrap_or(3))
        .max()
        .unwrap_or(0)
}

/// The first change that writes a field the policy does not let run on its own.
fn unlisted_field(changes: &[PlannedChange], allowed: &[ManagedField]) -> Option<String> {
    changes.iter().find_map(|c| {
        let asked: Vec<&str> = c
            .fields
            .iter()
            .filter(|f| !allowed.contains(f))
            .map(|f| field_name(*f))
            .collect();
        (!asked.is_empty()).then(|| {
            format!(
                "{} changes its {}: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
                c.change.transaction_id,
                asked.join(", ")
            )
        })
    })
}

/// The field as `spec.approval.autoApproveFields` names it.
fn field_name(field: ManagedField) -> &'static str {
    match field {
        ManagedField::Split => "split",
        ManagedField::Memo => "memo",
        ManagedField::FlagColor => "flagColor",
        ManagedField::Approved => "approved",
    }
}

/// Of the payees of `changes`, those categorised before: another transaction of theirs has a
/// category other than "Uncategorized". Only the changes' payees are collected, so what a
/// reconcile holds stays the size of its change however large the plan (10,000 reconciles wait
/// on one batch at once).
pub fn known_payees(mirror: &Mirror, changes: &[PlannedChange]) -> HashSet<String> {
    let changing: HashSet<&str> = changes
        .iter()
        .map(|c| c.change.transaction_id.as_str())
        .collect();
    let wanted: HashSet<&str> = changes
        .iter()
        .filter_map(|c| c.payee_id.as_deref())
        .collect();
    let categorised = |category_id: &String| {
        !mirror
            .categories
            .get(category_id)
            .is_some_and(is_uncategorized)
    };
    let mut known = HashSet::new();
    for t in mirror.transactions.values() {
        if known.len() == wanted.len() {
            break;
        }
        if let Some(payee) = t.payee_id.as_deref()
            && wanted.contains(payee)
            && !changing.contains(t.id.as_str())
            && t.category_id.as_ref().is_some_and(categorised)
        {
            known.insert(payee.to_owned());
        }
    }
    known
}

/// The first change into or out of a blocked category, its own or one of its split lines'.
fn blocked(changes: &[PlannedChange], blocked_ids: &[String]) -> Option<String> {
    let named = |id: &str, name: Option<&String>| match name {
        Some(name) => format!("{name:?} ({id})"),
        None => id.to_owned(),
    };
    changes.iter().find_map(|c| {
        let sides = [
            (
                "out of",
                &c.change.from_category_id,
                &c.change.from_category,
            ),
            ("into", &c.change.to_category_id, &c.change.to_category),
        ];
        let single = sides.into_iter().find_map(|(direction, id, name)| {
            let id = id.as_ref().filter(|id| blocked_ids.contains(id))?;
            Some(format!("moves {direction} {}", named(id, name.as_ref())))
        });
        let line = |direction: &str, lines: &[CategoryRef]| {
            lines
                .iter()
                .find(|l| blocked_ids.contains(&l.id))
                .map(|l| format!("moves {direction} {}", named(&l.id, l.name.as_ref())))
        };
        let how = single
            .or_else(|| line("a split line out of", &c.lines.out_of))
            .or_else(|| line("a split line into", &c.lines.into))?;
        Some(format!(
            "{} {how}, which spec.approval.blockedCategoryIds protects",
            c.change.transaction_id
        ))
    })
}

/// The first change whose payee was never categorised. Payee names are bank text: quoted, so
/// they read as data and cannot pass for the sentence around them.
fn new_payee(changes: &[PlannedChange], known: &HashSet<String>) -> Option<String> {
    changes.iter().find_map(|c| {
        let tx = &c.change.transaction_id;
        match &c.payee_id {
            None => Some(format!(
                "{tx} has no payee, so nothing shows it was categorised before"
            )),
            Some(id) if !known.contains(id) => Some(format!(
                "payee {:?} ({tx}) has never been categorised before",
                c.change.payee.as_deref().unwrap_or(id)
            )),
            Some(_) => None,
        }
    })
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
