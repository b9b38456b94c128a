//! The decisions learning counts, read from what the controller recorded: plans it applied and
//! Transactions it wrote, each with who approved the write (their status, which only the
//! controller writes). A plan's spec counts only at the generation it was applied at, and not
//! once an undo of it started.

use std::collections::HashSet;

use k8s_openapi::jiff::Timestamp;

use super::learn::{Decision, Now};
use crate::api::common::Edits;
use crate::api::plan::{Assignment, CategorizationPlan, PlanPhase};
use crate::api::transaction::Transaction;
use crate::logic::budget::autopilot::made_by_autopilot;
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::status as plan_status;
use crate::logic::plan::{Basis, edit};

/// The transactions a write is in flight for (a plan applying, a Transaction's recorded
/// intent): what YNAB shows of them now says nothing yet.
pub fn busy<'a>(
    plans: &[&'a CategorizationPlan],
    transactions: &[&'a Transaction],
) -> HashSet<&'a str> {
    let mut busy = HashSet::new();
    for p in plans {
        let status = p.status.as_ref();
        let applying =
            status.is_some_and(|s| s.phase == Some(PlanPhase::Applying) || s.intent.is_some());
        if !applying {
            continue;
        }
        match (&p.spec.assignments, &p.spec.undo_of) {
            (Some(assignments), _) => {
                busy.extend(assignments.iter().map(|a| a.transaction_id.as_str()))
            }
            // An undo writes what the plan it undoes wrote.
            (None, Some(undone)) => busy.extend(
                plans
                    .iter()
                    .filter(|q| q.metadata.name.as_deref() == Some(undone.as_str()))
                    .flat_map(|q| q.spec.assignments.iter().flatten())
                    .map(|a| a.transaction_id.as_str()),
            ),
            (None, None) => {}
        }
    }
    for t in transactions {
        if t.status.as_ref().is_some_and(|s| s.intent.is_some()) {
            busy.insert(t.spec.transaction_id.as_str());
        }
    }
    busy
}

/// The decisions of the applied plans among `plans` (one Budget's), with each transaction's
/// facts and category now from `mirror`.
pub fn of_plans(
    plans: &[&CategorizationPlan],
    mirror: &Mirror,
    busy: &HashSet<&str>,
) -> Vec<Decision> {
    let undone: HashSet<&str> = plans
        .iter()
        .filter(|p| {
            let phase = p.status.as_ref().and_then(|s| s.phase);
            // Started: some of the undo may have been written.
            matches!(
                phase,
                Some(
                    PlanPhase::Applying
                        | PlanPhase::Applied
                        | PlanPhase::PartiallyApplied
                        | PlanPhase::Failed
                )
            )
        })
        .filter_map(|p| p.spec.undo_of.as_deref())
        .collect();
    let mut out = Vec::new();
    for p in plans {
        let name = p.metadata.name.as_deref().unwrap_or_default();
        let (Some(status), Some(assignments)) = (&p.status, &p.spec.assignments) else {
            continue;
        };
        let applied = status.phase == Some(PlanPhase::Applied)
            && plan_status::settled(status, p.metadata.generation);
        let (Some(decision), Some(at)) = (&status.decision, &status.applied_at) else {
            continue;
        };
        if !applied || undone.contains(name) {
            continue;
        }
        // The autopilot's own plan, run by the policy unasked: nobody judged the rules there.
        let teaches = !(made_by_autopilot(p) && decision.by == "policy");
        // What was written: the assignments as the approver edited them.
        let Some(assignments) = as_written(assignments, decision.edits.as_ref()) else {
            continue;
        };
        for a in &assignments {
            let written = Written {
                id: &a.transaction_id,
                category_id: &a.category_id,
                by: &decision.by,
                at: at.0,
                teaches,
            };
            out.extend(decision_on(
                mirror,
                busy,
                written,
                format!("CategorizationPlan/{name}"),
            ));
        }
    }
    out
}

/// `assignments` with the approver's `edits` applied (dropped lines left out, set ones in
/// their new category); `None` when the edits do not apply, so nothing is learned from them.
fn as_written(assignments: &[Assignment], edits: Option<&Edits>) -> Option<Vec<Assignment>> {
    let Some(edits) = edits else {
        return Some(assignments.to_vec());
    };
    let answered: HashSet<String> = edits.set.iter().map(|s| s.transaction_id.clone()).collect();
    match edit::apply(&Basis::Assignments(assignments.to_vec()), edits, &answered) {
        Ok(Basis::Assignments(edited)) => Some(edited),
        _ => None,
    }
}

/// The decisions of the Transactions among `transactions` (one Budget's) that ledgerops wrote a
/// category to, on someone's approval.
pub fn of_transactions(
    transactions: &[&Transaction],
    mirror: &Mirror,
    busy: &HashSet<&str>,
) -> Vec<Decision> {
    transactions
        .iter()
        .filter_map(|t| {
            let status = t.status.as_ref()?;
            let decision = status.decision.as_ref()?;
            let applied = status.applied.as_ref()?;
            let category = applied.category_id.as_deref()?;
            let source = format!(
                "Transaction/{}",
                t.metadata.name.as_deref().unwrap_or_default()
            );
            let written = Written {
                id: &t.spec.transaction_id,
                category_id: category,
                by: &decision.by,
                at: applied.at.0,
                teaches: true,
            };
            decision_on(mirror, busy, written, source)
        })
        .collect()
}

/// What ledgerops wrote to one transaction, on whose decision.
struct Written<'a> {
    id: &'a str,
    category_id: &'a str,
    by: &'a str,
    at: Timestamp,
    teaches: bool,
}

/// The decision behind `w`, with the transaction's facts from `mirror`; none when the mirror
/// does not hold the transaction (it was deleted, or is not read yet).
fn decision_on(
    mirror: &Mirror,
    busy: &HashSet<&str>,
    w: Written,
    source: String,
) -> Option<Decision> {
    let Written {
        id,
        category_id,
        by,
        at,
        teaches,
    } = w;
    let t = mirror.transactions.get(id).filter(|t| !t.deleted)?;
    let now = if busy.contains(id) {
        Now::Unknown
    } else {
        Now::Category(t.category_id.clone())
    };
    Some(Decision {
        source,
        transaction_id: id.to_owned(),
        category_id: category_id.to_owned(),
        by: by.to_owned(),
        at,
        payee: mirror.payee_name(t),
        account_id: t.account_id.clone(),
        amount: t.amount,
        memo: t.memo.clone(),
        now,
        teaches,
    })
}
