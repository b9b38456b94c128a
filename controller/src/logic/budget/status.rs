//! A Budget's status after a sync attempt, and the Event worth publishing about it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use crate::api::budget::{BudgetPhase, BudgetStatus, RequestUse};
use crate::logic::budget::mirror::Mirror;
use crate::logic::budget::sync_due;
use crate::logic::plan::category_name;
use crate::logic::runtime::pacing::Limits;
use crate::logic::status::conditions::{self, Observed, READY};
use crate::logic::status::kstatus;
use crate::logic::values::outside_text;

pub const RATE_LIMITED: &str = "RateLimited";
/// Ready's reason while a Budget's first sync of a generation waits for its turn.
pub const PACED: &str = "Paced";
/// The longest failure message a Budget's status carries.
const MAX_MESSAGE: usize = 1000;

/// How a sync attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// The mirror caught up with YNAB.
    Synced,
    /// `spec.suspend` is set: nothing was asked of YNAB.
    Suspended,
    /// It failed; `reason` is one of Unauthorized, NotFound, RateLimited, Unreachable,
    /// TokenMissing, TokenNotOptedIn, TokenNotGranted, ApiUrlNotAllowed, InvalidSpec,
    /// RequestFailed.
    Failed {
        reason: &'static str,
        message: String,
    },
    /// It waits for its turn in the token's hour (see `logic::runtime::pacing`): a mirror that
    /// synced for this generation stays Ready meanwhile.
    Paced { message: String },
}

/// Everything the status is computed from.
pub struct SyncReport<'a> {
    pub outcome: SyncOutcome,
    pub generation: Option<i64>,
    /// The mirror as it stands (it survives a failed sync).
    pub mirror: Option<&'a Mirror>,
    pub requests: RequestUse,
    pub now: Timestamp,
}

pub use crate::logic::status::announce::Announcement;

/// Why a paced sync waits, for the Budget's status: when it goes out by itself, why, and
/// what a person may do.
pub fn sync_paced(until: Timestamp, limits: Limits) -> String {
    format!(
        "the sync waits until {until} for its turn: periodic syncs are spread across the hour, and {} of the token's {} requests per hour are kept for approved writes and asked syncs; kubectl ledgerops sync asks for one now",
        limits.reserved(),
        limits.per_hour,
    )
}

/// The note of the Event saying that a sync asked for by annotation waits: the same text every
/// time, so that an editor annotating in a loop adds to one Event's count.
pub fn asked_too_often(requests_per_hour: u32) -> String {
    let minutes = sync_due::ASKED_WINDOW.as_secs() / 60;
    format!(
        "{} syncs were asked for in the last {minutes} minutes, the most that run: the one asked now runs once the oldest of them is {minutes} minutes old. Each costs one of the token's {requests_per_hour} requests per hour",
        sync_due::ASKED_BURST,
    )
}

/// The status to write after a sync attempt.
pub fn next(previous: &BudgetStatus, report: &SyncReport<'_>) -> BudgetStatus {
    let (phase, ready) = match &report.outcome {
        SyncOutcome::Paced { message } => match still_ready(previous, report.generation) {
            Some(ready) => (
                BudgetPhase::Ready,
                Observed::new(READY, true, ready.reason.clone(), ready.message.clone()),
            ),
            None => (
                BudgetPhase::RateLimited,
                Observed::new(READY, false, PACED, message.clone()),
            ),
        },

        SyncOutcome::Synced => {
            let m = report.mirror.expect("a synced budget has a mirror");
            let message = format!(
                "Mirror is current at server knowledge {}: {} transactions, {} categories, {} accounts",
                m.server_knowledge,
                m.transactions.len(),
                m.categories.len(),
                m.accounts.len()
            );
            (
                BudgetPhase::Ready,
                Observed::new(READY, true, "Synced", message),
            )
        }
        SyncOutcome::Suspended => (
            BudgetPhase::Suspended,
            Observed::new(
                READY,
                false,
                "Suspended",
                "spec.suspend is true: nothing is read from or written to YNAB; set it to false to resume",
            ),
        ),
        // Errors summarise what they quote already; this keeps any message one short line.
        SyncOutcome::Failed { reason, message } => (
            phase_of(reason),
            Observed::new(
                READY,
                false,
                *reason,
                outside_text::sanitize(message, MAX_MESSAGE),
            ),
        ),
    };
    let health = kstatus::budget(&ready.reason);
    let mut conditions =
        conditions::set(&previous.conditions, ready, report.generation, report.now);
    conditions = match report.requests.rate_limited_until.as_ref() {
        Some(until) => {
            let message = format!("YNAB answered 429: no request before {}", until.0);
            conditions::set(
                &conditions,
                Observed::new(RATE_LIMITED, true, "TooManyRequests", message),
                report.generation,
                report.now,
            )
        }
        None => conditions::remove(&conditions, RATE_LIMITED),
    };
    let conditions =
        kstatus::summarize(&conditions, "Budget", health, report.generation, report.now);
    let synced = report.outcome == SyncOutcome::Synced;
    BudgetStatus {
        observed_generation: report.generation,
        conditions,
        phase: Some(phase),
        plan_name: report
            .mirror
            .map(|m| m.plan_name.clone())
            .filter(|n| !n.is_empty())
            .or_else(|| previous.plan_name.clone()),
        currency: report
            .mirror
            .and_then(|m| m.currency.clone())
            .or_else(|| previous.currency.clone()),
        last_sync_time: if synced {
            Some(Time(report.now))
        } else {
            previous.last_sync_time.clone()
        },
        server_knowledge: report
            .mirror
            .map(|m| m.server_knowledge)
            .filter(|k| *k > 0)
            .or(previous.server_knowledge),
        counts: report
            .mirror
            .map(Mirror::counts)
            .or_else(|| previous.counts.clone()),
        requests: Some(report.requests.clone()),
        // The autopilot's own part, written under its own field manager: never written here, so
        // a sync's status cannot drop what the autopilot counted.
        autopilot: None,
        categories: report
            .mirror
            .map(category_name::assignable)
            .unwrap_or_else(|| previous.categories.clone()),
        controller_version: Some(VERSION.to_owned()),
    }
}

/// This controller's version, as its status says it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Event for a change of phase, or `None` when the phase held.
pub fn announcement(previous: &BudgetStatus, next: &BudgetStatus) -> Option<Announcement> {
    if previous.phase == next.phase {
        return None;
    }
    let ready = conditions::get(&next.conditions, READY)?;
    Some(Announcement {
        // Waiting for its turn in the hour needs nobody.
        warning: ready.status != "True" && ready.reason != PACED,
        reason: ready.reason.clone(),
        note: ready.message.clone(),
    })
}

/// The last status's Ready condition, if it is True for `generation`: the mirror it describes
/// still stands while the next sync waits.
fn still_ready(previous: &BudgetStatus, generation: Option<i64>) -> Option<&Condition> {
    let ready = conditions::get(&previous.conditions, READY)?;
    (previous.phase == Some(BudgetPhase::Ready)
        && previous.observed_generation == generation
        && ready.status == "True")
        .then_some(ready)
}

fn phase_of(reason: &str) -> BudgetPhase {
    match reason {
        "Unauthorized" | "TokenMissing" | "TokenNotOptedIn" | "TokenNotGranted"
        | "ApiUrlNotAllowed" => BudgetPhase::Unauthorized,
        "NotFound" => BudgetPhase::NotFound,
        "RateLimited" => BudgetPhase::RateLimited,
        _ => BudgetPhase::Unreachable,
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
