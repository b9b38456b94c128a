//! What a person is alerted on, per Budget, from the cached objects at one instant: the
//! ApprovalRequests waiting for a decision and the oldest one's age, those that expired
//! unanswered and were not asked again, when the Budget last synced, whether it is Ready or
//! suspended, whether its autopilot's breaker stopped it today, and how much of its token's
//! hourly request budget is used. One row per Budget in the cache, so a deleted Budget leaves
//! no series behind, and the labels stay bounded by the number of Budgets.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::api::approval::{ApprovalPhase, ApprovalRequest};
use crate::api::budget::Budget;
use crate::logic::approval::inbox;
use crate::logic::job::report::is_waiting;
use crate::logic::status::conditions;

/// Requests made with a Budget's token in the last rolling hour, and its limit per hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestUse {
    pub used: u32,
    pub limit: u32,
}

impl RequestUse {
    /// The share of the hourly budget used, 0 to 1 (1 for a zero limit: nothing more may go).
    pub fn ratio(self) -> f64 {
        if self.limit == 0 {
            return 1.0;
        }
        f64::from(self.used) / f64::from(self.limit)
    }
}

/// The gauges of one Budget.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetGauges {
    pub namespace: String,
    pub budget: String,
    /// Its `Ready` condition is True.
    pub ready: bool,
    pub suspended: bool,
    /// Its autopilot is on and the breaker stopped it for today (UTC).
    pub autopilot_stopped: bool,
    /// ApprovalRequests that ledgerops issued and a person can still decide.
    pub waiting: u32,
    /// How long the oldest of them has waited, in seconds; 0 when none waits.
    pub oldest_waiting_seconds: f64,
    /// Subjects whose newest request ledgerops issued expired without a decision: nothing of
    /// them was written, and nobody has asked again since.
    pub expired_unanswered: u32,
    /// When the mirror last caught up with YNAB (Unix seconds); None before the first sync.
    pub last_sync_seconds: Option<i64>,
    /// None until the Budget has synced through a token in this process.
    pub requests: Option<RequestUse>,
}

/// The gauges of every Budget in `budgets` at `now`. `requests` is each Budget's request use by
/// (namespace, name); requests naming a Budget not in `budgets` are not counted anywhere.
pub fn budget_gauges<'a>(
    budgets: impl IntoIterator<Item = &'a Budget>,
    requests: impl IntoIterator<Item = &'a ApprovalRequest>,
    request_use: &BTreeMap<(String, String), RequestUse>,
    now: Timestamp,
) -> Vec<BudgetGauges> {
    let today = now.strftime("%Y-%m-%d").to_string();
    let mut rows: BTreeMap<(String, String), BudgetGauges> = budgets
        .into_iter()
        .map(|b| {
            let key = (b.namespace().unwrap_or_default(), b.name_any());
            let status = b.status.clone().unwrap_or_default();
            let ready = conditions::get(&status.conditions, conditions::READY)
                .is_some_and(|c| c.status == "True");
            let autopilot_stopped = b.spec.autopilot.enabled
                && status
                    .autopilot
                    .as_ref()
                    .is_some_and(|a| a.day == today && a.tripped.is_some());
            let row = BudgetGauges {
                namespace: key.0.clone(),
                budget: key.1.clone(),
                ready,
                suspended: b.spec.suspend,
                autopilot_stopped,
                waiting: 0,
                oldest_waiting_seconds: 0.0,
                expired_unanswered: 0,
                last_sync_seconds: status.last_sync_time.as_ref().map(|t| t.0.as_second()),
                requests: request_use.get(&key).copied(),
            };
            (key, row)
        })
        .collect();
    let requests: Vec<&ApprovalRequest> = requests.into_iter().collect();
    let subjects: BTreeSet<&str> = requests
        .iter()
        .filter_map(|r| inbox::subject_uid(r))
        .collect();
    for subject in subjects {
        let Some(r) = inbox::newest(requests.iter().copied(), subject) else {
            continue;
        };
        let key = (
            r.namespace().unwrap_or_default(),
            r.spec.budget_ref.name.clone(),
        );
        if expired_unanswered(r, now)
            && let Some(row) = rows.get_mut(&key)
        {
            row.expired_unanswered += 1;
        }
    }
    for r in requests {
        if !waits(r, now) {
            continue;
        }
        let key = (
            r.namespace().unwrap_or_default(),
            r.spec.budget_ref.name.clone(),
        );
        let Some(row) = rows.get_mut(&key) else {
            continue;
        };
        row.waiting += 1;
        let since = r.metadata.creation_timestamp.as_ref().map_or(now, |t| t.0);
        // A clock behind the API server's gives a negative age: it has waited no time yet.
        let age = now.duration_since(since).as_secs_f64().max(0.0);
        row.oldest_waiting_seconds = row.oldest_waiting_seconds.max(age);
    }
    rows.into_values().collect()
}

/// Whether a person can still decide `r` at `now`: ledgerops issued it (a request anyone else
/// made authorizes nothing, so it is nobody's to answer), undecided, Pending and not expired.
fn waits(r: &ApprovalRequest, now: Timestamp) -> bool {
    is_waiting(r)
        && r.spec.expires_at.0 > now
        && r.status.as_ref().is_some_and(|s| s.issued_for.is_some())
}

/// Whether `r`, issued by ledgerops, ran out of time without a decision: marked Expired, or
/// still Pending past its expiry.
fn expired_unanswered(r: &ApprovalRequest, now: Timestamp) -> bool {
    let phase = r.status.as_ref().and_then(|s| s.phase);
    r.spec.decision.is_none()
        && r.status.as_ref().is_some_and(|s| s.issued_for.is_some())
        && match phase {
            Some(ApprovalPhase::Expired) => true,
            None | Some(ApprovalPhase::Pending) => r.spec.expires_at.0 <= now,
            _ => false,
        }
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
