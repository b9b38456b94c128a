//! `status`: each Budget's health and request use, the Transactions that need a person.

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::budget::{Budget, RequestsByPriority};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;

use super::time;

pub const BUDGET_HEADERS: [&str; 8] = [
    "NAMESPACE",
    "BUDGET",
    "PHASE",
    "LAST SYNC",
    "REQUESTS/HOUR",
    "SPENT ON",
    "NEXT UNASKED",
    "MESSAGE",
];

/// One row per Budget: phase, how long ago it synced, requests used of its hourly limit (how
/// many of them are kept for people, and its own share of a token it shares), what they went to, when the next request nobody waits
/// for may go out, and the Ready message when it is not Ready.
pub fn budget_row(b: &Budget, now: Timestamp) -> Vec<String> {
    let status = b.status.clone().unwrap_or_default();
    let ready = conditions::get(&status.conditions, conditions::READY);
    let message = ready
        .filter(|c| c.status != "True")
        .map(|c| c.message.clone())
        .unwrap_or_default();
    vec![
        b.metadata.namespace.clone().unwrap_or_default(),
        b.metadata.name.clone().unwrap_or_default(),
        status
            .phase
            .map(|p| format!("{p:?}"))
            .unwrap_or_else(|| "-".into()),
        status
            .last_sync_time
            .map(|t| format!("{} ago", time::age(t.0, now)))
            .unwrap_or_else(|| "never".into()),
        status
            .requests
            .as_ref()
            .map(|r| {
                let mut notes = Vec::new();
                if r.reserved_per_hour > 0 {
                    notes.push(format!("{} kept", r.reserved_per_hour));
                }
                // A token shared with other Budgets: what went to this one.
                if let Some(mine) = r.for_this_budget.filter(|n| *n != r.used_last_hour) {
                    notes.push(format!("{mine} for this Budget"));
                }
                let used = format!("{}/{}", r.used_last_hour, r.limit_per_hour);
                match notes.is_empty() {
                    true => used,
                    false => format!("{used} ({})", notes.join("; ")),
                }
            })
            .unwrap_or_else(|| "-".into()),
        status
            .requests
            .as_ref()
            .and_then(|r| r.by_priority.as_ref())
            .map(spent_on)
            .unwrap_or_else(|| "-".into()),
        status
            .requests
            .as_ref()
            .map(|r| match &r.next_paced_at {
                Some(at) => time::until(at.0, now),
                None => "now".into(),
            })
            .unwrap_or_else(|| "-".into()),
        message,
    ]
}

/// The hour's requests by priority, the ones with any: `2 approved, 7 background`.
fn spent_on(by: &RequestsByPriority) -> String {
    let parts: Vec<String> = [
        (by.approved, "approved"),
        (by.asked, "asked"),
        (by.unasked, "unasked"),
        (by.background, "background"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

pub const TRANSACTION_HEADERS: [&str; 4] = ["NAMESPACE", "TRANSACTION", "PHASE", "MESSAGE"];

/// The Transactions a person must look at (Diverged, Blocked, Interrupted), each with its
/// condition's message.
pub fn needing_a_person(all: &[Transaction]) -> Vec<Vec<String>> {
    all.iter()
        .filter_map(|t| {
            let status = t.status.as_ref()?;
            let kind = match status.phase? {
                TransactionPhase::Diverged => "Diverged",
                TransactionPhase::Blocked => "Blocked",
                TransactionPhase::Interrupted => "Interrupted",
                _ => return None,
            };
            let message = conditions::get(&status.conditions, kind)
                .map(|c| c.message.clone())
                .unwrap_or_default();
            Some(vec![
                t.metadata.namespace.clone().unwrap_or_default(),
                t.metadata.name.clone().unwrap_or_default(),
                kind.to_owned(),
                message,
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use ledgerops::api::budget::{BudgetPhase, BudgetStatus, RequestUse};
    use ledgerops::api::transaction::TransactionStatus;
    use serde_json::json;

    fn condition(type_: &str, status: &str, message: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: "R".into(),
            message: message.into(),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            observed_generation: None,
        }
    }

    #[test]
    fn a_budget_row_shows_sync_age_request_use_and_trouble() {
        let mut b: Budget = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
            "metadata": {"name": "household", "namespace": "home"},
            "spec": {"planId": "last-used", "tokenSecretRef": {"name": "t"}}
        }))
        .unwrap();
        let now = Timestamp::from_second(10_000).unwrap();
        assert_eq!(
            budget_row(&b, now),
            ["home", "household", "-", "never", "-", "-", "-", ""]
        );
        b.status = Some(BudgetStatus {
            phase: Some(BudgetPhase::Ready),
            last_sync_time: Some(Time(Timestamp::from_second(9_700).unwrap())),
            requests: Some(RequestUse {
                used_last_hour: 3,
                limit_per_hour: 180,
                rate_limited_until: None,
                reserved_per_hour: 45,
                by_priority: Some(RequestsByPriority {
                    approved: 2,
                    asked: 0,
                    unasked: 0,
                    background: 1,
                }),
                next_paced_at: Some(Time(Timestamp::from_second(10_035).unwrap())),
                for_this_budget: Some(3),
            }),
            conditions: vec![condition("Ready", "False", "YNAB refused the token")],
            ..Default::default()
        });
        assert_eq!(
            budget_row(&b, now),
            [
                "home",
                "household",
                "Ready",
                "5m ago",
                "3/180 (45 kept)",
                "2 approved, 1 background",
                "in 35s",
                "YNAB refused the token"
            ]
        );
        // Sharing its token with another Budget, it made one of the token's three.
        if let Some(r) = b.status.as_mut().and_then(|s| s.requests.as_mut()) {
            r.for_this_budget = Some(1);
        }
        assert_eq!(budget_row(&b, now)[4], "3/180 (45 kept; 1 for this Budget)");
    }

    #[test]
    fn only_transactions_that_need_a_person_are_listed() {
        let tx = |name: &str, phase: TransactionPhase, cond: &str| {
            let mut t: Transaction = serde_json::from_value(json!({
                "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
                "metadata": {"name": name, "namespace": "home"},
                "spec": {"budgetRef": {"name": "household"}, "transactionId": "tx-1", "memo": "m"}
            }))
            .unwrap();
            t.status = Some(TransactionStatus {
                phase: Some(phase),
                conditions: vec![condition(cond, "True", &format!("{name} says why"))],
                ..Default::default()
            });
            t
        };
        let all = [
            tx("a", TransactionPhase::Diverged, "Diverged"),
            tx("b", TransactionPhase::Converged, "Converged"),
            tx("c", TransactionPhase::Blocked, "Blocked"),
            tx("d", TransactionPhase::AwaitingApproval, "AwaitingApproval"),
        ];
        let rows = needing_a_person(&all);
        assert_eq!(
            rows,
            [
                ["home", "a", "Diverged", "a says why"],
                ["home", "c", "Blocked", "c says why"]
            ]
        );
    }
}
