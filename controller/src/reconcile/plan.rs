//! The CategorizationPlan reconciler: validate, preview, ask (or not, as the Budget's policy
//! says), and once approved apply every change in one bulk request through the shared write
//! path, journaling before/after for undo. `undoOf` plans preview and apply the revert.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};

use super::approval_gate::{self, Ask, Gate};
use super::{Context, Error, scoped};
use crate::api::approval::SubjectKind;
use crate::api::budget::Budget;
use crate::api::common::{CategoryChange, WriteIntent};
use crate::api::plan::{CategorizationPlan, CategorizationPlanStatus, PlanPhase};
use crate::k8s::{journal, status};
use crate::logic::batch::{Authorized, Outcome, Submission, WriteItem};
use crate::logic::converge::{Allocation, EndState, Expect};
use crate::logic::plan::outcome::{self, WriteResult};
use crate::logic::plan::{self, AppliedChange, Approved, Basis, PlanPreview, PlannedChange, State};
use crate::logic::plan_status::{self, PlanVerdict};
use crate::logic::policy;
use crate::logic::transaction_status::Verdict;

/// Runs the CategorizationPlan controller until shutdown.
pub async fn run(ctx: Arc<Context>) {
    // A plan not applied yet previews YNAB's state: any change may move it.
    let concerns: scoped::Concerns<CategorizationPlan> =
        |p, _| p.status.as_ref().and_then(|s| s.phase) != Some(PlanPhase::Applied);
    let controller = scoped::controller(&ctx, concerns).shutdown_on_signal();
    super::drain(controller.run(reconcile, super::error_policy, ctx)).await;
}

impl scoped::BudgetScoped for CategorizationPlan {
    fn budget_name(&self) -> &str {
        &self.spec.budget_ref.name
    }
}

async fn reconcile(cached: Arc<CategorizationPlan>, ctx: Arc<Context>) -> Result<Action, Error> {
    super::count::<CategorizationPlan>(&ctx);
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
    let (verdict, requeue) = advance(&plan, &ctx, &mut next, &mut version).await?;
    plan_status::apply(
        &mut next,
        &verdict,
        plan.metadata.generation,
        Timestamp::now(),
    );
    if plan.status.as_ref() != Some(&next) {
        status::apply_if_unchanged(&ctx.client, &plan, &next, &version).await?;
    }
    Ok(requeue)
}

async fn advance(
    plan: &CategorizationPlan,
    ctx: &Context,
    next: &mut CategorizationPlanStatus,
    version: &mut String,
) -> Result<(PlanVerdict, Action), Error> {
    if next.phase == Some(PlanPhase::Applied) {
        let message = applied_message(plan, next.operation_id.as_deref().unwrap_or_default());
        return Ok((PlanVerdict::Applied(message), Action::await_change()));
    }
    let namespace = plan.namespace().unwrap_or_default();
    let budget_name = &plan.spec.budget_ref.name;
    let Some(budget) = ctx
        .budgets
        .get(&ObjectRef::new(budget_name).within(&namespace))
        .map(|b| (*b).clone())
    else {
        let message = format!(
            "Budget {budget_name} does not exist in namespace {namespace}: create it, or fix spec.budgetRef"
        );
        return Ok((
            PlanVerdict::Invalid(message),
            Action::requeue(Duration::from_secs(60)),
        ));
    };
    let now = Timestamp::now();
    let uid = plan.meta().uid.clone().unwrap_or_default();
    // What is written is always computed from the spec and YNAB's state, never taken from the
    // status. An apply cut off by a restart is recognised by its ApprovalRequest, which records
    // the write its approval was spent on; the status' intent only says where to look.
    let resume = match &next.intent {
        Some(intent) => approval_gate::in_flight(ctx, &namespace, &uid)
            .await?
            .map(|request| {
                let changes = request.spec.changes.iter().map(AppliedChange::from);
                (changes.collect(), request.spec.preview_hash)
            })
            // A write the Budget's policy ran has no request: the status names what it started.
            // Only a hint: the spec and YNAB must still hash to it, and the policy decides again.
            .or_else(|| {
                let preview = next.preview.as_ref()?;
                (preview.hash == intent.target_hash).then(|| {
                    let changes = preview.changes.iter().map(AppliedChange::from);
                    (changes.collect(), preview.hash.clone())
                })
            }),
        None => None,
    };
    let found = match preview(plan, ctx, &namespace, &budget, resume).await? {
        Ok(found) => found,
        Err(verdict) => return Ok((verdict, Action::requeue(Duration::from_secs(60)))),
    };
    let Found {
        preview,
        decision,
        approved,
    } = found;
    next.intent = None;
    next.preview = Some(preview.clone().into());
    if preview.nothing_to_do() {
        return Ok((PlanVerdict::NothingToDo, Action::await_change()));
    }
    let attempt = format!("{uid}-{}", now.as_millisecond());
    let ask = Ask {
        subject: plan,
        kind: SubjectKind::CategorizationPlan,
        budget: &budget,
        changes: &preview.changes,
        decision,
        summary: summary(&preview.changes),
        hash: preview.hash.clone(),
    };
    // A rejection of this very preview stands even if its request was deleted since.
    if let Some(verdict) = plan_status::standing_rejection(next.decision.as_ref(), &preview.hash) {
        return Ok((verdict, Action::await_change()));
    }
    let grant = match approval_gate::gate(ctx, ask, attempt, now).await? {
        Gate::Proceed(grant) => grant,
        Gate::Wait(waiting) => {
            next.approval_request = waiting.request;
            if waiting.rejection.is_some() {
                next.decision = waiting.rejection;
            }
            return Ok((
                self::waiting(waiting.verdict),
                Action::requeue(Duration::from_secs(600)),
            ));
        }
    };
    if !budget.spec.writes.enabled {
        let message = format!(
            "Approved, but Budget {budget_name} has spec.writes.enabled: false, so nothing is written: enable writes on the Budget to apply it"
        );
        return Ok((PlanVerdict::ReadOnly(message), Action::await_change()));
    }
    let Some(destination) = ctx.destination(&namespace, &budget) else {
        return Ok((
            PlanVerdict::Pending(format!(
                "Waiting for Budget {budget_name} to sync with YNAB"
            )),
            Action::requeue(Duration::from_secs(30)),
        ));
    };
    next.approval_request.clone_from(&grant.record.request);
    grant.spend(ctx, now).await?;
    next.intent = Some(WriteIntent {
        attempt_id: grant.attempt_id.clone(),
        target_hash: preview.hash.clone(),
        from_hash: None,
        started_at: Time(now),
    });
    let mut applying = next.clone();
    plan_status::apply(
        &mut applying,
        &PlanVerdict::Applying { interrupted: None },
        plan.metadata.generation,
        now,
    );
    *version = status::apply_if_unchanged(&ctx.client, plan, &applying, version).await?;

    let ids: Vec<String> = preview
        .changes
        .iter()
        .map(|c| c.change.transaction_id.clone())
        .collect();
    let submission = Submission {
        items: preview
            .changes
            .iter()
            .map(|c| write_item(&c.change))
            .collect(),
        all_or_nothing: true,
        authorized: Authorized::Plan(approved),
    };
    let outcomes = match ctx
        .writer
        .submit(
            (namespace.clone(), budget_name.clone()),
            destination,
            submission,
        )
        .await
    {
        Ok(outcomes) => outcomes,
        Err(e) => vec![Outcome::NotLanded(e.to_string()); ids.len()],
    };
    let done = Timestamp::now();
    let verdict = match outcome::summarize(&ids, &outcomes) {
        WriteResult::NotLanded(why) => {
            let message = format!(
                "The bulk write did not land ({why}); ledgerops tries again with the same approval"
            );
            return Ok((
                PlanVerdict::Applying {
                    interrupted: Some(message),
                },
                Action::requeue(Duration::from_secs(30)),
            ));
        }
        WriteResult::Landed => None,
        WriteResult::Stale(message) | WriteResult::Changed(message) => {
            Some((PlanVerdict::Pending(message), Duration::from_secs(1)))
        }
        WriteResult::Blocked(message) => Some((
            PlanVerdict::Blocked {
                phase: PlanPhase::Blocked,
                reason: "GuardedTransaction",
                message,
            },
            Duration::from_secs(600),
        )),
        WriteResult::Mismatch(message) => {
            Some((PlanVerdict::Failed(message), Duration::from_secs(600)))
        }
    };
    next.intent = None;
    if let Some((verdict, wait)) = verdict {
        // Nothing was written under this approval, and it is spent: a new one is needed.
        grant.complete(ctx, done, false).await?;
        return Ok((verdict, Action::requeue(wait)));
    }
    let entry = journal::Entry {
        operation_id: grant.attempt_id.clone(),
        plan: plan.name_any(),
        budget: budget_name.clone(),
        applied_at: done.to_string(),
        changes: preview
            .changes
            .iter()
            .map(|c| AppliedChange::from(&c.change))
            .collect(),
        decision: Some(grant.record.clone()),
    };
    journal::record(&ctx.client, &namespace, &entry).await?;
    grant.complete(ctx, done, true).await?;
    next.operation_id = Some(grant.attempt_id.clone());
    next.applied_at = Some(Time(done));
    next.decision = Some(grant.record);
    Ok((
        PlanVerdict::Applied(applied_message(plan, &entry.operation_id)),
        Action::await_change(),
    ))
}

/// A plan's preview, the policy's decision on it, and what the write path re-checks.
struct Found {
    preview: PlanPreview,
    decision: policy::Decision,
    approved: Approved,
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
    resume: Option<(Vec<AppliedChange>, String)>,
) -> Result<Result<Found, PlanVerdict>, Error> {
    let basis = match (&plan.spec.undo_of, &plan.spec.assignments) {
        (Some(of), _) => match journal::latest_for(&ctx.client, namespace, of).await? {
            Some(entry) => Basis::Undo(entry.changes),
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
    let slot = ctx.registry.mirror(namespace, &budget.name_any());
    let slot = slot.read().await;
    let mirror = &slot.mirror;
    if mirror.server_knowledge == 0 || slot.source.0 != budget.spec.plan_id {
        return Ok(Err(PlanVerdict::Pending(format!(
            "Waiting for Budget {} to sync with YNAB",
            budget.name_any()
        ))));
    }
    if let Basis::Assignments(assignments) = &basis
        && let Err(errors) = plan::validate(assignments, mirror)
    {
        let message = errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        return Ok(Err(PlanVerdict::Invalid(message)));
    }
    let digits = mirror.currency.as_ref().map_or(2, |c| c.decimal_digits);
    let scope = super::scope_of(namespace, budget);
    let approved_as = |changes: Vec<AppliedChange>, hash: String| Approved {
        scope: scope.clone(),
        basis: basis.clone(),
        changes,
        hash,
        decimal_digits: digits,
    };
    let resumed = resume
        .map(|(changes, hash)| approved_as(changes, hash))
        .map(|approved| (approved.recompute(mirror), approved))
        .filter(|(preview, approved)| preview.hash == approved.hash);
    let (preview, approved) = match resumed {
        Some(found) => found,
        None => {
            let preview = basis.preview(&State::new(&scope, mirror, digits));
            let changes = preview
                .changes
                .iter()
                .map(|c| AppliedChange::from(&c.change))
                .collect();
            let approved = approved_as(changes, preview.hash.clone());
            (preview, approved)
        }
    };
    if let Err(message) = plan::guarded(
        &preview.changes,
        mirror,
        budget.spec.closed_through.as_deref(),
    ) {
        return Ok(Err(PlanVerdict::Blocked {
            phase: PlanPhase::Blocked,
            reason: "GuardedTransaction",
            message,
        }));
    }
    let known: HashSet<String> = policy::known_payees(mirror, &preview.changes);
    let decision = policy::decide(&preview.changes, &budget.spec.approval, &known);
    Ok(Ok(Found {
        preview,
        decision,
        approved,
    }))
}

/// The write that moves one transaction as the preview shows, only if YNAB still shows its
/// "before".
fn write_item(change: &CategoryChange) -> WriteItem {
    let allocation = |id: &Option<String>| {
        let a = id
            .clone()
            .map_or(Allocation::Uncategorized, Allocation::Category);
        EndState {
            allocation: Some(a),
            ..EndState::default()
        }
    };
    WriteItem {
        transaction_id: change.transaction_id.clone(),
        target: allocation(&change.to_category_id),
        expect: Expect::Exactly(allocation(&change.from_category_id)),
    }
}

fn waiting(verdict: Verdict) -> PlanVerdict {
    match verdict {
        Verdict::AwaitingApproval(m) => PlanVerdict::AwaitingApproval(m),
        Verdict::Blocked {
            reason: "Rejected",
            message,
        } => PlanVerdict::Blocked {
            phase: PlanPhase::Rejected,
            reason: "Rejected",
            message,
        },
        Verdict::Blocked {
            reason: "Expired",
            message,
        } => PlanVerdict::Blocked {
            phase: PlanPhase::Expired,
            reason: "Expired",
            message,
        },
        Verdict::Blocked { reason, message } => PlanVerdict::Blocked {
            phase: PlanPhase::Blocked,
            reason,
            message,
        },
        other => PlanVerdict::Pending(format!("{other:?}")),
    }
}

fn summary(changes: &[PlannedChange]) -> String {
    let total: i64 = changes
        .iter()
        .filter_map(|c| crate::logic::money::parse_decimal(&c.change.amount.0).ok())
        .map(i64::abs)
        .sum();
    format!(
        "{} transactions to recategorise, {} in total",
        changes.len(),
        crate::logic::money::to_decimal(total, 2)
    )
}

fn applied_message(plan: &CategorizationPlan, operation: &str) -> String {
    format!(
        "Applied as operation {operation}; to revert it, apply a CategorizationPlan with spec.undoOf: {}",
        plan.name_any()
    )
}
