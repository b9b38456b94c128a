//! The Transaction reconciler: converge one YNAB transaction to its declared end state, reading
//! before writing, never overwriting someone else's edit, asking a person when the Budget's
//! policy says so, and recording the intent before a write and the outcome after it.

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
use crate::api::common::{Amount, WriteIntent};
use crate::api::transaction::{AppliedState, SplitLine, Transaction, TransactionStatus};
use crate::k8s::{objects, status};
use crate::logic::batch::{self, Authorized, Outcome, Submission, WriteItem};
use crate::logic::converge::{self, Allocation, EndState, Expect, Precommit};
use crate::logic::gate;
use crate::logic::plan::{self, PlannedChange};
use crate::logic::transaction_status::{self, Verdict};
use crate::logic::transaction_view as view;
use crate::logic::{announce, conditions};
use crate::logic::{money, policy, split, transaction_check};
use crate::ynab::model::TransactionSummary;

/// `ours` writes the spec over someone else's edit; `theirs` keeps YNAB's state until the spec
/// changes. Removed once handled.
pub const RESOLVE: &str = "ledgerops.dev/resolve";

/// Runs the Transaction controller until shutdown.
pub async fn run(ctx: Arc<Context>) {
    let concerns: scoped::Concerns<Transaction> = |t, ids| ids.contains(&t.spec.transaction_id);
    let controller = scoped::controller(&ctx, concerns).shutdown_on_signal();
    super::drain(controller.run(reconcile, super::error_policy, ctx)).await;
}

impl scoped::BudgetScoped for Transaction {
    fn budget_name(&self) -> &str {
        &self.spec.budget_ref.name
    }
}

async fn reconcile(tx: Arc<Transaction>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<Transaction>(&ctx);
    let mut next = tx.status.clone().unwrap_or_default();
    // Status writes are conditional on the version this reconcile started from (see plans).
    let mut version = tx.resource_version().unwrap_or_default();
    let (verdict, requeue) = converge_one(&tx, &ctx, &mut next, &mut version).await?;
    transaction_status::apply(
        &mut next,
        &verdict,
        tx.metadata.generation,
        Timestamp::now(),
    );
    if tx.status.as_ref() != Some(&next) {
        status::apply_if_unchanged(&ctx.client, tx.as_ref(), &next, &version).await?;
        let before = tx.status.as_ref().and_then(|s| s.phase);
        let warning = announce::transaction_warning(next.phase);
        if let Some(a) = announce::on_phase_change(before, next.phase, &next.conditions, warning) {
            ctx.events
                .publish(tx.as_ref(), a.warning, &a.reason, "Converge", a.note)
                .await;
        }
    }
    // Only once the status records how it was handled: the reconcile the removal triggers must
    // see that status, not the one before.
    if tx.annotations().contains_key(RESOLVE) && transaction_status::resolution_handled(next.phase)
    {
        objects::remove_annotation(&ctx.client, tx.as_ref(), RESOLVE).await?;
    }
    Ok(requeue)
}

/// Everything a decision needs, read from the Budget and its mirror at once.
struct Facts {
    budget: Budget,
    ynab_tx: TransactionSummary,
    target: EndState,
    current: EndState,
    change: Option<PlannedChange>,
    known_payees: HashSet<String>,
    /// Current, target and last applied allocations by category name.
    words: (String, String, String),
    /// What a write would change, field by field.
    change_words: String,
}

async fn converge_one(
    tx: &Transaction,
    ctx: &Context,
    next: &mut TransactionStatus,
    version: &mut String,
) -> Result<(Verdict, Action), Error> {
    let facts = match read_facts(tx, ctx, next).await? {
        Ok(facts) => facts,
        Err(verdict) => return Ok((verdict, Action::requeue(Duration::from_secs(60)))),
    };
    if next.accepted_generation.is_some() && next.accepted_generation == tx.metadata.generation {
        let message = "A person chose YNAB's state: ledgerops writes again when the spec changes";
        return Ok((converged("AcceptedTheirs", message), idle()));
    }
    next.accepted_generation = None;
    if next.refused_generation.is_some() && next.refused_generation == tx.metadata.generation {
        // Looked at again, the refusal keeps the words YNAB gave it (status and detail).
        let message = conditions::get(&next.conditions, "Blocked")
            .filter(|c| c.reason == "RefusedByYnab")
            .map(|c| c.message.clone())
            .unwrap_or_else(|| {
                format!(
                    "YNAB refused the write of {} for this spec; sending it again would fail the same way: change the spec",
                    tx.spec.transaction_id
                )
            });
        return Ok((refused(message), idle()));
    }
    next.refused_generation = None;
    let resolution = tx.annotations().get(RESOLVE).cloned();
    let prior = next.applied.as_ref().map(converge::prior_of);
    let expect = match resolution.as_deref() {
        Some("ours") => Expect::Prior(Some(facts.current.clone())),
        _ => Expect::Prior(prior),
    };
    // A person's resolution overrides what an interrupted write would settle to.
    let settled = next
        .intent
        .as_ref()
        .filter(|_| resolution.is_none())
        .and_then(|i| {
            converge::settle_intent(
                &facts.current,
                &facts.target,
                &i.target_hash,
                i.from_hash.as_deref(),
            )
        });
    let decision =
        settled.unwrap_or_else(|| converge::precommit(&facts.current, &facts.target, &expect));
    if let (Some(intent), Some(decision)) = (&next.intent, settled) {
        // A write an earlier run started and never recorded the outcome of: YNAB says how it ended.
        let how = match decision {
            Precommit::AlreadyTarget | Precommit::NoChange => {
                "it had landed: adopted, not written again"
            }
            Precommit::Write => "it had not landed: writing it now",
            Precommit::Diverged => "someone changed the transaction since: nothing is written",
        };
        let note = format!(
            "Write {} was interrupted before its outcome was recorded; YNAB shows {how}",
            intent.attempt_id
        );
        ctx.events
            .publish(
                tx,
                decision == Precommit::Diverged,
                "InterruptedWriteSettled",
                "Settle",
                note,
            )
            .await;
        if decision != Precommit::Write {
            // Settled without writing: the approval that write spent authorizes nothing more.
            let namespace = tx.namespace().unwrap_or_default();
            let uid = tx.meta().uid.clone().unwrap_or_default();
            let landed = decision != Precommit::Diverged;
            approval_gate::complete_in_flight(ctx, &namespace, &uid, Timestamp::now(), landed)
                .await?;
        }
    }
    match decision {
        Precommit::Diverged if resolution.as_deref() == Some("theirs") => {
            next.accepted_generation = tx.metadata.generation;
            next.applied = Some(applied_state(&facts.current, Timestamp::now()));
            next.intent = None;
            Ok((
                converged(
                    "AcceptedTheirs",
                    "YNAB's state is kept, as a person asked: ledgerops writes again when the spec changes",
                ),
                idle(),
            ))
        }
        Precommit::NoChange => {
            next.intent = None;
            Ok((
                converged("NoChange", "YNAB holds the declared state"),
                idle(),
            ))
        }
        Precommit::AlreadyTarget => {
            next.intent = None;
            next.applied = Some(applied_state(&facts.target, Timestamp::now()));
            Ok((
                converged(
                    "Adopted",
                    "YNAB already holds the declared state: adopted without writing",
                ),
                idle(),
            ))
        }
        Precommit::Diverged => {
            let (current, wanted, ours) = &facts.words;
            if next.intent.take().is_some() {
                // The interrupted write is settled as ours: someone changed the record after it,
                // and that stays a divergence rather than becoming a first write.
                next.applied = Some(applied_state(&facts.target, Timestamp::now()));
            }
            Ok((
                Verdict::Diverged(view::divergence_message(current, ours, wanted, RESOLVE)),
                idle(),
            ))
        }
        Precommit::Write => write(tx, ctx, &facts, expect, next, version).await,
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
    let Some(budget) = ctx
        .budgets
        .get(&ObjectRef::new(budget_name).within(&namespace))
        .map(|b| (*b).clone())
    else {
        let message = format!(
            "Budget {budget_name} does not exist in namespace {namespace}: create it, or fix spec.budgetRef"
        );
        return Ok(Err(Verdict::Invalid(message)));
    };
    let target = match converge::target_of(&tx.spec) {
        Ok(t) => t,
        Err(e) => return Ok(Err(Verdict::Invalid(format!("spec.split: {e}")))),
    };
    let slot = ctx.registry.mirror(&namespace, budget_name);
    let slot = slot.state.read().await;
    let mirror = &slot.mirror;
    if mirror.server_knowledge == 0 || slot.source.0 != budget.spec.plan_id {
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
    let digits = mirror.currency.as_ref().map_or(2, |c| c.decimal_digits);
    next.current = Some(view::observed(&ynab_tx, mirror, digits));
    if let Err(problem) = transaction_check::check_target(&ynab_tx, &target, mirror) {
        return Ok(Err(Verdict::Invalid(problem)));
    }
    let current = batch::current_of(mirror, id, &target).unwrap_or_default();
    let change = view::planned_change(&ynab_tx, &current, &target, mirror, digits);
    let known_payees = policy::known_payees(mirror, change.as_slice());
    let prior = next.applied.as_ref().map(converge::prior_of);
    let words = (
        view::allocation_words(&current, mirror),
        view::allocation_words(&target, mirror),
        prior.map_or_else(
            || "nothing".to_owned(),
            |p| view::allocation_words(&p, mirror),
        ),
    );
    let change_words = view::change_words(&current, &target, mirror);
    Ok(Ok(Facts {
        budget,
        ynab_tx,
        target,
        current,
        change,
        known_payees,
        words,
        change_words,
    }))
}

async fn write(
    tx: &Transaction,
    ctx: &Context,
    facts: &Facts,
    expect: Expect,
    next: &mut TransactionStatus,
    version: &mut String,
) -> Result<(Verdict, Action), Error> {
    let budget = &facts.budget;
    if let Some(blocked) = converge::guard(&facts.ynab_tx, budget.spec.closed_through.as_deref()) {
        return Ok((
            Verdict::Blocked {
                reason: blocked.reason,
                message: blocked.message,
            },
            idle(),
        ));
    }
    let id = &tx.spec.transaction_id;
    if let Some(blocked) = split::unwritable(id, &facts.current, &facts.target) {
        return Ok((
            Verdict::Blocked {
                reason: blocked.reason,
                message: blocked.message,
            },
            idle(),
        ));
    }
    let change = &facts.change_words;
    // Only what differs is written and approved: a split already in place is not sent again.
    let writes = converge::still_to_write(&facts.current, &facts.target);
    let from = facts.current.restrict_to(&writes);
    if !budget.spec.writes.enabled {
        let message = format!(
            "Would write {change}; Budget {} has spec.writes.enabled: false",
            budget.name_any()
        );
        return Ok((Verdict::WouldWrite(message), idle()));
    }
    if budget.spec.suspend {
        return Ok((suspended(budget, change), idle()));
    }
    let now = Timestamp::now();
    let namespace = tx.namespace().unwrap_or_default();
    let scope = super::scope_of(&namespace, budget);
    let hash = converge::approval_hash(&scope, &facts.ynab_tx, &from, &writes);
    let ask = Ask {
        subject: tx,
        kind: SubjectKind::Transaction,
        budget,
        changes: facts.change.as_slice(),
        decision: policy::decide(
            facts.change.as_slice(),
            &budget.spec.approval,
            &facts.known_payees,
        ),
        hash: hash.clone(),
        summary: format!("{id}: {change}"),
    };
    let grant = match approval_gate::gate(ctx, ask, attempt_id(tx, now), now).await? {
        Gate::Proceed(grant) => grant,
        Gate::Wait(hold) => return Ok((gate::transaction_verdict(&hold), idle())),
    };
    let Some(destination) = ctx.destination(&namespace, budget) else {
        let message = format!("Waiting for the YNAB token of Budget {}", budget.name_any());
        return Ok((
            Verdict::Pending(message),
            Action::requeue(Duration::from_secs(60)),
        ));
    };
    grant.spend(ctx, now).await?;
    // The intent is durable before the write: a restart that finds it re-reads YNAB to settle it.
    next.intent = Some(WriteIntent {
        attempt_id: grant.attempt_id.clone(),
        target_hash: facts.target.hash(),
        from_hash: Some(facts.current.hash()),
        started_at: Time(now),
    });
    let mut writing = next.clone();
    transaction_status::apply(
        &mut writing,
        &Verdict::Writing(format!("Writing {change}")),
        tx.metadata.generation,
        now,
    );
    *version = status::apply_if_unchanged(&ctx.client, tx, &writing, version).await?;

    let item = WriteItem {
        transaction_id: id.clone(),
        target: writes,
        expect,
    };
    let submission = Submission {
        items: vec![item],
        all_or_nothing: false,
        authorized: Authorized::Transaction { scope, hash },
    };
    let outcome = match ctx
        .writer
        .submit((namespace, budget.name_any()), destination, submission)
        .await
    {
        Ok(mut outcomes) => outcomes.pop().expect("one outcome per item"),
        Err(e) => Outcome::NotLanded(e.to_string()),
    };
    if !matches!(outcome, Outcome::NotLanded(_) | Outcome::Skipped) {
        let written = outcome.holds_target();
        grant.complete(ctx, Timestamp::now(), written).await?;
        if written {
            next.decision = Some(grant.record);
        }
    }
    next.intent = None;
    let verdict = match outcome {
        Outcome::Written => {
            next.applied = Some(applied_state(&facts.target, Timestamp::now()));
            converged("Written", &format!("Wrote {change}"))
        }
        Outcome::AlreadyTarget | Outcome::NoChange => {
            next.applied = Some(applied_state(&facts.target, Timestamp::now()));
            converged(
                "Adopted",
                "YNAB already held the declared state: adopted without writing",
            )
        }
        Outcome::Diverged => Verdict::Diverged(format!(
            "YNAB changed {id} just before the write, so nothing was written: look at it in YNAB, then annotate {RESOLVE}=ours or theirs"
        )),
        Outcome::Missing => {
            Verdict::Invalid(plan::PlanError::UnknownTransaction(id.clone()).to_string())
        }
        Outcome::Blocked(b) => Verdict::Blocked {
            reason: b.reason,
            message: b.message,
        },
        Outcome::Mismatch => Verdict::Diverged(format!(
            "YNAB accepted the write of {id} but shows something else: check it in YNAB"
        )),
        Outcome::Refused(why) => {
            next.refused_generation = tx.metadata.generation;
            refused(format!(
                "YNAB refused the write of {change} ({why}); it is not sent again until the spec changes"
            ))
        }
        Outcome::Stale(why) => {
            return Ok((
                Verdict::Pending(why),
                Action::requeue(Duration::from_secs(1)),
            ));
        }
        Outcome::Skipped | Outcome::NotLanded(_) => {
            let why = if let Outcome::NotLanded(why) = outcome {
                why
            } else {
                "skipped".into()
            };
            let message =
                format!("The write of {change} did not land ({why}); ledgerops tries again");
            return Ok((
                Verdict::Interrupted(message),
                Action::requeue(Duration::from_secs(30)),
            ));
        }
    };
    Ok((verdict, idle()))
}

/// Nothing is written, nor asked for, while the Budget is suspended; unsuspending it wakes the
/// Transaction again.
fn suspended(budget: &Budget, change: &str) -> Verdict {
    Verdict::Blocked {
        reason: "Suspended",
        message: format!(
            "Would write {change}; Budget {} is suspended (spec.suspend: true), so nothing is written until it is set back to false",
            budget.name_any()
        ),
    }
}

fn attempt_id(tx: &Transaction, now: Timestamp) -> String {
    format!(
        "{}-{}",
        tx.meta().uid.as_deref().unwrap_or("local"),
        now.as_millisecond()
    )
}

fn refused(message: String) -> Verdict {
    Verdict::Blocked {
        reason: "RefusedByYnab",
        message,
    }
}

fn converged(reason: &'static str, message: &str) -> Verdict {
    Verdict::Converged {
        reason,
        message: message.to_owned(),
    }
}

/// Nothing to do until something changes: the spec, an approval, or the record in YNAB (a sync
/// announces it). The long requeue is a safety net.
fn idle() -> Action {
    Action::requeue(Duration::from_secs(600))
}

fn applied_state(state: &EndState, at: Timestamp) -> AppliedState {
    let (category_id, split) = match &state.allocation {
        Some(Allocation::Category(c)) => (Some(c.clone()), None),
        Some(Allocation::Split(lines)) => {
            let lines = lines
                .iter()
                .map(|l| SplitLine {
                    amount: Amount(money::to_decimal(l.amount, 3)),
                    category_id: l.category_id.clone(),
                    memo: l.memo.clone(),
                })
                .collect();
            (None, Some(lines))
        }
        Some(Allocation::Uncategorized) | None => (None, None),
    };
    AppliedState {
        hash: state.hash(),
        category_id,
        split,
        memo: state.memo.clone(),
        approved: state.approved,
        flag_color: state.flag,
        at: Time(at),
    }
}
