//! Deciding a batch of writes against a freshly synced mirror, and settling them afterwards.
//! Shared by Transactions (one item, converge semantics) and plans (many items, all or nothing).

use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::Approved;
use crate::logic::transaction::converge::{self, EndState, Expect, Precommit, Verified};

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
    /// What the decision to write (a person's approval or the Budget's policy) was made on,
    /// checked again on the fresh state right before writing.
    pub authorized: Authorized,
    /// The operation a plan's chunk belongs to (its id): the chunks of one operation go out in
    /// order, and once one does not land in full the later ones are not sent ([`Stops`]).
    pub operation: Option<String>,
}

/// What a write was authorized on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authorized {
    /// A plan's preview: recomputed from the spec on fresh state, it must hash the same.
    Plan(Approved),
    /// A Transaction's change: its approval hash on fresh state must be this one.
    Transaction { scope: String, hash: String },
}

impl Authorized {
    /// `Err` says why the authorization does not cover writing `items` on `mirror`.
    fn holds<'a>(
        &self,
        mirror: &Mirror,
        mut items: impl Iterator<Item = &'a WriteItem>,
    ) -> Result<(), String> {
        match self {
            Self::Plan(approved) => approved.holds(mirror),
            Self::Transaction { scope, hash } => {
                let fresh = items.all(|item| {
                    let Some(tx) = mirror.transactions.get(&item.transaction_id) else {
                        return false;
                    };
                    let current =
                        current_of(mirror, &item.transaction_id, &item.target).unwrap_or_default();
                    converge::approval_hash(scope, tx, &current, &item.target) == *hash
                });
                fresh.then_some(()).ok_or_else(|| {
                    "the transaction changed in YNAB since the change was approved (its category, amount, date, account or payee): nothing was written, a new request follows".into()
                })
            }
        }
    }
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
    /// The write did not land (the request failed, or a re-read shows it absent); trying again
    /// later may succeed.
    NotLanded(String),
    /// YNAB refused the change itself (invalid, missing, in conflict): sending it again fails
    /// the same way, so it is not retried.
    Refused(String),
    /// What was authorized no longer matches YNAB or the spec: nothing written.
    Stale(String),
}

impl Outcome {
    /// YNAB holds what was asked (or something YNAB made of it): the write counts as done.
    pub fn holds_target(&self) -> bool {
        matches!(
            self,
            Self::Written | Self::AlreadyTarget | Self::NoChange | Self::Mismatch
        )
    }
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
    let to_write = submission
        .items
        .iter()
        .zip(&plans)
        .filter(|(_, p)| **p == Plan::Write)
        .map(|(item, _)| item);
    if plans.contains(&Plan::Write)
        && let Err(why) = submission.authorized.holds(mirror, to_write)
    {
        for p in plans.iter_mut().filter(|p| **p == Plan::Write) {
            *p = Plan::Done(Outcome::Stale(why.clone()));
        }
        return plans;
    }
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

/// The operations of a batch that stopped because one of their chunks did not land in full:
/// their later chunks are held back, as if the operation had been written chunk by chunk.
#[derive(Debug, Default)]
pub struct Stops(std::collections::HashSet<String>);

impl Stops {
    /// From the decisions, in submission order: a chunk that cannot land in full stops its
    /// operation, and the writes of the chunks after it are held back.
    pub fn decide<'a>(
        submissions: impl IntoIterator<Item = &'a Submission>,
        plans: &mut [Vec<Plan>],
    ) -> Self {
        let mut stops = Self::default();
        for (submission, plans) in submissions.into_iter().zip(plans) {
            if let Some(held) = stops.holds_back(submission) {
                for p in plans.iter_mut().filter(|p| **p == Plan::Write) {
                    *p = Plan::Done(held.clone());
                }
            } else if !lands_in_full(plans) {
                stops.stop(submission);
            }
        }
        stops
    }

    /// What a chunk of a stopped operation gets instead of being sent.
    pub fn holds_back(&self, submission: &Submission) -> Option<Outcome> {
        let operation = submission.operation.as_ref()?;
        self.0.contains(operation).then(|| {
            Outcome::NotLanded(format!(
                "not sent: an earlier chunk of operation {operation} did not land in full"
            ))
        })
    }

    /// Records that `submission` did not land in full (its request failed).
    pub fn stop(&mut self, submission: &Submission) {
        if let Some(operation) = &submission.operation {
            self.0.insert(operation.clone());
        }
    }
}

/// Whether every item of a decided submission holds its target or goes out.
fn lands_in_full(plans: &[Plan]) -> bool {
    plans.iter().all(|p| match p {
        Plan::Write => true,
        Plan::Done(outcome) => outcome.holds_target(),
    })
}

/// The most requests a batch spends isolating the submissions YNAB refuses: each split of a
/// refused request into halves costs one more request. Enough to find one bad submission among
/// 256; beyond it the rest waits for the next batch.
pub const MAX_SPLITS: usize = 8;

/// Packs the submissions' write items (each a list of keys) into requests of at most `max`
/// items, keeping a submission's items in one request where they fit, in order.
pub fn pack<T: Clone>(groups: &[Vec<T>], max: usize) -> Vec<Vec<Vec<T>>> {
    let max = max.max(1);
    let mut requests: Vec<Vec<Vec<T>>> = Vec::new();
    let mut size = 0;
    for piece in groups.iter().flat_map(|g| g.chunks(max)) {
        match requests.last_mut() {
            Some(request) if size + piece.len() <= max => request.push(piece.to_vec()),
            _ => {
                requests.push(vec![piece.to_vec()]);
                size = 0;
            }
        }
        size += piece.len();
    }
    requests
}

/// What to do with a request YNAB refused for its content: split it in two (by submission) to
/// find the bad one, or, when it holds one submission or the splits are spent, give up on it.
pub fn split<T: Clone>(request: &[Vec<T>], splits_left: usize) -> Option<[Vec<Vec<T>>; 2]> {
    (request.len() > 1 && splits_left > 0).then(|| {
        let (a, b) = request.split_at(request.len() / 2);
        [a.to_vec(), b.to_vec()]
    })
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
    use crate::logic::transaction::converge::Allocation;
    use crate::ynab_model::PlanDetail;

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

    /// A Transaction authorization for writing `item` on `m`.
    fn authorized(m: &Mirror, item: &WriteItem) -> Authorized {
        let tx = &m.transactions[&item.transaction_id];
        let current = current_of(m, &item.transaction_id, &item.target).unwrap();
        Authorized::Transaction {
            scope: "s".into(),
            hash: converge::approval_hash("s", tx, &current, &item.target),
        }
    }

    #[test]
    fn nothing_is_written_when_the_authorization_no_longer_holds() {
        let m = mirror(&[("a", Some("dining"), "cleared")]);
        let write = item("a", "gifts", Expect::Prior(Some(cat("dining"))));
        let sub = |authorized| Submission {
            items: vec![write.clone()],
            all_or_nothing: false,
            operation: None,
            authorized,
        };
        assert_eq!(
            decide(&m, None, &sub(authorized(&m, &write))),
            [Plan::Write]
        );
        let mut changed = m.clone();
        changed.transactions.get_mut("a").unwrap().amount = -99_000;
        assert!(matches!(
            &decide(&changed, None, &sub(authorized(&m, &write)))[..],
            [Plan::Done(Outcome::Stale(why))] if why.contains("amount")
        ));
        let elsewhere = Authorized::Transaction {
            scope: "another budget".into(),
            hash: match authorized(&m, &write) {
                Authorized::Transaction { hash, .. } => hash,
                Authorized::Plan(_) => unreachable!(),
            },
        };
        assert!(matches!(
            &decide(&m, None, &sub(elsewhere))[..],
            [Plan::Done(Outcome::Stale(_))]
        ));
        // Already at the target: nothing to authorize, adopted whatever the hash.
        let landed = mirror(&[("a", Some("gifts"), "cleared")]);
        assert_eq!(
            decide(&landed, None, &sub(authorized(&m, &write))),
            [Plan::Done(Outcome::AlreadyTarget)]
        );
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
        let first = item("a", "gifts", Expect::Prior(Some(cat("dining"))));
        let sub = Submission {
            authorized: authorized(&m, &first),
            items: vec![
                first.clone(),
                item("b", "gifts", Expect::Prior(Some(cat("dining")))),
                item("a", "gifts", Expect::Prior(Some(cat("groceries")))),
                item("gone", "gifts", Expect::Prior(None)),
                item("r", "gifts", Expect::Prior(None)),
            ],
            all_or_nothing: false,
            operation: None,
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
                authorized: authorized(&m, &items[0]),
                items: items.clone(),
                all_or_nothing: true,
                operation: None,
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
                authorized: authorized(&m, &items[0]),
                items,
                all_or_nothing: false,
                operation: None,
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

    #[test]
    fn requests_keep_a_submission_whole_and_stay_within_the_limit() {
        type Groups<'a> = &'a [&'a [u8]];
        type Requests<'a> = &'a [&'a [&'a [u8]]];
        let cases: [(Groups, usize, Requests); 5] = [
            (&[&[1], &[2], &[3]], 2, &[&[&[1], &[2]], &[&[3]]]),
            (&[&[1, 2], &[3]], 2, &[&[&[1, 2]], &[&[3]]]),
            // A submission bigger than a request goes out in pieces of its own.
            (&[&[1], &[2, 3, 4]], 2, &[&[&[1]], &[&[2, 3]], &[&[4]]]),
            (&[&[1], &[2]], 0, &[&[&[1]], &[&[2]]]),
            (&[], 5, &[]),
        ];
        for (groups, max, want) in cases {
            let groups: Vec<Vec<u8>> = groups.iter().map(|g| g.to_vec()).collect();
            let want: Vec<Vec<Vec<u8>>> = want
                .iter()
                .map(|r| r.iter().map(|g| g.to_vec()).collect())
                .collect();
            assert_eq!(pack(&groups, max), want, "{groups:?} max {max}");
        }
    }

    #[test]
    fn a_refused_request_splits_by_submission_while_splits_are_left() {
        let request = vec![vec![1], vec![2], vec![3]];
        assert_eq!(
            split(&request, 1),
            Some([vec![vec![1]], vec![vec![2], vec![3]]])
        );
        assert_eq!(split(&request, 0), None, "no splits left");
        assert_eq!(
            split(&[vec![1, 2]], 5),
            None,
            "one submission is refused whole"
        );
    }

    #[test]
    fn the_split_budget_finds_one_bad_submission_among_256() {
        // Halving 256 submissions down to the bad one takes log2(256) splits.
        let mut request: Vec<Vec<u16>> = (0..256).map(|i| vec![i]).collect();
        let bad = 137;
        let mut splits = 0;
        while let Some([a, b]) = split(&request, MAX_SPLITS - splits) {
            splits += 1;
            request = if a.iter().flatten().any(|&i| i == bad) {
                a
            } else {
                b
            };
        }
        assert_eq!(request, vec![vec![bad]]);
        assert_eq!(splits, MAX_SPLITS);
    }

    #[test]
    fn the_chunks_after_one_that_cannot_land_in_full_are_held_back() {
        let chunk = |operation: Option<&str>| Submission {
            items: vec![item("a", "gifts", Expect::Prior(None))],
            all_or_nothing: true,
            authorized: Authorized::Transaction {
                scope: "s".into(),
                hash: "h".into(),
            },
            operation: operation.map(str::to_owned),
        };
        let write = || vec![Plan::Write];
        let done = |o: Outcome| vec![Plan::Done(o)];
        let held = Outcome::NotLanded(
            "not sent: an earlier chunk of operation op did not land in full".into(),
        );
        // The chunks' operations, their decisions in order, and what each is left with.
        type Case<'a> = (Vec<Option<&'a str>>, Vec<Vec<Plan>>, Vec<Vec<Plan>>);
        let cases: Vec<Case> = vec![
            (
                vec![Some("op"), Some("op"), Some("op")],
                vec![write(), write(), write()],
                vec![write(), write(), write()],
            ),
            // Adopted or unchanged items land: nothing stops.
            (
                vec![Some("op"), Some("op")],
                vec![done(Outcome::AlreadyTarget), write()],
                vec![done(Outcome::AlreadyTarget), write()],
            ),
            (
                vec![Some("op"), Some("op"), Some("op")],
                vec![write(), done(Outcome::Skipped), write()],
                vec![write(), done(Outcome::Skipped), done(held.clone())],
            ),
            // Another operation, and a Transaction's write, go on.
            (
                vec![Some("op"), Some("other"), None, Some("op")],
                vec![done(Outcome::Diverged), write(), write(), write()],
                vec![
                    done(Outcome::Diverged),
                    write(),
                    write(),
                    done(held.clone()),
                ],
            ),
            // Without an operation, a submission that cannot land stops nothing.
            (
                vec![None, None],
                vec![done(Outcome::Diverged), write()],
                vec![done(Outcome::Diverged), write()],
            ),
        ];
        for (operations, mut plans, want) in cases {
            let submissions: Vec<Submission> = operations.iter().map(|o| chunk(*o)).collect();
            Stops::decide(&submissions, &mut plans);
            assert_eq!(plans, want, "{operations:?}");
        }
        // A request that fails stops its operation for the requests after it.
        let mut stops = Stops::default();
        let first = chunk(Some("op"));
        assert_eq!(stops.holds_back(&first), None);
        stops.stop(&first);
        assert_eq!(stops.holds_back(&chunk(Some("op"))), Some(held));
        assert_eq!(stops.holds_back(&chunk(Some("other"))), None);
        stops.stop(&chunk(None));
        assert_eq!(stops.holds_back(&chunk(None)), None);
    }
}
