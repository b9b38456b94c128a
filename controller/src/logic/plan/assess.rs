//! What a plan's spec means on the Budget's mirror, before anyone is asked: the assignments
//! validated, the preview (or, resuming an interrupted write, the preview that was decided if
//! nothing else changed), YNAB's guards, the policy's decision and the one-screen review.

use std::collections::HashSet;

use super::status::PlanVerdict;
use super::step::Resume;
use super::{AppliedChange, Approved, Basis, PlanPreview, State, edit, guarded, review, validate};
use crate::api::budget::Budget;
use crate::api::common::Review;
use crate::api::plan::CategorizationPlan;
use crate::logic::approval::edited::{self, LastWritten};
use crate::logic::approval::policy;
use crate::logic::budget::mirror::Mirror;
use crate::logic::values::money;

/// A plan assessed: what it would change, what the policy decides, what an approval binds to,
/// and the review a person reads.
pub struct Assessed {
    pub preview: PlanPreview,
    pub decision: policy::Decision,
    pub approved: Approved,
    pub review: Review,
    /// The mirror's `server_knowledge`: what the preview was read at.
    pub knowledge: i64,
}

/// Assesses `plan` (its `basis`: assignments, or the changes it undoes) for `budget` on
/// `mirror`, whose scope is `scope`. With `resume`, the changes and hash of an interrupted write,
/// transactions that already show that write are read as they were before it. `last` tells what
/// ledgerops last wrote to some transactions (`None` while that is not known yet: the plan
/// waits): the policy runs nothing over an edit made since.
pub fn assess(
    plan: &CategorizationPlan,
    budget: &Budget,
    basis: Basis,
    (mirror, last): (&Mirror, impl FnOnce(&HashSet<&str>) -> Option<LastWritten>),
    scope: &str,
    resume: Option<&Resume>,
) -> Result<Assessed, PlanVerdict> {
    if let Basis::Assignments(assignments) = &basis
        && let Err(errors) = validate(assignments, mirror)
    {
        let message = errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        return Err(PlanVerdict::Invalid(message));
    }
    let digits = mirror.decimal_digits();
    let approved_as = |changes: Vec<AppliedChange>, hash: String| Approved {
        scope: scope.to_owned(),
        basis: basis.clone(),
        changes,
        hash,
        decimal_digits: digits,
    };
    let resumed = resume
        .map(|r| approved_as(r.changes.clone(), r.hash.clone()))
        .map(|approved| (approved.recompute(mirror), approved))
        .filter(|(preview, approved)| preview.hash == approved.hash);
    let (preview, approved) = match resumed {
        Some(found) => found,
        None => {
            let preview = basis.preview(&State::new(scope, mirror, digits));
            let changes = preview
                .changes
                .iter()
                .map(|c| AppliedChange::from(&c.change))
                .collect();
            let approved = approved_as(changes, preview.hash.clone());
            (preview, approved)
        }
    };
    // A change YNAB's guards forbid is a problem of the plan as written: it is reported with
    // the validation, and nobody is asked to approve a write that cannot happen.
    if let Err(message) = guarded(
        &preview.changes,
        mirror,
        budget.spec.closed_through.as_deref(),
    ) {
        return Err(PlanVerdict::Invalid(message));
    }
    let known: HashSet<String> = policy::known_payees(mirror, &preview.changes);
    let decision = edited::respect(
        policy::decide(&preview.changes, &budget.spec.approval, &known),
        &preview.changes,
        last,
        |id| mirror.categories.get(id).map(|c| c.name.clone()),
    )
    .map_err(|waiting| PlanVerdict::Pending(waiting.to_string()))?;
    let watch = review::Watch {
        large_from: budget
            .spec
            .approval
            .auto_approve_below
            .as_ref()
            .and_then(|a| money::parse_decimal(&a.0).ok()),
        decimal_digits: digits,
    };
    // The autopilot's plan asks, in the same review, what the rules disagree on.
    let questions = review::questions(&edit::disputed(plan, budget), mirror, digits);
    let review = review::review(&preview.changes, watch, questions);
    Ok(Assessed {
        preview,
        decision,
        approved,
        review,
        knowledge: mirror.server_knowledge,
    })
}

#[cfg(test)]
#[path = "assess_tests.rs"]
mod tests;
