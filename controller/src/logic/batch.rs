//! Deciding a batch of writes against a freshly synced mirror, and settling them afterwards.
//! Shared by Transactions (one item, converge semantics) and plans (many items, all or nothing).

use super::converge::{self, EndState, Expect, Precommit, Verified};
use super::mirror::Mirror;

/// One transaction to bring to `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteItem {
    pub transaction_id: String,
    pub target: EndState,
    pub expect: Expect,
}

/// Items submitted together by one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub items: Vec<WriteItem>,
    /// Write none of the items unless every one can be written or already holds (a plan).
    pub all_or_nothing: bool,
}

/// What happened to one item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Written, and YNAB's answer shows the target.
    Written,
    /// YNAB already held the target, as before: nothing written.
    NoChange,
    /// YNAB already held the target (a write that landed earlier): adopted, nothing written.
    AlreadyTarget,
    /// Someone else changed the record: nothing written.
    Diverged,
    /// The transaction is not in the plan (or was deleted).
    Missing,
    /// A guard forbids the write.
    Blocked(converge::Blocked),
    /// Not written because another item of the same all-or-nothing submission could not be.
    Skipped,
    /// Written, but YNAB shows something else afterwards (it ignored or changed a field).
    Mismatch,
    /// The write did not land (the request failed, or a re-read shows it absent).
    NotLanded(String),
}

/// The decision for one item before the batch is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Write,
    Done(Outcome),
}

/// Decides every item of `submission` from the mirror, just synced.
pub fn decide(mirror: &Mirror, closed_through: Option<&str>, submission: &Submission) -> Vec<Plan> {
    let mut plans: Vec<Plan> = submission
        .items
        .iter()
        .map(|item| decide_item(mirror, closed_through, item))
        .collect();
    let refused = plans.iter().any(|p| {
        matches!(
            p,
            Plan::Done(Outcome::Diverged | Outcome::Missing | Outcome::Blocked(_))
        )
    });
    if submission.all_or_nothing && refused {
        for p in plans.iter_mut().filter(|p| **p == Plan::Write) {
            *p = Plan::Done(Outcome::Skipped);
        }
    }
    plans
}

fn decide_item(mirror: &Mirror, closed_through: Option<&str>, item: &WriteItem) -> Plan {
    let Some(tx) = mirror.transactions.get(&item.transaction_id) else {
        return Plan::Done(Outcome::Missing);
    };
    let current = current_of(mirror, &item.transaction_id, &item.target).expect("present");
    match converge::precommit(&current, &item.target, &item.expect) {
        Precommit::NoChange => Plan::Done(Outcome::NoChange),
        Precommit::AlreadyTarget => Plan::Done(Outcome::AlreadyTarget),
        Precommit::Diverged => Plan::Done(Outcome::Diverged),
        Precommit::Write => match converge::guard(tx, closed_through) {
            Some(blocked) => Plan::Done(Outcome::Blocked(blocked)),
            None => Plan::Write,
        },
    }
}

/// The transaction as the mirror shows it, on the target's fields.
pub fn current_of(mirror: &Mirror, id: &str, target: &EndState) -> Option<EndState> {
    let tx = mirror.transactions.get(id)?;
    let lines = mirror
        .subtransactions
        .get(id)
        .map(Vec::as_slice)
        .unwrap_or_default();
    Some(converge::observe(tx, lines, target))
}

/// After the write: compares what YNAB shows now with the target.
pub fn settle(mirror: &Mirror, item: &WriteItem) -> Outcome {
    let read_back = current_of(mirror, &item.transaction_id, &item.target);
    match converge::verify(read_back.as_ref(), &item.target) {
        Verified::Match => Outcome::Written,
        Verified::Diverged => Outcome::Mismatch,
        Verified::CouldNotConfirm => {
            Outcome::NotLanded("YNAB no longer shows the transaction".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::logic::converge::Allocation;
    use crate::ynab::model::PlanDetail;

    fn mirror(txs: &[(&str, Option<&str>, &str)]) -> Mirror {
        let transactions: Vec<_> = txs
            .iter()
            .map(|(id, cat, cleared)| {
                json!({"id": id, "date": "2026-09-16", "amount": -8400, "memo": null, "cleared": cleared,
                       "approved": true, "flag_color": null, "account_id": "acc", "payee_id": null,
                       "category_id": cat, "transfer_account_id": null, "deleted": false})
            })
            .collect();
        let plan: PlanDetail = serde_json::from_value(json!({
            "id": "p", "name": "P", "accounts": [], "payees": [], "payee_locations": [], "category_groups": [],
            "categories": [], "months": [], "transactions": transactions, "subtransactions": [],
            "scheduled_transactions": [], "scheduled_subtransactions": []
        }))
        .unwrap();
        let mut m = Mirror::default();
        m.apply(plan, 1);
        m
    }

    fn cat(id: &str) -> EndState {
        EndState {
            allocation: Some(Allocation::Category(id.into())),
            ..EndState::default()
        }
    }

    fn item(id: &str, to: &str, expect: Expect) -> WriteItem {
        WriteItem {
            transaction_id: id.into(),
            target: cat(to),
            expect,
        }
    }

    fn uncategorized() -> EndState {
        EndState {
            allocation: Some(Allocation::Uncategorized),
            ..EndState::default()
        }
    }

    #[test]
    fn each_item_is_decided_on_fresh_state() {
        let m = mirror(&[
            ("a", Some("dining"), "cleared"),
            ("b", Some("gifts"), "cleared"),
            ("r", None, "reconciled"),
        ]);
        let sub = Submission {
            items: vec![
                item("a", "gifts", Expect::Prior(Some(cat("dining")))),
                item("b", "gifts", Expect::Prior(Some(cat("dining")))),
                item("a", "gifts", Expect::Prior(Some(cat("groceries")))),
                item("gone", "gifts", Expect::Prior(None)),
                item("r", "gifts", Expect::Prior(None)),
            ],
            all_or_nothing: false,
        };
        let plans = decide(&m, None, &sub);
        assert_eq!(plans[0], Plan::Write);
        assert_eq!(plans[1], Plan::Done(Outcome::AlreadyTarget));
        assert_eq!(plans[2], Plan::Done(Outcome::Diverged));
        assert_eq!(plans[3], Plan::Done(Outcome::Missing));
        assert!(matches!(&plans[4], Plan::Done(Outcome::Blocked(b)) if b.reason == "Reconciled"));
    }

    #[test]
    fn all_or_nothing_writes_nothing_when_one_item_changed() {
        let m = mirror(&[("a", None, "cleared"), ("b", Some("dining"), "cleared")]);
        let items = vec![
            item("a", "groceries", Expect::Exactly(uncategorized())),
            item("b", "transport", Expect::Exactly(uncategorized())),
        ];
        let plans = decide(
            &m,
            None,
            &Submission {
                items: items.clone(),
                all_or_nothing: true,
            },
        );
        assert_eq!(
            plans,
            [Plan::Done(Outcome::Skipped), Plan::Done(Outcome::Diverged)]
        );
        let plans = decide(
            &m,
            None,
            &Submission {
                items,
                all_or_nothing: false,
            },
        );
        assert_eq!(plans[0], Plan::Write);
    }

    #[test]
    fn settle_reads_back() {
        let m = mirror(&[("a", Some("gifts"), "cleared")]);
        assert_eq!(
            settle(&m, &item("a", "gifts", Expect::Prior(None))),
            Outcome::Written
        );
        assert_eq!(
            settle(&m, &item("a", "dining", Expect::Prior(None))),
            Outcome::Mismatch
        );
        assert!(matches!(
            settle(&m, &item("zz", "dining", Expect::Prior(None))),
            Outcome::NotLanded(_)
        ));
    }
}
