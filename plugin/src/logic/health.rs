//! `status`: each Budget's health and request use, the Transactions that need a person.

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::budget::Budget;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::status::conditions;

use super::time;

pub const BUDGET_HEADERS: [&str; 6] = [
    "NAMESPACE",
    "BUDGET",
    "PHASE",
    "LAST SYNC",
    "REQUESTS/HOUR",
    "MESSAGE",
];

/// One row per Budget: phase, how long ago it synced, requests used of its hourly limit, and
/// the Ready message when it is not Ready.
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
            .map(|r| format!("{}/{}", r.used_last_hour, r.limit_per_hour))
            .unwrap_or_else(|| "-".into()),
        message,
    ]
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
            ["home", "household", "-", "never", "-", ""]
        );
        b.status = Some(BudgetStatus {
            phase: Some(BudgetPhase::Ready),
            last_sync_time: Some(Time(Timestamp::from_second(9_700).unwrap())),
            requests: Some(RequestUse {
                used_last_hour: 3,
                limit_per_hour: 180,
                rate_limited_until: None,
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
                "3/180",
                "YNAB refused the token"
            ]
        );
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
