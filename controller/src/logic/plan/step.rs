//! What a plan's reconcile does next, decided from what it read: a plan whose write is over, a
//! preview with nothing to do or already rejected, a hold at the approval gate, a Budget that
//! does not let the approved write out, and the intent recorded before it goes out.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::edit::EditError;
use super::{AppliedChange, PlanPreview, PlannedChange};
use crate::api::budget::BudgetSpec;
use crate::api::common::{DecisionRecord, WriteIntent};
use crate::api::plan::{CategorizationPlanStatus, PlanPhase};
use crate::logic::approval::gate::{self, Hold};
use crate::logic::plan::status::{self as plan_status, PlanVerdict};
use crate::logic::status::conditions;
use crate::logic::values::money;

/// A reconcile's verdict on a plan, and when to look again: `None` once something changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub verdict: PlanVerdict,
    pub wait: Option<Duration>,
}

impl Step {
    /// Nothing moves the plan on until the spec, an approval or YNAB changes.
    pub fn on_change(verdict: PlanVerdict) -> Self {
        Self {
            verdict,
            wait: None,
        }
    }

    /// Something the preview needs is not there yet, or not right (the Budget, its sync, the
    /// spec): look again in a minute.
    pub fn not_ready(verdict: PlanVerdict) -> Self {
        Self::after(verdict, Duration::from_secs(60))
    }

    pub fn after(verdict: PlanVerdict, wait: Duration) -> Self {
        Self {
            verdict,
            wait: Some(wait),
        }
    }
}

/// What plan `plan` still shows once its write is over for this `generation` of the spec;
/// `None` while it is not.
pub fn settled(
    plan: &str,
    status: &CategorizationPlanStatus,
    generation: Option<i64>,
) -> Option<Step> {
    if !plan_status::settled(status, generation) {
        return None;
    }
    let said = || {
        conditions::get(&status.conditions, conditions::READY)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    };
    let verdict = match status.phase {
        Some(PlanPhase::PartiallyApplied) => PlanVerdict::PartiallyApplied(said()),
        Some(PlanPhase::Failed) => PlanVerdict::Failed(said()),
        _ => {
            let operation = status.operation_id.as_deref().unwrap_or_default();
            PlanVerdict::Applied(applied_message(plan, operation))
        }
    };
    Some(Step::on_change(verdict))
}

/// What is known of a write a restart cut off: its id, when it started, the preview it was
/// approved on and the changes its journal recorded before they went out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub attempt_id: String,
    pub started_at: Time,
    pub hash: String,
    pub changes: Vec<AppliedChange>,
    /// Who decided the write, as its journal recorded.
    pub decision: Option<DecisionRecord>,
    /// Its transactions that a later operation moved on from this write's target
    /// ([`moved_since`]): the write had landed there.
    pub moved_since: BTreeSet<String>,
    /// The YNAB knowledge the write was decided on, if its intent recorded one.
    pub knowledge: Option<i64>,
    /// Its transactions YNAB changed since that knowledge to something other than the write's
    /// target ([`operation::moved_elsewhere`]): never written again under its approval.
    ///
    /// [`operation::moved_elsewhere`]: super::operation::moved_elsewhere
    pub elsewhere: BTreeSet<String>,
}

/// One operation as the journal recorded it: its id, when it started and its changes.
pub type Journaled<'a> = (&'a str, &'a str, &'a [AppliedChange]);

/// The transactions of the cut-off write `ours` that a later operation of `others` started from
/// this write's target: the write had landed on them, so one that shows the write's "from"
/// again was moved back since (an A→B→A), not missed. Resending would write over that later
/// decision. A start that does not parse counts as later: nothing is resent on a doubt.
pub fn moved_since<'a>(
    ours: Journaled<'_>,
    others: impl IntoIterator<Item = Journaled<'a>>,
) -> BTreeSet<String> {
    let (id, started_at, changes) = ours;
    let start = started_at.parse::<Timestamp>().ok();
    let later = |at: &str| match (start, at.parse::<Timestamp>().ok()) {
        (Some(ours), Some(theirs)) => theirs >= ours,
        _ => true,
    };
    let mut moved = BTreeSet::new();
    for (other, at, theirs) in others {
        if other == id || !later(at) {
            continue;
        }
        for change in theirs {
            let landed_there = changes.iter().any(|c| {
                c.transaction_id == change.transaction_id
                    && c.from_category_id != c.to_category_id
                    && change.from_category_id == c.to_category_id
            });
            if landed_there {
                moved.insert(change.transaction_id.clone());
            }
        }
    }
    moved
}

/// Splits a cut-off write by the preview `hash` now: it goes on under its own id (the first)
/// only if its preview still holds; one that does not (the second) is settled by what landed
/// before anything else is decided.
pub fn resumes(resume: Option<Resume>, hash: &str) -> (Option<Resume>, Option<Resume>) {
    match resume {
        // A preview read after a later operation moved its transactions back looks the same,
        // but it is not: settled by what landed, never sent again.
        Some(r) if r.hash == hash && r.moved_since.is_empty() && r.elsewhere.is_empty() => {
            (Some(r), None)
        }
        other => (None, other),
    }
}

/// Records `preview` in the status, and what stops the plan before anyone is asked: nothing to
/// do, or a person's rejection of this very preview, which stands even if its request was
/// deleted since.
pub fn previewed(status: &mut CategorizationPlanStatus, preview: &PlanPreview) -> Option<Step> {
    // A write resumed on this very preview keeps its intent until its outcome is known: a
    // reconcile that stops before it goes out again (the gate waits, the Budget holds writes
    // back) must not forget a write that may have landed.
    let resumed = status
        .intent
        .as_ref()
        .is_some_and(|i| i.target_hash == preview.hash);
    if !resumed {
        status.intent = None;
        status.progress = None;
    }
    status.preview = Some(preview.clone().into());
    if preview.nothing_to_do() {
        return Some(Step::on_change(PlanVerdict::NothingToDo));
    }
    plan_status::standing_rejection(status.decision.as_ref(), &preview.hash).map(Step::on_change)
}

/// The id, start and YNAB knowledge of the write of subject `uid` at `now`, previewed at
/// `knowledge`: a resumed write keeps its own.
pub fn attempt(
    resumed: Option<&Resume>,
    uid: &str,
    now: Timestamp,
    knowledge: i64,
) -> (String, Time, i64) {
    match resumed {
        Some(r) => (
            r.attempt_id.clone(),
            r.started_at.clone(),
            r.knowledge.unwrap_or(knowledge),
        ),
        None => (gate::attempt_id(uid, now), Time(now), knowledge),
    }
}

/// The summary of the ApprovalRequest that asks for `changes`.
pub fn summary(changes: &[PlannedChange]) -> String {
    // Saturating: a sum of 5,000 amounts must not wrap or panic; the summary is only words.
    let total: i64 = changes
        .iter()
        .filter_map(|c| money::parse_decimal(&c.change.amount.0).ok())
        .fold(0i64, |sum, amount| {
            sum.saturating_add(amount.saturating_abs())
        });
    format!(
        "{} transactions to recategorise, {} in total",
        changes.len(),
        money::to_decimal(total, 2)
    )
}

/// The plan held back by the gate, with the request it waits on (or that refused it) and a
/// person's rejection kept in the status.
pub fn held(status: &mut CategorizationPlanStatus, hold: &Hold) -> Step {
    status.approval_request = hold.request().map(str::to_owned);
    if let Some(rejection) = hold.rejection() {
        status.decision = Some(rejection);
    }
    Step::after(gate::plan_verdict(hold), Duration::from_secs(600))
}

/// Approved, but the Budget `budget` lets nothing out: writes are disabled, or it is suspended.
pub fn held_back(budget: &str, spec: &BudgetSpec) -> Option<Step> {
    if !spec.writes.enabled {
        return Some(Step::on_change(PlanVerdict::ReadOnly(format!(
            "Approved, but Budget {budget} has spec.writes.enabled: false, so nothing is written: enable writes on the Budget to apply it"
        ))));
    }
    spec.suspend.then(|| {
        Step::after(
            PlanVerdict::Pending(format!(
                "Approved, but Budget {budget} is suspended (spec.suspend: true): nothing is written until it is resumed"
            )),
            Duration::from_secs(60),
        )
    })
}

/// Approved, but there is nowhere to write yet: the Budget has not synced with its token.
pub fn no_destination(budget: &str) -> Step {
    Step::after(
        PlanVerdict::Pending(format!("Waiting for Budget {budget} to sync with YNAB")),
        Duration::from_secs(30),
    )
}

/// An approval whose edits cannot be applied (`why`): nothing is written under it, and the plan
/// waits until its spec changes and a new request asks again.
pub fn edits_refused(
    status: &mut CategorizationPlanStatus,
    request: Option<&String>,
    why: &EditError,
) -> Step {
    status.approval_request = request.cloned();
    let request = request.map_or_else(String::new, |r| format!(" of ApprovalRequest {r}"));
    Step::on_change(PlanVerdict::Blocked {
        phase: PlanPhase::Blocked,
        reason: "EditsRefused",
        message: format!(
            "The approval{request} carries edits that cannot be applied: {why}. Nothing was written; change the plan's spec to ask again."
        ),
    })
}

/// Records the write `attempt_id` of the preview `hash`, approved through `request`, started at
/// `started_at` and decided on YNAB's `knowledge`, before it goes out: a restart that finds the
/// intent resumes or settles it.
pub fn start(
    status: &mut CategorizationPlanStatus,
    (attempt_id, started_at, knowledge): (&str, &Time, i64),
    hash: &str,
    request: Option<&String>,
) {
    status.approval_request = request.cloned();
    status.intent = Some(WriteIntent {
        attempt_id: attempt_id.to_owned(),
        target_hash: hash.to_owned(),
        from_hash: None,
        knowledge: Some(knowledge),
        started_at: started_at.clone(),
    });
}

/// What an applied plan `plan` says: the operation, and how to revert it.
pub fn applied_message(plan: &str, operation: &str) -> String {
    format!(
        "Applied as operation {operation}; to revert it, apply a CategorizationPlan with spec.undoOf: {plan}"
    )
}

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
