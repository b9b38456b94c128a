//! A plan's write that a restart cut off, and whose approved preview no longer holds. What had
//! landed is kept and journaled. When a person approved it and nothing of it landed, but someone
//! moved some of its transactions since (see [`crate::logic::plan::rest`]), the untouched lines
//! go on under the same approval and attempt, the moved ones are left alone, and the plan ends
//! partly applied.

use std::collections::BTreeSet;

use kube::{Resource, ResourceExt};

use super::approval_gate::{self, Ask, Gate};
use super::plan_write::{self, Operation, apply, finish};
use super::{Context, Error};
use crate::api::approval::SubjectKind;
use crate::api::budget::Budget;
use crate::api::plan::{CategorizationPlan, CategorizationPlanStatus};
use crate::logic::approval::policy::{Action, Decision};
use crate::logic::plan::end::End;
use crate::logic::plan::operation;
use crate::logic::plan::status::PlanVerdict;
use crate::logic::plan::step::{self, Resume, Step};
use crate::logic::plan::{AppliedChange, Approved, edit, rest};
use crate::metrics::Stopwatch;
use k8s_openapi::jiff::Timestamp;

/// Settles the cut-off write `cut` of `plan`, assessed now as `(basis, knowledge)`: its rest
/// written when it may go on, else what landed kept and journaled. `None` when nothing had
/// landed and nothing moved: the plan starts over with a new preview.
#[allow(clippy::too_many_arguments)]
pub async fn settle(
    ctx: &Context,
    plan: &CategorizationPlan,
    budget: &Budget,
    cut: Resume,
    (basis, knowledge): (Approved, i64),
    next: &mut CategorizationPlanStatus,
    version: &mut String,
    watch: &mut Stopwatch,
) -> Result<Option<Step>, Error> {
    let namespace = plan.namespace().unwrap_or_default();
    let budget_name = budget.name_any();
    if let Some(left_alone) = left_alone(ctx, &namespace, &budget_name, &cut).await {
        let rest = Rest {
            cut: cut.clone(),
            left_alone,
            basis,
            knowledge,
        };
        if let Some(step) = Box::pin(write(ctx, plan, budget, rest, next, version, watch)).await? {
            return Ok(Some(step));
        }
    }
    let uid = plan.meta().uid.clone().unwrap_or_default();
    let ended = settle_cut_off(ctx, plan, &namespace, &budget_name, &uid, &cut, next).await?;
    Ok(ended.map(Step::on_change))
}

/// A cut-off write whose rest may go on: the write, what it leaves alone, and the plan's
/// preview basis (scope, spec, currency) as assessed now.
struct Rest {
    cut: Resume,
    left_alone: BTreeSet<String>,
    basis: Approved,
    /// The mirror's knowledge the plan was assessed at.
    knowledge: i64,
}

/// The transactions the cut-off write `cut` leaves alone while its rest goes on, or `None`
/// when it is settled instead. Only a person's approval goes on: a write the policy ran is
/// decided again on a spec and a YNAB state that still hash to what it decided.
async fn left_alone(
    ctx: &Context,
    namespace: &str,
    budget: &str,
    cut: &Resume,
) -> Option<BTreeSet<String>> {
    cut.decision.as_ref()?.request.as_ref()?;
    let slot = ctx.budget_links.mirror(namespace, budget);
    let slot = slot.state.read().await;
    rest::rest_of(
        &cut.changes,
        &slot.mirror,
        cut.knowledge,
        &cut.moved_since,
        &cut.elsewhere,
    )
}

/// Writes the rest of `rest.cut` under its approval, resumed through the gate as any cut-off
/// write is. `None` when it cannot go on (the rest, previewed again, is not exactly the write
/// without the lines left alone, or the gate resumes no write of this attempt): the caller
/// settles the write as before.
async fn write(
    ctx: &Context,
    plan: &CategorizationPlan,
    budget: &Budget,
    rest: Rest,
    next: &mut CategorizationPlanStatus,
    version: &mut String,
    watch: &mut Stopwatch,
) -> Result<Option<Step>, Error> {
    let Rest {
        cut,
        left_alone,
        basis,
        knowledge,
    } = rest;
    let namespace = plan.namespace().unwrap_or_default();
    let budget_name = budget.name_any();
    let decided = Approved {
        changes: cut.changes.clone(),
        hash: cut.hash.clone(),
        ..basis
    };
    let approver = cut.decision.as_ref().and_then(|d| d.edits.as_ref());
    let edits = rest::edits(approver, &left_alone);
    let (preview, approved) = {
        let slot = ctx.budget_links.mirror(&namespace, &budget_name);
        let slot = slot.state.read().await;
        let askable = edit::askable(plan, budget);
        let closed = budget.spec.closed_through.as_deref();
        match edit::edited(&decided, &edits, &askable, &slot.mirror, closed) {
            Ok(found) if rest::holds(&found.1.changes, &cut.changes, &left_alone) => found,
            _ => return Ok(None),
        }
    };
    let ask = Ask {
        subject: plan,
        kind: SubjectKind::CategorizationPlan,
        budget,
        changes: &preview.changes,
        decision: Decision {
            action: Action::Ask,
            reason: "a person approved this write before a restart cut it off".into(),
        },
        summary: step::summary(&preview.changes),
        hash: cut.hash.clone(),
        review: None,
    };
    let now = Timestamp::now();
    let mut grant = match approval_gate::gate(ctx, ask, cut.attempt_id.clone(), now).await? {
        Gate::Proceed(grant) if grant.resumed && grant.attempt_id == cut.attempt_id => grant,
        Gate::Proceed(_) => return Ok(None),
        Gate::Wait(hold) => return Ok(Some(step::held(next, &hold))),
    };
    grant.edited(approved.hash.clone());
    if let Some(stop) = step::previewed(next, &preview) {
        return Ok(Some(stop));
    }
    if let Some(held) = step::held_back(&budget_name, &budget.spec) {
        return Ok(Some(held));
    }
    let Some(destination) = ctx.destination(&namespace, budget) else {
        return Ok(Some(step::no_destination(&budget_name)));
    };
    let uid = plan.meta().uid.clone().unwrap_or_default();
    let (_, started_at, decided_at) = step::attempt(Some(&cut), &uid, now, knowledge);
    plan_write::start(ctx, next, &grant, (&started_at, decided_at));
    let moved: Vec<AppliedChange> = cut
        .changes
        .iter()
        .filter(|c| left_alone.contains(&c.transaction_id))
        .cloned()
        .collect();
    let operation = Operation {
        plan,
        namespace: &namespace,
        budget: &budget_name,
        grant: &grant,
        started_at: &started_at,
        destination,
    };
    let written = apply(
        ctx, &operation, &preview, approved, &moved, next, version, watch,
    );
    written.await.map(Some)
}

/// An operation cut off by a restart whose approved preview no longer holds: what landed is
/// kept and journaled, and nothing is written under its approval again. `None` when nothing
/// had landed: the plan starts over with a new preview.
async fn settle_cut_off(
    ctx: &Context,
    plan: &CategorizationPlan,
    namespace: &str,
    budget: &str,
    uid: &str,
    cut: &Resume,
    next: &mut CategorizationPlanStatus,
) -> Result<Option<PlanVerdict>, Error> {
    let now = Timestamp::now();
    let conclusion = {
        let slot = ctx.budget_links.mirror(namespace, budget);
        let slot = slot.state.read().await;
        operation::interrupted(&cut.changes, &slot.mirror, &cut.moved_since, &cut.elsewhere)
    };
    ctx.attempts_here.finished(&cut.attempt_id);
    let Some(conclusion) = conclusion else {
        approval_gate::complete_in_flight(ctx, namespace, uid, now, false).await?;
        next.intent = None;
        return Ok(None);
    };
    let end = End {
        operation_id: &cut.attempt_id,
        decision: cut.decision.as_ref(),
        changes: &cut.changes,
        written: 0,
        conclusion: &conclusion,
        at: now,
    };
    let written = finish(ctx, plan, namespace, budget, &end, next).await?;
    approval_gate::complete_in_flight(ctx, namespace, uid, now, written > 0).await?;
    let applied = step::applied_message(&plan.name_any(), &cut.attempt_id);
    Ok(Some(conclusion.verdict(applied, now).verdict))
}
