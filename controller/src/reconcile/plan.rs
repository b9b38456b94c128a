//! The CategorizationPlan reconciler: validate, preview, ask (or not, as the Budget's policy
//! says), and once approved apply every change in one bulk request through the shared write
//! path, journaling before/after for undo. `undoOf` plans preview and apply the revert.

use std::collections::BTreeSet;
use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};

use super::approval_gate::{self, Ask, Gate, Grant};
use super::plan_cut_off;
use super::plan_write::{self, Operation, apply};
use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error, budget_scoped};
use crate::api::common::{Edits, WriteIntent};
use crate::api::plan::{CategorizationPlan, CategorizationPlanStatus};
use crate::api::{approval::SubjectKind, budget::Budget};
use crate::k8s::{journal, watches::Watches};
use crate::logic::approval::edited;
use crate::logic::plan::assess::{self, Assessed};
use crate::logic::plan::edit::{self, EditError};
use crate::logic::plan::operation;
use crate::logic::plan::status::{self as plan_status, PlanVerdict};
use crate::logic::plan::step::{self, Resume, Step};
use crate::logic::plan::{AppliedChange, Approved, Basis, PlanPreview};
use crate::logic::runtime::request_priority::WriteDecision;
use crate::logic::status::{announce, awaiting_read_back};
use crate::metrics::Stopwatch;

/// Subscribes to the shared watches at once; the returned future runs the controller.
pub fn run(ctx: Arc<Context>, watches: &Watches) -> impl Future<Output = ()> + use<> {
    // A plan not applied yet previews YNAB's state: any change may move it.
    let concerns: budget_scoped::Concerns<CategorizationPlan> = |p, _| {
        !p.status
            .as_ref()
            .is_some_and(|s| plan_status::settled(s, p.metadata.generation))
    };
    let controller = budget_scoped::controller(&ctx, &watches.plans, watches, concerns)
        .graceful_shutdown_on(ctx.shutdown.requested());
    super::drain_forgetting(
        controller.run(reconcile, super::error_policy, ctx.clone()),
        ctx,
    )
}

impl budget_scoped::BudgetScoped for CategorizationPlan {
    fn budget_name(&self) -> &str {
        &self.spec.budget_ref.name
    }
}

async fn reconcile(cached: Arc<CategorizationPlan>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<CategorizationPlan>(&ctx);
    let mut watch = Stopwatch::start();
    // A plan's next step depends on its own last write (an apply in flight, or done): decide on
    // the plan as the API server holds it, not on a cached copy that may not have caught up.
    let api = Api::<CategorizationPlan>::namespaced(
        ctx.client.clone(),
        &cached.namespace().unwrap_or_default(),
    );
    let Some(plan) = api.get_opt(&cached.name_any()).await? else {
        return Ok(Action::await_change());
    };
    let mut next = plan.status.clone().unwrap_or_default();
    // Every status write is conditional on the version this reconcile started from: one made
    // from a cached copy that has not caught up with an earlier write is refused, not applied.
    let mut version = plan.resource_version().unwrap_or_default();
    let Step { verdict, wait } = advance(&plan, &ctx, &mut next, &mut version, &mut watch).await?;
    plan_status::apply(
        &mut next,
        &verdict,
        plan.metadata.generation,
        Timestamp::now(),
    );
    let before = plan.status.as_ref().and_then(|s| s.phase);
    let warning = announce::plan_warning(next.phase);
    let announcement = announce::on_phase_change(before, next.phase, &next.conditions, warning);
    let changed = plan.status.as_ref() != Some(&next);
    let patch = StatusWrite::IfUnchanged(&version);
    summarize_and_patch(&ctx, &plan, changed, &next, patch, announcement, "Apply").await?;
    watch.lap("status");
    watch.report(&ctx.metrics);
    Ok(wait.map_or_else(Action::await_change, Action::requeue))
}

async fn advance(
    plan: &CategorizationPlan,
    ctx: &Context,
    next: &mut CategorizationPlanStatus,
    version: &mut String,
    watch: &mut Stopwatch,
) -> Result<Step, Error> {
    if let Some(settled) = step::settled(&plan.name_any(), next, plan.metadata.generation) {
        return Ok(settled);
    }
    let namespace = plan.namespace().unwrap_or_default();
    let budget_name = &plan.spec.budget_ref.name;
    let now = Timestamp::now();
    let uid = plan.meta().uid.clone().unwrap_or_default();
    let (budget, resume, found) = match read(plan, ctx, next).await? {
        Ok(read) => read,
        Err(verdict) => return Ok(Step::not_ready(verdict)),
    };
    watch.lap("read");
    let Assessed {
        preview,
        decision,
        approved,
        review,
        knowledge,
    } = found;
    let (resumed, cut_off) = step::resumes(resume, &preview.hash);
    if let Some(cut) = cut_off {
        let assessed = (approved.clone(), knowledge);
        let settling =
            plan_cut_off::settle(ctx, plan, &budget, cut, assessed, next, version, watch);
        if let Some(step) = Box::pin(settling).await? {
            return Ok(step);
        }
    }
    let stop = step::previewed(next, &preview);
    if let Some(shown) = next.preview.as_mut() {
        shown.review = Some(review.clone());
    }
    if let Some(stop) = stop {
        return Ok(stop);
    }
    let (attempt, started_at, decided_at) = step::attempt(resumed.as_ref(), &uid, now, knowledge);
    let ask = Ask {
        subject: plan,
        kind: SubjectKind::CategorizationPlan,
        budget: &budget,
        changes: &preview.changes,
        decision,
        summary: step::summary(&preview.changes),
        hash: preview.hash.clone(),
        review: Some(review),
    };
    let mut grant = match approval_gate::gate(ctx, ask, attempt, now).await? {
        Gate::Proceed(grant) => grant,
        Gate::Wait(hold) => return Ok(step::held(next, &hold)),
    };
    watch.lap("gate");
    if let Some(held) = step::held_back(budget_name, &budget.spec) {
        return Ok(held);
    }
    let Some(destination) = ctx.destination(&namespace, &budget) else {
        return Ok(step::no_destination(budget_name));
    };
    let (preview, approved) =
        match with_edits(ctx, plan, &budget, &mut grant, (preview, approved)).await {
            Ok(edited) => edited,
            Err(why) => {
                let request = grant.record.request.as_ref();
                return Ok(step::edits_refused(next, request, &why));
            }
        };
    plan_write::start(ctx, next, &grant, (&started_at, decided_at));
    grant.spend(ctx, now).await?;
    if grant.decided_by() == WriteDecision::Person && !grant.resumed {
        watch.person_waits();
    }
    watch.lap("spend");
    let operation = Operation {
        plan,
        namespace: &namespace,
        budget: budget_name,
        grant: &grant,
        started_at: &started_at,
        destination,
    };
    apply(
        ctx,
        &operation,
        &preview,
        approved,
        &[],
        next,
        version,
        watch,
    )
    .await
}

/// The plan's Budget, the write an earlier run left unsettled (if any), and the plan assessed
/// on the Budget's mirror; `Err` is the verdict when one of them cannot be had yet.
async fn read(
    plan: &CategorizationPlan,
    ctx: &Context,
    next: &CategorizationPlanStatus,
) -> Result<Result<(Budget, Option<Resume>, Assessed), PlanVerdict>, Error> {
    let namespace = plan.namespace().unwrap_or_default();
    let budget_name = &plan.spec.budget_ref.name;
    let Some(budget) = ctx.budget(&namespace, budget_name).map(|b| (*b).clone()) else {
        let message = format!(
            "Budget {budget_name} does not exist in namespace {namespace}: create it, or fix spec.budgetRef"
        );
        return Ok(Err(PlanVerdict::Invalid(message)));
    };
    let uid = plan.meta().uid.clone().unwrap_or_default();
    let resume = match &next.intent {
        Some(intent) => match resumable(ctx, plan, &budget, &uid, intent).await? {
            Ok(resume) => Some(resume),
            Err(verdict) => return Ok(Err(verdict)),
        },
        None => None,
    };
    let found = preview(plan, ctx, &namespace, &budget, resume.as_ref()).await?;
    Ok(found.map(|found| (budget, resume, found)))
}

/// What is written under `grant`: the approved preview, or the proposal as the approver edited
/// it (the proposer is told what changed); `Err` says why the edits cannot be applied.
async fn with_edits(
    ctx: &Context,
    plan: &CategorizationPlan,
    budget: &Budget,
    grant: &mut Grant,
    (preview, approved): (PlanPreview, Approved),
) -> Result<(PlanPreview, Approved), EditError> {
    let Some(edits) = grant.edits().cloned() else {
        return Ok((preview, approved));
    };
    let (preview, approved, summary) = edited(ctx, plan, budget, grant, &approved, &edits).await?;
    grant.edited(approved.hash.clone());
    if !grant.resumed {
        tell_edited(ctx, plan, grant, &summary, preview.changes.len()).await;
    }
    Ok((preview, approved))
}

/// The proposal as the approver edited it, previewed on the Budget's fresh mirror and bound
/// to its own hash, with the edits' one-line summary; `Err` says why they cannot be applied.
async fn edited(
    ctx: &Context,
    plan: &CategorizationPlan,
    budget: &Budget,
    grant: &Grant,
    approved: &Approved,
    edits: &Edits,
) -> Result<(PlanPreview, Approved, String), EditError> {
    // Right before the write, as every other check of the decider's authority.
    edit::allowed(
        edits,
        budget.spec.approval.four_eyes || grant.asked_four_eyes(),
    )?;
    let askable = edit::askable(plan, budget);
    let namespace = plan.namespace().unwrap_or_default();
    let slot = ctx.budget_links.mirror(&namespace, &budget.name_any());
    let slot = slot.state.read().await;
    let closed = budget.spec.closed_through.as_deref();
    let (preview, approved) = edit::edited(approved, edits, &askable, &slot.mirror, closed)?;
    let summary = edit::summary(edits, |id| slot.mirror.category_name(id));
    Ok((preview, approved, summary))
}

/// Tells the proposer (an Event on the plan) what the approver changed before approving
/// (`summary`), and how many changes are written.
async fn tell_edited(
    ctx: &Context,
    plan: &CategorizationPlan,
    grant: &Grant,
    summary: &str,
    written: usize,
) {
    let request = grant.record.request.as_deref().unwrap_or_default();
    let note = format!(
        "{} approved ApprovalRequest {request} with edits: {summary}. {written} changes are written as operation {}.",
        grant.record.by, grant.attempt_id
    );
    ctx.events
        .publish(plan, false, "ApprovedWithEdits", "Approve", note)
        .await;
}

/// What is known of the interrupted write `intent` names. What is written is always computed
/// from the spec and YNAB's state, never taken from the status: an ApprovalRequest records the
/// preview its approval was spent on (the status' hash is only a hint, for a write the policy
/// ran: the spec and YNAB must still hash to it and the policy decides again), and the journal,
/// which only ledgerops writes, records what was about to be written. What YNAB changed since
/// the write was decided is read back first when the mirror does not remember that far; `Err`
/// is the verdict while it cannot be: nothing is settled on a doubt.
async fn resumable(
    ctx: &Context,
    plan: &CategorizationPlan,
    budget: &Budget,
    uid: &str,
    intent: &WriteIntent,
) -> Result<Result<Resume, PlanVerdict>, Error> {
    let namespace = &plan.namespace().unwrap_or_default();
    let request = approval_gate::in_flight(ctx, namespace, uid).await?;
    let hash = request.map_or_else(|| intent.target_hash.clone(), |r| r.spec.preview_hash);
    let recorded =
        journal::operation(&ctx.client, namespace, &plan.name_any(), &intent.attempt_id).await?;
    let changes = recorded
        .as_ref()
        .map(journal::Operation::changes)
        .unwrap_or_default();
    // Only after a cut-off write: every plan's operations, for one that moved these on since.
    let others = journal::all_operations(&ctx.client, namespace).await?;
    let their_changes: Vec<Vec<AppliedChange>> =
        others.iter().map(journal::Operation::changes).collect();
    let started_at = recorded
        .as_ref()
        .map_or_else(|| intent.started_at.0.to_string(), |o| o.started_at.clone());
    let moved_since = step::moved_since(
        (&intent.attempt_id, &started_at, &changes),
        others
            .iter()
            .zip(&their_changes)
            .map(|(o, c)| (o.operation_id.as_str(), o.started_at.as_str(), c.as_slice())),
    );
    let started_here = ctx.attempts_here.contains(&intent.attempt_id);
    let elsewhere = match intent.knowledge.filter(|_| !started_here) {
        None => BTreeSet::new(),
        Some(knowledge) => match moved_elsewhere(ctx, budget, &changes, knowledge).await {
            Some(elsewhere) => elsewhere,
            None => {
                return Ok(Err(PlanVerdict::Pending(awaiting_read_back(
                    &intent.attempt_id,
                ))));
            }
        },
    };
    Ok(Ok(Resume {
        attempt_id: intent.attempt_id.clone(),
        started_at: intent.started_at.clone(),
        hash,
        decision: recorded
            .as_ref()
            .and_then(|o| o.entries.first())
            .and_then(|e| e.decision.clone()),
        changes,
        moved_since,
        knowledge: intent.knowledge,
        elsewhere,
    }))
}

/// The transactions of `changes` that YNAB moved elsewhere since `knowledge`
/// ([`operation::moved_elsewhere`]), reading back to it first if the Budget's mirror does not
/// remember that far; `None` while it cannot tell.
async fn moved_elsewhere(
    ctx: &Context,
    budget: &Budget,
    changes: &[AppliedChange],
    knowledge: i64,
) -> Option<BTreeSet<String>> {
    super::read_back::reach_back(ctx, budget, knowledge).await;
    let namespace = budget.namespace().unwrap_or_default();
    let cell = ctx.budget_links.mirror(&namespace, &budget.name_any());
    let slot = cell.state.read().await;
    operation::moved_elsewhere(changes, &slot.mirror, knowledge)
}

/// The preview of the plan's spec on the Budget's mirror, or the verdict when it cannot be
/// previewed. With `resume`, the changes and hash of an interrupted write, transactions that
/// already show that write are read as they were before it, so the preview is the one that was
/// decided, if nothing else changed.
async fn preview(
    plan: &CategorizationPlan,
    ctx: &Context,
    namespace: &str,
    budget: &Budget,
    resume: Option<&Resume>,
) -> Result<Result<Assessed, PlanVerdict>, Error> {
    let basis = match (&plan.spec.undo_of, &plan.spec.assignments) {
        (Some(of), _) => match journal::latest_for(&ctx.client, namespace, of).await? {
            Some(operation) => Basis::Undo(operation.changes()),
            None => {
                let message = format!(
                    "Plan {of} has no journal entry in namespace {namespace}: it was never applied, so there is nothing to undo"
                );
                return Ok(Err(PlanVerdict::Invalid(message)));
            }
        },
        (None, Some(assignments)) => Basis::Assignments(assignments.clone()),
        (None, None) => {
            return Ok(Err(PlanVerdict::Invalid(
                "Set spec.assignments or spec.undoOf".into(),
            )));
        }
    };
    // What every Transaction and plan last wrote decides whether the policy may run a write.
    ctx.written_known().await;
    let slot = ctx.budget_links.mirror(namespace, &budget.name_any());
    let slot = slot.state.read().await;
    let mirror = &slot.mirror;
    if !slot.synced_for(&budget.spec.plan_id) {
        return Ok(Err(PlanVerdict::Unsynced(format!(
            "Waiting for Budget {} to sync with YNAB",
            budget.name_any()
        ))));
    }
    let scope = super::scope_of(namespace, budget);
    let asking = edited::key_of(plan);
    let last =
        |ids: &HashSet<&str>| ctx.last_written((namespace, &budget.name_any()), ids, &asking);
    Ok(assess::assess(
        plan,
        budget,
        basis,
        (mirror, last),
        &scope,
        resume,
    ))
}
