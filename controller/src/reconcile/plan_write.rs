//! One write of a plan's approved preview, and the record of how it ended: the journal's
//! completion and the plan's status.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::approval_gate::Grant;
use super::{Context, Error, lineage};
use crate::api::plan::{CategorizationPlan, CategorizationPlanStatus, Progress};
use crate::k8s::{journal, status};
use crate::logic::approval::edited;
use crate::logic::plan::AppliedChange;
use crate::logic::plan::Approved;
use crate::logic::plan::end::{self, End};
use crate::logic::plan::operation::{self, Conclusion};
use crate::logic::plan::outcome::{self, WriteResult};
use crate::logic::plan::status::{self as plan_status, PlanVerdict};
use crate::logic::plan::step::{self, Step};
use crate::logic::plan::{PlanPreview, rest};
use crate::logic::runtime::request_priority::WriteDecision;
use crate::logic::transaction::batch::{Authorized, Submission};
use crate::metrics::Stopwatch;
use crate::ynab::batcher::{self, Destination};
use crate::ynab::budget_links::BudgetKey;

/// One write of a plan's approved preview: every chunk journaled, then all written back to back.
pub struct Operation<'a> {
    pub plan: &'a CategorizationPlan,
    pub namespace: &'a str,
    pub budget: &'a str,
    pub grant: &'a Grant,
    pub started_at: &'a Time,
    pub destination: Destination,
}

impl Operation<'_> {
    /// Writes `changes` in chunks of the Budget's `maxBatchSize`. Every chunk is journaled
    /// before the first goes out, so that they go out back to back after one fresh read of
    /// YNAB, not one read each: the window in which a person's edit can land between the read
    /// and the writes stays that of one batch. Every answer is read, so what landed is counted
    /// even after a chunk that did not.
    pub async fn write(
        &self,
        ctx: &Context,
        changes: &[AppliedChange],
        approved: Approved,
        next: &mut CategorizationPlanStatus,
        version: &mut String,
        watch: &mut Stopwatch,
    ) -> Result<Conclusion, Error> {
        let chunks: Vec<&[AppliedChange]> =
            changes.chunks(self.destination.max_batch.max(1)).collect();
        let count = u32::try_from(chunks.len()).unwrap_or(u32::MAX);
        let total = u32::try_from(changes.len()).unwrap_or(u32::MAX);
        next.progress = Some(Progress {
            written: 0,
            total,
            chunks_done: 0,
            chunks: count,
        });
        let mut applying = next.clone();
        plan_status::apply(
            &mut applying,
            &PlanVerdict::Applying { interrupted: None },
            self.plan.metadata.generation,
            Timestamp::now(),
        );
        *version = status::apply_if_unchanged(&ctx.client, self.plan, &applying, version).await?;
        for (i, chunk) in chunks.iter().enumerate() {
            let entry = journal::Entry {
                operation_id: self.grant.attempt_id.clone(),
                plan: self.plan.name_any(),
                budget: self.budget.to_owned(),
                chunk: u32::try_from(i).unwrap_or(u32::MAX),
                chunks: count,
                started_at: self.started_at.0.to_string(),
                changes: chunk.to_vec(),
                decision: Some(self.grant.record.clone()),
            };
            journal::record(&ctx.client, self.namespace, &entry).await?;
        }
        watch.lap("record");
        let decided_by = self.grant.decided_by();
        let priority = lineage::write_priority(ctx, decided_by, &self.plan.metadata);
        let respect = (decided_by == WriteDecision::Policy).then(|| edited::key_of(self.plan));
        let submissions = chunks
            .iter()
            .map(|chunk| Submission {
                items: chunk.iter().map(operation::write_item).collect(),
                all_or_nothing: true,
                authorized: Authorized::Plan(approved.clone()),
                operation: Some(self.grant.attempt_id.clone()),
                priority,
                respect: respect.clone(),
            })
            .collect();
        let key = BudgetKey::new(self.namespace, self.budget);
        let answers = ctx
            .batcher
            .submit_all(&key, &self.destination, submissions)
            .await;
        watch.lap("ynab");
        let mut written = 0usize;
        let mut stop = None;
        for (chunk, answer) in chunks.iter().zip(answers) {
            let outcomes = answer.unwrap_or_else(|e| vec![batcher::unanswered(&e); chunk.len()]);
            written += outcomes.iter().filter(|o| o.holds_target()).count();
            let ids: Vec<String> = chunk.iter().map(|c| c.transaction_id.clone()).collect();
            match outcome::summarize(&ids, &outcomes) {
                WriteResult::Landed => {}
                result => {
                    stop.get_or_insert(result);
                }
            }
        }
        next.progress = Some(Progress {
            written: u32::try_from(written).unwrap_or(u32::MAX),
            total,
            chunks_done: count,
            chunks: count,
        });
        Ok(operation::conclude(written, changes.len(), stop.as_ref()))
    }
}

/// Records in `next` that the write under `grant` starts, decided at `knowledge` (its intent,
/// which a restart resumes or settles), and that this process started it.
pub fn start(
    ctx: &Context,
    next: &mut CategorizationPlanStatus,
    grant: &Grant,
    (started_at, knowledge): (&Time, i64),
) {
    let request = grant.record.request.as_ref();
    step::start(
        next,
        (&grant.attempt_id, started_at, knowledge),
        grant.written_hash(),
        request,
    );
    ctx.attempts_here.started(&grant.attempt_id);
}

/// Records how an operation ended: the journal's completion and the plan's status. Returns how
/// many of its changes YNAB holds.
pub async fn finish(
    ctx: &Context,
    plan: &CategorizationPlan,
    namespace: &str,
    budget: &str,
    end: &End<'_>,
    next: &mut CategorizationPlanStatus,
) -> Result<u32, Error> {
    let tally = {
        let slot = ctx.budget_links.mirror(namespace, budget);
        let slot = slot.state.read().await;
        end::tally(end, &slot.mirror)
    };
    let completion = journal::Completion {
        operation_id: end.operation_id.to_owned(),
        plan: plan.name_any(),
        budget: budget.to_owned(),
        completed_at: end.at.to_string(),
        outcome: end.conclusion.outcome().to_owned(),
        written: tally.written,
        total: tally.total,
        not_written: tally.not_written.clone(),
        reason: end.conclusion.reason().map(str::to_owned),
    };
    journal::complete(&ctx.client, namespace, &completion).await?;
    end::record_end(next, end, &tally, plan.metadata.generation);
    Ok(tally.written)
}

/// Writes the changes of `preview` as `operation`, under the approval `approved`, and once the
/// operation is over records how it ended: the journal's completion, and the approval used up.
/// `left_alone` are changes of the approved write that someone moved since and that are not
/// written (the rest of a cut-off write, see [`super::plan_cut_off`]): counted as not written.
#[allow(clippy::too_many_arguments)]
pub(super) async fn apply(
    ctx: &Context,
    operation: &Operation<'_>,
    preview: &PlanPreview,
    approved: Approved,
    left_alone: &[AppliedChange],
    next: &mut CategorizationPlanStatus,
    version: &mut String,
    watch: &mut Stopwatch,
) -> Result<Step, Error> {
    let Operation {
        plan,
        namespace,
        budget: budget_name,
        grant,
        ..
    } = *operation;
    let changes: Vec<AppliedChange> = preview
        .changes
        .iter()
        .map(|c| AppliedChange::from(&c.change))
        .collect();
    let conclusion = operation
        .write(ctx, &changes, approved, next, version, watch)
        .await?;
    let (conclusion, changes) = if left_alone.is_empty() {
        (conclusion, changes)
    } else {
        let ids: BTreeSet<String> = left_alone
            .iter()
            .map(|c| c.transaction_id.clone())
            .collect();
        let all = changes
            .into_iter()
            .chain(left_alone.iter().cloned())
            .collect();
        (rest::conclude(conclusion, &ids), all)
    };
    let applied = step::applied_message(&plan.name_any(), &grant.attempt_id);
    let concluded = conclusion.verdict(applied, Timestamp::now());
    if conclusion.is_final() {
        let done = Timestamp::now();
        let end = End {
            operation_id: &grant.attempt_id,
            decision: Some(&grant.record),
            changes: &changes,
            written: next.progress.as_ref().map_or(0, |p| p.written),
            conclusion: &conclusion,
            at: done,
        };
        let written = finish(ctx, plan, namespace, budget_name, &end, next).await?;
        grant.complete(ctx, done, written > 0).await?;
        ctx.attempts_here.finished(&grant.attempt_id);
        watch.lap("finish");
    }
    Ok(concluded)
}
