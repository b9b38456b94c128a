//! The Transaction reconciler: converge one YNAB transaction to its declared end state, reading
//! before writing, never overwriting someone else's edit, asking a person when the Budget's
//! policy says so, and recording the intent before a write and the outcome after it. A write
//! is handed to the batcher, not waited for: its answer wakes the Transaction, whose next
//! reconcile records it (see `writes_in_flight`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::approval_gate::{self, Ask, Gate};
use super::summarize::{StatusWrite, summarize_and_patch};
use super::writes_in_flight::{Landed, Write};
use super::{Context, Error, budget_scoped, lineage};
use crate::api::approval::SubjectKind;
use crate::api::budget::Budget;
use crate::api::transaction::{Transaction, TransactionStatus};
use crate::k8s::watches::Watches;
use crate::k8s::{objects, status};
use crate::logic::approval::{edited, policy};
use crate::logic::plan::{self, PlannedChange};
use crate::logic::runtime::request_priority::WriteDecision;
use crate::logic::transaction::batch::{self, Authorized, Submission, WriteItem};
use crate::logic::transaction::check as transaction_check;
use crate::logic::transaction::converge::{self, Expect};
use crate::logic::transaction::status::{self as transaction_status, Verdict};
use crate::logic::transaction::step::{self as step, RESOLVE, Seen, Step};
use crate::logic::transaction::view;
use crate::logic::{approval::gate, status::announce};
use crate::ynab::budget_links::BudgetKey;
use crate::ynab_model::TransactionSummary;

/// Subscribes to the shared watches at once; the returned future runs the controller.
pub fn run(ctx: Arc<Context>, watches: &Watches) -> impl Future<Output = ()> + use<> {
    let concerns: budget_scoped::Concerns<Transaction> =
        |t, ids| ids.contains(&t.spec.transaction_id);
    let woken = ctx
        .writes_in_flight
        .woken()
        .expect("one Transaction controller");
    let controller = budget_scoped::controller(&ctx, &watches.transactions, watches, concerns)
        .reconcile_on(UnboundedReceiverStream::new(woken))
        // A reconcile never waits for YNAB (its write is handed off), so a few at once keep up,
        // and a burst of 10,000 waits in the queue as references, not as tasks.
        .with_config(Config::default().concurrency(super::CONCURRENCY))
        .graceful_shutdown_on(ctx.shutdown.requested());
    super::drain_forgetting(
        controller.run(reconcile, super::error_policy, ctx.clone()),
        ctx,
    )
}

impl budget_scoped::BudgetScoped for Transaction {
    fn budget_name(&self) -> &str {
        &self.spec.budget_ref.name
    }
}

async fn reconcile(tx: Arc<Transaction>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<Transaction>(&ctx);
    let uid = tx.meta().uid.as_deref().unwrap_or_default();
    // Nothing is decided while this process has a write of it in flight: the write's answer
    // wakes it.
    if ctx.writes_in_flight.defer(uid) {
        return Ok(Action::requeue(IDLE));
    }
    let mut next = tx.status.clone().unwrap_or_default();
    // Status writes are conditional on the version this reconcile started from (see plans).
    let mut version = tx.resource_version().unwrap_or_default();
    // Boxed, as every large sub-future here: an awaited future is laid out in its caller's
    // state as well as built in it, so nesting doubles sizes.
    let (step, landed) = match Box::pin(converge_one(&tx, &ctx, &mut next, &mut version)).await? {
        Converged::HandedOff => return Ok(Action::requeue(IDLE)),
        Converged::Step(step) => (step, false),
        Converged::Landed(step) => (step, true),
    };
    let Step { verdict, requeue } = step;
    transaction_status::apply(
        &mut next,
        &verdict,
        tx.metadata.generation,
        Timestamp::now(),
    );
    let before = tx.status.as_ref().and_then(|s| s.phase);
    let warning = announce::transaction_warning(next.phase);
    let announcement = announce::on_phase_change(before, next.phase, &next.conditions, warning);
    let changed = tx.status.as_ref() != Some(&next);
    let patch = StatusWrite::IfUnchanged(&version);
    Box::pin(summarize_and_patch(
        &ctx,
        tx.as_ref(),
        changed,
        &next,
        patch,
        announcement,
        "Converge",
    ))
    .await?;
    if landed {
        ctx.writes_in_flight.recorded(uid);
    }
    // Only once the status records how it was handled: the reconcile the removal triggers must
    // see that status, not the one before.
    if tx.annotations().contains_key(RESOLVE) && transaction_status::resolution_handled(next.phase)
    {
        Box::pin(objects::remove_annotation(
            &ctx.client,
            tx.as_ref(),
            RESOLVE,
        ))
        .await?;
    }
    Ok(Action::requeue(requeue))
}

/// A safety net only: a Transaction is woken by its changes and by its write's answer.
const IDLE: Duration = Duration::from_secs(600);

/// What a reconcile records.
enum Converged {
    /// A verdict, recorded in status.
    Step(Step),
    /// The outcome of a write this process handed off, recorded in status; then forgotten.
    Landed(Step),
    /// A write is on its way, its intent recorded; its answer wakes the Transaction.
    HandedOff,
}

/// Everything a decision needs, read from the Budget and its mirror at once.
struct Facts {
    /// The cached Budget itself, not a copy: 10,000 reconciles may hold their facts at once.
    budget: Arc<Budget>,
    ynab_tx: TransactionSummary,
    change: Option<PlannedChange>,
    /// The policy's decision on the change: run it, ask a person, or block it.
    decision: policy::Decision,
    seen: Seen,
}

async fn converge_one(
    tx: &Transaction,
    ctx: &Context,
    next: &mut TransactionStatus,
    version: &mut String,
) -> Result<Converged, Error> {
    let uid = tx.meta().uid.as_deref().unwrap_or_default();
    if let Some(landed) = ctx.writes_in_flight.landed(uid) {
        return Box::pin(record_landed(tx, ctx, landed, next))
            .await
            .map(Converged::Landed);
    }
    if let Some(knowledge) = next.intent.as_ref().and_then(|i| i.knowledge) {
        Box::pin(reach_back(tx, ctx, knowledge)).await;
    }
    // What every Transaction and plan last wrote decides whether the policy may run a write.
    ctx.written_known().await;
    let facts = match Box::pin(read_facts(tx, ctx, next)).await? {
        Ok(facts) => facts,
        Err(verdict) => return Ok(Converged::Step(Step::not_ready(verdict))),
    };
    let generation = tx.metadata.generation;
    if let Some(standing) = step::standing(next, generation, &tx.spec.transaction_id) {
        return Ok(Converged::Step(standing));
    }
    step::pin_baseline(next, &facts.seen, generation, Timestamp::now());
    let resolution = tx.annotations().get(RESOLVE).map(String::as_str);
    let decision = step::decide(&facts.seen, next, resolution, generation);
    // A write an earlier run started and never recorded the outcome of: YNAB says how it ended.
    if let Some(settled) = decision.settled {
        let reason = "InterruptedWriteSettled";
        let publishing = ctx
            .events
            .publish(tx, settled.warning, reason, "Settle", settled.note);
        Box::pin(publishing).await;
        if let Some(landed) = settled.completes {
            // Settled without writing: the approval that write spent authorizes nothing more.
            let namespace = tx.namespace().unwrap_or_default();
            let uid = tx.meta().uid.clone().unwrap_or_default();
            let completing =
                approval_gate::complete_in_flight(ctx, &namespace, &uid, Timestamp::now(), landed);
            Box::pin(completing).await?;
        }
    }
    match step::without_write(
        decision.precommit,
        &facts.seen,
        resolution,
        next,
        generation,
        Timestamp::now(),
    ) {
        Some(done) => Ok(Converged::Step(done)),
        None => Box::pin(write(tx, ctx, facts, decision.expect, next, version)).await,
    }
}

/// Has the Budget's mirror read back to `knowledge`, the one an unsettled write was decided on
/// (see [`super::read_back`]).
async fn reach_back(tx: &Transaction, ctx: &Context, knowledge: i64) {
    let namespace = tx.namespace().unwrap_or_default();
    if let Some(budget) = ctx.budget(&namespace, &tx.spec.budget_ref.name) {
        super::read_back::reach_back(ctx, &budget, knowledge).await;
    }
}

/// Reads the Budget, the mirror and the transaction, and records what YNAB shows in `next`;
/// `Err` is the verdict when something needed is missing or wrong.
async fn read_facts(
    tx: &Transaction,
    ctx: &Context,
    next: &mut TransactionStatus,
) -> Result<Result<Facts, Verdict>, Error> {
    let namespace = tx.namespace().unwrap_or_default();
    let budget_name = &tx.spec.budget_ref.name;
    let Some(budget) = ctx.budget(&namespace, budget_name) else {
        let message = format!(
            "Budget {budget_name} does not exist in namespace {namespace}: create it, or fix spec.budgetRef"
        );
        return Ok(Err(Verdict::Invalid(message)));
    };
    let target = match converge::target_of(&tx.spec) {
        Ok(t) => t,
        Err(e) => return Ok(Err(Verdict::Invalid(format!("spec.split: {e}")))),
    };
    let slot = ctx.budget_links.mirror(&namespace, budget_name);
    let slot = slot.state.read().await;
    let mirror = &slot.mirror;
    if !slot.synced_for(&budget.spec.plan_id) {
        return Ok(Err(Verdict::Unsynced(format!(
            "Waiting for Budget {budget_name} to sync with YNAB"
        ))));
    }
    let id = &tx.spec.transaction_id;
    let Some(ynab_tx) = mirror.transactions.get(id).cloned() else {
        return Ok(Err(Verdict::Invalid(
            plan::PlanError::UnknownTransaction(id.clone()).to_string(),
        )));
    };
    let digits = mirror.decimal_digits();
    next.current = Some(view::refreshed(
        next.current.take(),
        view::observed(&ynab_tx, mirror, digits),
    ));
    if let Err(problem) = transaction_check::check_target(&ynab_tx, &target, mirror) {
        return Ok(Err(Verdict::Invalid(problem)));
    }
    let current = batch::current_of(mirror, id, &target).unwrap_or_default();
    let change = view::planned_change(&ynab_tx, &current, &target, mirror, digits);
    let known_payees = policy::known_payees(mirror, change.as_slice());
    let respected = edited::respect(
        policy::decide(change.as_slice(), &budget.spec.approval, &known_payees),
        change.as_slice(),
        |ids: &HashSet<&str>| ctx.last_written((&namespace, budget_name), ids, &edited::key_of(tx)),
        |id| mirror.categories.get(id).map(|c| c.name.clone()),
    );
    let decision = match respected {
        Ok(decision) => decision,
        Err(waiting) => return Ok(Err(Verdict::Pending(waiting.to_string()))),
    };
    let intent = next.intent.as_ref();
    if let Some(waiting) = step::awaiting_read_back(intent, mirror) {
        return Ok(Err(waiting));
    }
    let seen = Seen::new(id, (current, target), next.applied.as_ref(), intent, mirror);
    Ok(Ok(Facts {
        budget,
        ynab_tx,
        change,
        decision,
        seen,
    }))
}

/// Owns the facts so that what only the decision needed is dropped before the hand-off.
async fn write(
    tx: &Transaction,
    ctx: &Context,
    facts: Facts,
    expect: Expect,
    next: &mut TransactionStatus,
    version: &mut String,
) -> Result<Converged, Error> {
    let Facts {
        budget,
        ynab_tx,
        change,
        decision,
        seen,
    } = facts;
    if let Some(held) = step::held_back(&seen, &ynab_tx, &budget.name_any(), &budget.spec) {
        return Ok(Converged::Step(held));
    }
    // Only what differs is written and approved: a split already in place is not sent again.
    let writes = converge::still_to_write(&seen.current, &seen.target);
    let from = seen.current.restrict_to(&writes);
    let now = Timestamp::now();
    let namespace = tx.namespace().unwrap_or_default();
    let scope = super::scope_of(&namespace, &budget);
    let hash = converge::approval_hash(&scope, &ynab_tx, &from, &writes);
    let ask = Ask {
        subject: tx,
        kind: SubjectKind::Transaction,
        budget: &budget,
        changes: change.as_slice(),
        decision,
        hash: hash.clone(),
        summary: seen.summary(),
        review: None,
    };
    let uid = tx.meta().uid.as_deref().unwrap_or_default();
    let attempt = gate::attempt_id(tx.meta().uid.as_deref().unwrap_or("local"), now);
    let grant = match Box::pin(approval_gate::gate(ctx, ask, attempt, now)).await? {
        Gate::Proceed(grant) => grant,
        Gate::Wait(hold) => {
            return Ok(Converged::Step(Step::idle(gate::transaction_verdict(
                &hold,
            ))));
        }
    };
    drop((ynab_tx, change));
    let Some(destination) = ctx.destination(&namespace, &budget) else {
        return Ok(Converged::Step(step::no_token(&budget.name_any())));
    };
    Box::pin(grant.spend(ctx, now)).await?;
    let verdict = step::start(next, &seen, &grant.attempt_id, now);
    transaction_status::apply(next, &verdict, tx.metadata.generation, now);
    *version = Box::pin(status::apply_if_unchanged(&ctx.client, tx, next, version)).await?;

    let submission = Submission {
        items: vec![WriteItem {
            transaction_id: seen.id.clone(),
            target: writes,
            expect,
        }],
        all_or_nothing: false,
        authorized: Authorized::Transaction { scope, hash },
        operation: None,
        priority: lineage::write_priority(ctx, grant.decided_by(), tx.meta()),
        respect: (grant.decided_by() == WriteDecision::Policy).then(|| edited::key_of(tx)),
    };
    let key = BudgetKey {
        namespace,
        name: budget.name_any(),
    };
    let in_flight = Write {
        grant,
        seen,
        generation: tx.metadata.generation,
    };
    let reply = ctx
        .writes_in_flight
        .start(uid, ObjectRef::from_obj(tx), in_flight);
    ctx.batcher.hand_off(key, destination, submission, reply);
    Ok(Converged::HandedOff)
}

/// Records the outcome of a write this process handed off, in `next`.
async fn record_landed(
    tx: &Transaction,
    ctx: &Context,
    landed: Landed,
    next: &mut TransactionStatus,
) -> Result<Step, Error> {
    let Landed {
        write: Write {
            grant,
            seen,
            generation,
        },
        outcome,
        look_again,
    } = landed;
    if let Some(written) = step::approval_used(&outcome) {
        Box::pin(grant.complete(ctx, Timestamp::now(), written)).await?;
    }
    // The status shows YNAB after the write, so the next look finds nothing new to record.
    if outcome.holds_target() {
        let namespace = tx.namespace().unwrap_or_default();
        let cell = ctx
            .budget_links
            .mirror(&namespace, &tx.spec.budget_ref.name);
        let slot = cell.state.read().await;
        next.current = view::observed_in(&slot.mirror, &seen.id).or(next.current.take());
    }
    let mut step = step::written(
        outcome,
        &seen,
        grant.record,
        next,
        generation,
        Timestamp::now(),
    );
    if look_again {
        step.requeue = Duration::ZERO;
    }
    Ok(step)
}

#[cfg(test)]
#[path = "transaction_tests.rs"]
mod tests;
