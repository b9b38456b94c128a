//! An approver's edits to a proposal: lines dropped, lines put in another category. They are
//! applied to what the plan asks for, so that the edited proposal is previewed on fresh YNAB
//! state and hashed like any other, and written once under the approval that carries them.

use std::collections::{HashMap, HashSet};

use super::approved::{Approved, Basis};
use super::preview::PlanPreview;
use super::undo::AppliedChange;
use super::validate::{guarded, validate};
use crate::api::autopilot::Disagreement;
use crate::api::budget::Budget;
use crate::api::common::Edits;
use crate::api::plan::{Assignment, CategorizationPlan};
use crate::logic::budget::mirror::Mirror;

/// How many edited transactions a one-line summary names before counting the rest.
const NAMED: usize = 8;

/// Why an approval's edits cannot be applied. Nothing is written then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error(
        "transaction {0} is not in the proposal: an edit drops or changes a line it holds (or sets one the review asks about)"
    )]
    NotInPlan(String),
    #[error("transaction {0} is edited twice: drop it or set its category, once")]
    Twice(String),
    #[error("the edits drop every line of the proposal: reject the request instead")]
    NothingLeft,
    #[error(
        "an undo can only drop lines: setting a category for transaction {0} is not part of undoing"
    )]
    SetOnUndo(String),
    #[error(
        "the Budget asks for four eyes, and setting a category makes it the approver's own proposal: only drop lines, or ask another approver to propose the change"
    )]
    SetUnderFourEyes,
    #[error("the edited proposal cannot be written: {0}")]
    Invalid(String),
}

/// Whether `edits` may be made by an approver under the Budget's `four_eyes`: a category the
/// approver chooses is a proposal of their own, which they cannot also approve.
pub fn allowed(edits: &Edits, four_eyes: bool) -> Result<(), EditError> {
    if four_eyes && !edits.set.is_empty() {
        return Err(EditError::SetUnderFourEyes);
    }
    Ok(())
}

/// `basis` with `edits` applied. A `set` changes an assignment the plan holds, or adds one
/// for a transaction in `askable` (what the review asks about besides the plan: transactions
/// the rules disagree on).
pub fn apply(basis: &Basis, edits: &Edits, askable: &HashSet<String>) -> Result<Basis, EditError> {
    let mut seen = HashSet::new();
    let edited = edits
        .drop
        .iter()
        .chain(edits.set.iter().map(|s| &s.transaction_id));
    for id in edited {
        if !seen.insert(id.as_str()) {
            return Err(EditError::Twice(id.clone()));
        }
    }
    let dropped: HashSet<&str> = edits.drop.iter().map(String::as_str).collect();
    let out = match basis {
        Basis::Undo(changes) => {
            if let Some(s) = edits.set.first() {
                return Err(EditError::SetOnUndo(s.transaction_id.clone()));
            }
            let held: HashSet<&str> = changes.iter().map(|c| c.transaction_id.as_str()).collect();
            if let Some(id) = dropped.iter().find(|id| !held.contains(*id)) {
                return Err(EditError::NotInPlan((*id).to_owned()));
            }
            let kept: Vec<AppliedChange> = changes
                .iter()
                .filter(|c| !dropped.contains(c.transaction_id.as_str()))
                .cloned()
                .collect();
            (!kept.is_empty()).then_some(Basis::Undo(kept))
        }
        Basis::Assignments(assignments) => {
            let held: HashSet<&str> = assignments
                .iter()
                .map(|a| a.transaction_id.as_str())
                .collect();
            if let Some(id) = dropped.iter().find(|id| !held.contains(*id)) {
                return Err(EditError::NotInPlan((*id).to_owned()));
            }
            let set: HashMap<&str, &str> = edits
                .set
                .iter()
                .map(|s| (s.transaction_id.as_str(), s.category_id.as_str()))
                .collect();
            if let Some(s) = edits.set.iter().find(|s| {
                !held.contains(s.transaction_id.as_str()) && !askable.contains(&s.transaction_id)
            }) {
                return Err(EditError::NotInPlan(s.transaction_id.clone()));
            }
            let mut kept: Vec<Assignment> = assignments
                .iter()
                .filter(|a| !dropped.contains(a.transaction_id.as_str()))
                .map(|a| Assignment {
                    transaction_id: a.transaction_id.clone(),
                    category_id: set
                        .get(a.transaction_id.as_str())
                        .map_or_else(|| a.category_id.clone(), |c| (*c).to_owned()),
                })
                .collect();
            kept.extend(
                edits
                    .set
                    .iter()
                    .filter(|s| !held.contains(s.transaction_id.as_str()))
                    .map(|s| Assignment {
                        transaction_id: s.transaction_id.clone(),
                        category_id: s.category_id.clone(),
                    }),
            );
            (!kept.is_empty()).then_some(Basis::Assignments(kept))
        }
    };
    out.ok_or(EditError::NothingLeft)
}

/// What the Budget's rules disagree on, when `plan` is the autopilot's: the Budget's status,
/// which only ledgerops writes, lists both the autopilot's plans and the disagreements (a
/// label on the plan could be anyone's).
pub fn disputed(plan: &CategorizationPlan, budget: &Budget) -> Vec<Disagreement> {
    let name = plan.metadata.name.as_deref().unwrap_or_default();
    budget
        .status
        .as_ref()
        .and_then(|s| s.autopilot.as_ref())
        .filter(|a| a.plans.iter().any(|p| p == name))
        .map(|a| a.disagreements.clone())
        .unwrap_or_default()
}

/// The transactions the review of `plan` asks about besides its lines: see [`disputed`].
pub fn askable(plan: &CategorizationPlan, budget: &Budget) -> HashSet<String> {
    disputed(plan, budget)
        .into_iter()
        .map(|d| d.transaction_id)
        .collect()
}

/// Whether `edits` to `plan` can be approved, before a decision records them: what the write
/// checks too, short of the fresh YNAB state (an undo's lines are its journal's, which only
/// the write reads). `asked_four_eyes`: the request was opened under four eyes.
pub fn check(
    edits: &Edits,
    plan: &CategorizationPlan,
    budget: &Budget,
    asked_four_eyes: bool,
) -> Result<(), EditError> {
    allowed(edits, asked_four_eyes || budget.spec.approval.four_eyes)?;
    match &plan.spec.assignments {
        Some(assignments) => {
            let basis = Basis::Assignments(assignments.clone());
            apply(&basis, edits, &askable(plan, budget)).map(|_| ())
        }
        None => match edits.set.first() {
            Some(s) => Err(EditError::SetOnUndo(s.transaction_id.clone())),
            None => Ok(()),
        },
    }
}

/// The edited proposal: `approved` with `edits` applied, previewed on `mirror` (reading what
/// an interrupted write of it already landed as it was before, as [`Approved::recompute`]
/// does) and bound to its own hash. Refused when the edited set could not be written.
pub fn edited(
    approved: &Approved,
    edits: &Edits,
    askable: &HashSet<String>,
    mirror: &Mirror,
    closed_through: Option<&str>,
) -> Result<(PlanPreview, Approved), EditError> {
    let basis = apply(&approved.basis, edits, askable)?;
    if let Basis::Assignments(assignments) = &basis
        && let Err(errors) = validate(assignments, mirror)
    {
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(EditError::Invalid(text.join(" ")));
    }
    let draft = Approved {
        basis,
        hash: String::new(),
        ..approved.clone()
    };
    let preview = draft.recompute(mirror);
    guarded(&preview.changes, mirror, closed_through).map_err(EditError::Invalid)?;
    let changes = preview
        .changes
        .iter()
        .map(|c| AppliedChange::from(&c.change))
        .collect();
    let hash = preview.hash.clone();
    Ok((
        preview,
        Approved {
            changes,
            hash,
            ..draft
        },
    ))
}

/// One line for an Event, a comment or a status: what the approver changed, naming each
/// transaction (the first few) and the category it was put in (`name` gives its name).
pub fn summary(edits: &Edits, name: impl Fn(&str) -> String) -> String {
    let mut parts = Vec::new();
    if !edits.drop.is_empty() {
        parts.push(format!("dropped {}", listed(edits.drop.iter().cloned())));
    }
    if !edits.set.is_empty() {
        let set = edits
            .set
            .iter()
            .map(|s| format!("{} to {}", s.transaction_id, name(&s.category_id)));
        parts.push(format!("set {}", listed(set)));
    }
    parts.join("; ")
}

fn listed(items: impl ExactSizeIterator<Item = String>) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.take(NAMED).collect();
    if total > NAMED {
        shown.push(format!("and {} more", total - NAMED));
    }
    shown.join(", ")
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
