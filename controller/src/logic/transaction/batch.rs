//! Deciding a batch of writes against a freshly synced mirror, and settling them afterwards.
//! Shared by Transactions (one item, converge semantics) and plans (many items, all or nothing).

use std::collections::{HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;

use crate::logic::approval::edited::{self, LastWritten};
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::Approved;
use crate::logic::runtime::request_priority::Priority;
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
    /// What its requests may spend of the token's hour.
    pub priority: Priority,
    /// The object (see [`edited::key_of`]) whose write the Budget's policy runs unasked: right
    /// before it goes out, a transaction someone edited since ledgerops last wrote it is not
    /// written over (see [`edited::respect`]). `None` when a person decided the write.
    pub respect: Option<String>,
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
    /// It went out, its answer was lost, and reading YNAB again failed: whether it landed is
    /// not known yet. The intent stays open until a read tells (see `Mirror::changed_since`).
    Unsettled(String),
    /// Not sent: it waits for its turn in the token's hour (an unasked write is paced, see
    /// `logic::runtime::pacing`) and goes out at `until`.
    Waiting { until: Timestamp, why: String },
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

/// Decides every item of `submission` from the mirror, just synced, with nothing known of what
/// ledgerops wrote before.
pub fn decide(mirror: &Mirror, closed_through: Option<&str>, submission: &Submission) -> Vec<Plan> {
    decide_all(mirror, closed_through, [submission], |_| None).remove(0)
}

/// Decides every submission of one batch from the mirror, just synced. The chunks of one
/// operation carry the same approved preview, and on the same state its check gives the same
/// answer: it is made once for all of them, so a plan of n chunks costs one preview, not n.
/// `last` tells what ledgerops last wrote to the transactions of a submission the policy runs
/// (`None`: nothing to hold it to).
pub fn decide_all<'a>(
    mirror: &Mirror,
    closed_through: Option<&str>,
    submissions: impl IntoIterator<Item = &'a Submission>,
    last: impl Fn(&Submission) -> Option<LastWritten>,
) -> Vec<Vec<Plan>> {
    let mut checked = Checked::new();
    let mut claimed = HashSet::new();
    submissions
        .into_iter()
        .map(|s| {
            let mut plans = decide_checked(mirror, closed_through, s, &mut checked);
            if let Some(last) = last(s) {
                respect_edits(mirror, s, &last, &mut plans);
            }
            defer_second_writes(s, &mut plans, &mut claimed);
            plans
        })
        .collect()
}

/// A write the policy runs, held to what ledgerops last wrote (`last`) on the state read right
/// before it: when one of its transactions shows another category, someone edited it since,
/// and nothing of the submission is written. Its object looks again, and asks a person. The
/// policy's decision was made earlier, maybe minutes before its turn came, on what the objects
/// said then.
fn respect_edits(mirror: &Mirror, submission: &Submission, last: &LastWritten, plans: &mut [Plan]) {
    let edited = submission
        .items
        .iter()
        .zip(plans.iter())
        .find_map(|(item, plan)| {
            let tx = mirror.transactions.get(&item.transaction_id)?;
            let ours = edited::edited_since(last, &tx.id, tx.category_id.as_ref())?;
            (*plan == Plan::Write).then_some((tx, ours))
        });
    let Some((tx, ours)) = edited else {
        return;
    };
    let name = |id: &str| mirror.categories.get(id).map(|c| c.name.clone());
    let words = edited::edit_words(&tx.id, tx.category_id.as_deref(), ours, name);
    let why = format!(
        "{words}: nothing was written, and a person is asked whether to write over that edit"
    );
    for p in plans.iter_mut().filter(|p| **p == Plan::Write) {
        *p = Plan::Done(Outcome::Stale(why.clone()));
    }
}

/// Why a write waits for the next batch: see [`defer_second_writes`].
pub const WRITTEN_FIRST: &str = "another change to this transaction goes first in the same bulk update: this one waits for the next, to be decided on what YNAB holds then";

/// One write per transaction per batch. Every item is decided on the state read before the
/// batch, but YNAB applies a bulk update's entries in order: a second entry for the same
/// transaction would land on the state the first left, which nobody approved it from (found by
/// the hour-long soak, where approvals gathered while waiting for their turn). A later one
/// (the whole submission when it is all or nothing) is not sent, and is decided again on fresh
/// state with the next batch.
fn defer_second_writes<'a>(
    submission: &'a Submission,
    plans: &mut [Plan],
    claimed: &mut HashSet<&'a str>,
) {
    let mut mine = HashSet::new();
    let clashes: Vec<bool> = submission
        .items
        .iter()
        .zip(plans.iter())
        .map(|(item, plan)| {
            let id = item.transaction_id.as_str();
            *plan == Plan::Write && (claimed.contains(id) || !mine.insert(id))
        })
        .collect();
    if clashes.contains(&true) {
        for (plan, clash) in plans.iter_mut().zip(clashes) {
            if *plan == Plan::Write && (clash || submission.all_or_nothing) {
                *plan = Plan::Done(Outcome::NotLanded(WRITTEN_FIRST.into()));
            }
        }
    }
    let written = submission.items.iter().zip(plans.iter());
    claimed.extend(
        written
            .filter(|(_, plan)| **plan == Plan::Write)
            .map(|(item, _)| item.transaction_id.as_str()),
    );
}

/// The plan authorizations already checked on this state, by operation and approved hash.
type Checked = HashMap<(String, String), Result<(), String>>;

fn decide_checked(
    mirror: &Mirror,
    closed_through: Option<&str>,
    submission: &Submission,
    checked: &mut Checked,
) -> Vec<Plan> {
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
        && let Err(why) = match (&submission.authorized, &submission.operation) {
            (Authorized::Plan(approved), Some(operation)) => checked
                .entry((operation.clone(), approved.hash.clone()))
                .or_insert_with(|| approved.holds(mirror))
                .clone(),
            (authorized, _) => authorized.holds(mirror, to_write),
        }
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
            // Its "before" is back after a write whose answer was lost: someone undid it.
            None if mirror.lost_answers.get(&item.transaction_id) == Some(&true) => {
                Plan::Done(Outcome::Diverged)
            }
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
#[path = "batch_tests.rs"]
mod tests;
