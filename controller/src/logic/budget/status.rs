//! A Budget's status after a sync attempt, and the Event worth publishing about it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::api::budget::{BudgetPhase, BudgetStatus, RequestUse};
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::category_name;
use crate::logic::status::conditions::{self, Observed, READY};
use crate::logic::status::kstatus;
use crate::logic::values::outside_text;

pub const RATE_LIMITED: &str = "RateLimited";
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
    /// TokenMissing, TokenNotOptedIn, ApiUrlNotAllowed, InvalidSpec, RequestFailed.
    Failed {
        reason: &'static str,
        message: String,
    },
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

/// The status to write after a sync attempt.
pub fn next(previous: &BudgetStatus, report: &SyncReport<'_>) -> BudgetStatus {
    let (phase, ready) = match &report.outcome {
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
    let conditions = kstatus::summarize(&conditions, health, report.generation, report.now);
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
    }
}

/// The Event for a change of phase, or `None` when the phase held.
pub fn announcement(previous: &BudgetStatus, next: &BudgetStatus) -> Option<Announcement> {
    if previous.phase == next.phase {
        return None;
    }
    let ready = conditions::get(&next.conditions, READY)?;
    Some(Announcement {
        warning: ready.status != "True",
        reason: ready.reason.clone(),
        note: ready.message.clone(),
    })
}

fn phase_of(reason: &str) -> BudgetPhase {
    match reason {
        "Unauthorized" | "TokenMissing" | "TokenNotOptedIn" | "ApiUrlNotAllowed" => {
            BudgetPhase::Unauthorized
        }
        "NotFound" => BudgetPhase::NotFound,
        "RateLimited" => BudgetPhase::RateLimited,
        _ => BudgetPhase::Unreachable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_790_000_000 + secs).unwrap()
    }

    fn requests(used: u32, until: Option<Timestamp>) -> RequestUse {
        RequestUse {
            used_last_hour: used,
            limit_per_hour: 180,
            rate_limited_until: until.map(Time),
        }
    }

    fn mirror() -> Mirror {
        Mirror {
            server_knowledge: 42,
            plan_name: "Household".into(),
            ..Mirror::default()
        }
    }

    #[test]
    fn a_sync_makes_it_ready_and_announces_it_once() {
        let m = mirror();
        let report = SyncReport {
            outcome: SyncOutcome::Synced,
            generation: Some(3),
            mirror: Some(&m),
            requests: requests(1, None),
            now: at(0),
        };
        let first = next(&BudgetStatus::default(), &report);
        assert_eq!(first.phase, Some(BudgetPhase::Ready));
        assert_eq!(first.server_knowledge, Some(42));
        assert_eq!(first.last_sync_time, Some(Time(at(0))));
        assert_eq!(first.observed_generation, Some(3));
        let ready = conditions::get(&first.conditions, READY).unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "Synced")
        );
        assert!(ready.message.contains("server knowledge 42"));
        let note = announcement(&BudgetStatus::default(), &first).unwrap();
        assert!(!note.warning);
        let again = next(
            &first,
            &SyncReport {
                now: at(300),
                ..report
            },
        );
        assert_eq!(announcement(&first, &again), None);
        assert_eq!(again.last_sync_time, Some(Time(at(300))));
    }

    #[test]
    fn a_failure_keeps_what_was_known_and_warns() {
        let m = mirror();
        let ok = next(
            &BudgetStatus::default(),
            &SyncReport {
                outcome: SyncOutcome::Synced,
                generation: Some(1),
                mirror: Some(&m),
                requests: requests(1, None),
                now: at(0),
            },
        );
        let outcome = SyncOutcome::Failed {
            reason: "Unauthorized",
            message: "YNAB refused the token".into(),
        };
        let failed = next(
            &ok,
            &SyncReport {
                outcome,
                generation: Some(1),
                mirror: None,
                requests: requests(2, None),
                now: at(60),
            },
        );
        assert_eq!(failed.phase, Some(BudgetPhase::Unauthorized));
        assert_eq!(failed.last_sync_time, Some(Time(at(0))));
        assert_eq!(failed.server_knowledge, Some(42));
        assert_eq!(failed.plan_name.as_deref(), Some("Household"));
        let note = announcement(&ok, &failed).unwrap();
        assert!(note.warning);
        assert_eq!(note.reason, "Unauthorized");
    }

    #[test]
    fn a_failure_message_is_one_short_line() {
        let cases = [
            ("HTTP 500".to_owned(), "HTTP 500".to_owned()),
            ("a\nb\u{1b}[2Jc".to_owned(), "ab[2Jc".to_owned()),
            (
                "x".repeat(MAX_MESSAGE + 100),
                format!("{}…", "x".repeat(MAX_MESSAGE - 1)),
            ),
        ];
        for (message, shown) in cases {
            let outcome = SyncOutcome::Failed {
                reason: "Unreachable",
                message,
            };
            let status = next(
                &BudgetStatus::default(),
                &SyncReport {
                    outcome,
                    generation: Some(1),
                    mirror: None,
                    requests: requests(0, None),
                    now: at(0),
                },
            );
            let ready = conditions::get(&status.conditions, READY).unwrap();
            assert_eq!(ready.message, shown);
        }
    }

    #[test]
    fn rate_limiting_is_a_condition_of_its_own() {
        let outcome = SyncOutcome::Failed {
            reason: "RateLimited",
            message: "waiting".into(),
        };
        let limited = next(
            &BudgetStatus::default(),
            &SyncReport {
                outcome,
                generation: Some(1),
                mirror: None,
                requests: requests(200, Some(at(60))),
                now: at(0),
            },
        );
        assert_eq!(limited.phase, Some(BudgetPhase::RateLimited));
        assert_eq!(
            conditions::get(&limited.conditions, RATE_LIMITED)
                .unwrap()
                .status,
            "True"
        );
        let m = mirror();
        let recovered = next(
            &limited,
            &SyncReport {
                outcome: SyncOutcome::Synced,
                generation: Some(1),
                mirror: Some(&m),
                requests: requests(1, None),
                now: at(90),
            },
        );
        assert!(conditions::get(&recovered.conditions, RATE_LIMITED).is_none());
    }

    #[test]
    fn every_failure_reason_has_a_phase() {
        let cases = [
            ("Unauthorized", BudgetPhase::Unauthorized),
            ("TokenMissing", BudgetPhase::Unauthorized),
            ("TokenNotOptedIn", BudgetPhase::Unauthorized),
            ("ApiUrlNotAllowed", BudgetPhase::Unauthorized),
            ("NotFound", BudgetPhase::NotFound),
            ("RateLimited", BudgetPhase::RateLimited),
            ("Unreachable", BudgetPhase::Unreachable),
            ("RequestFailed", BudgetPhase::Unreachable),
        ];
        for (reason, phase) in cases {
            assert_eq!(phase_of(reason), phase, "{reason}");
        }
        let suspended = next(
            &BudgetStatus::default(),
            &SyncReport {
                outcome: SyncOutcome::Suspended,
                generation: Some(1),
                mirror: None,
                requests: requests(0, None),
                now: at(0),
            },
        );
        assert_eq!(suspended.phase, Some(BudgetPhase::Suspended));
    }
}
