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
use kube::{Resource, ResourceExt};

use super::approval_gate::{self, Ask, Gate};
use super::{Context, Error, scoped};
use crate::api::approval::SubjectKind;
use crate::api::budget::Budget;
use crate::api::common::{CategoryChange, WriteIntent};
use crate::api::plan::{CategorizationPlan, CategorizationPlanStatus, PlanPhase};
use crate::k8s::{journal, status};
use crate::logic::batch::{Outcome, Submission, WriteItem};
use crate::logic::converge::{Allocation, EndState, Expect};
use crate::logic::plan::{self, AppliedChange, PlanPreview, PlannedChange};
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

async fn reconcile(plan: Arc<CategorizationPlan>, ctx: Arc<Context>) -> Result<Action, Error> {
    super::count::<CategorizationPlan>(&ctx);
    let mut next = plan.status.clone().unwrap_or_default();
    let (verdict, requeue) = advance(&plan, &ctx, &mut next).await?;
    plan_status::apply(
        &mut next,
        &verdict,
        plan.metadata.generation,
        Timestamp::now(),
    );
    if plan.status.as_ref() != Some(&next) {
        status::apply(&ctx.client, plan.as_ref(), &next).await?;
    }
    Ok(requeue)
}

async fn advance(
    plan: &CategorizationPlan,
    ctx: &Context,
    next: &mut CategorizationPlanStatus,
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
    // An apply cut off by a restart carries on with the preview that was approved: YNAB may
    // already show part or all of it, so a fresh preview would not match the approval.
    let approved = match (&next.intent, &next.preview) {
        (Some(intent), Some(stored)) if intent.target_hash == stored.hash => Some(stored.clone()),
        _ => None,
    };
    let approved = match approved {
        Some(preview) => preview,
        None => {
            let (preview, decision) = match preview(plan, ctx, &namespace, &budget).await? {
                Ok(found) => found,
                Err(verdict) => return Ok((verdict, Action::requeue(Duration::from_secs(60)))),
            };
            next.intent = None;
            next.preview = Some(preview.clone().into());
            if preview.nothing_to_do() {
                return Ok((PlanVerdict::NothingToDo, Action::await_change()));
            }
            let ask = Ask {
                subject: plan,
                kind: SubjectKind::CategorizationPlan,
                budget: &budget,
                changes: &preview.changes,
                decision,
                summary: summary(&preview.changes),
                hash: preview.hash.clone(),
            };
            if let Gate::Wait(verdict) = approval_gate::gate(ctx, ask, now).await? {
                return Ok((waiting(verdict), Action::requeue(Duration::from_secs(600))));
            }
            preview.into()
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
    let attempt = match &next.intent {
        Some(intent) => intent.attempt_id.clone(),
        None => format!(
            "{}-{}",
            plan.meta().uid.as_deref().unwrap_or("local"),
            now.as_millisecond()
        ),
    };
    next.intent = Some(WriteIntent {
        attempt_id: attempt.clone(),
        target_hash: approved.hash.clone(),
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
    status::apply(&ctx.client, plan, &applying).await?;

    let items = approved.changes.iter().map(write_item).collect();
    let submission = Submission {
        items,
        all_or_nothing: true,
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
        Err(e) => vec![Outcome::NotLanded(e.to_string())],
    };
    if let Some(Outcome::NotLanded(why)) =
        outcomes.iter().find(|o| matches!(o, Outcome::NotLanded(_)))
    {
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
    if outcomes.contains(&Outcome::Mismatch) {
        next.intent = None;
        return Ok((PlanVerdict::Failed("YNAB accepted the write but shows other categories afterwards: check the transactions in YNAB".into()), Action::await_change()));
    }
    if !outcomes.iter().all(|o| {
        matches!(
            o,
            Outcome::Written | Outcome::AlreadyTarget | Outcome::NoChange
        )
    }) {
        // YNAB changed under the preview: nothing was written; preview and ask again.
        next.intent = None;
        let message = "The plan changed between the preview and the answer: nothing was written, a new preview and request follow";
        return Ok((
            PlanVerdict::Pending(message.into()),
            Action::requeue(Duration::from_secs(1)),
        ));
    }
    let entry = journal::Entry {
        operation_id: attempt.clone(),
        plan: plan.name_any(),
        budget: budget_name.clone(),
        applied_at: now.to_string(),
        changes: approved.changes.iter().map(AppliedChange::from).collect(),
    };
    journal::record(&ctx.client, &namespace, &entry).await?;
    next.intent = None;
    next.operation_id = Some(attempt.clone());
    next.applied_at = Some(Time(Timestamp::now()));
    Ok((
        PlanVerdict::Applied(applied_message(plan, &attempt)),
        Action::await_change(),
    ))
}

/// The preview and the policy's decision, or the verdict when the plan cannot be previewed.
async fn preview(
    plan: &CategorizationPlan,
    ctx: &Context,
    namespace: &str,
    budget: &Budget,
) -> Result<Result<(PlanPreview, policy::Decision), PlanVerdict>, Error> {
    let undo = match &plan.spec.undo_of {
        Some(of) => match journal::latest_for(&ctx.client, namespace, of).await? {
            Some(entry) => Some(entry),
            None => {
                let message = format!(
                    "Plan {of} has no journal entry in namespace {namespace}: it was never applied, so there is nothing to undo"
                );
                return Ok(Err(PlanVerdict::Invalid(message)));
            }
        },
        None => None,
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
    let digits = mirror.currency.as_ref().map_or(2, |c| c.decimal_digits);
    let preview = match (&undo, &plan.spec.assignments) {
        (Some(entry), _) => plan::undo_preview(&entry.changes, mirror, digits),
        (None, Some(assignments)) => {
            if let Err(errors) = plan::validate(assignments, mirror) {
                let message = errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ");
                return Ok(Err(PlanVerdict::Invalid(message)));
            }
            plan::preview(assignments, mirror, digits)
        }
        (None, None) => {
            return Ok(Err(PlanVerdict::Invalid(
                "Set spec.assignments or spec.undoOf".into(),
            )));
        }
    };
    let known: HashSet<String> = policy::known_payees(mirror, &preview.changes);
    let decision = policy::decide(&preview.changes, &budget.spec.approval, &known);
    Ok(Ok((preview, decision)))
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
