//! The write path every YNAB write goes through. Submissions for one Budget that arrive within
//! the batch window are written together: one delta read first (every decision is made on fresh
//! state), then one bulk PATCH per `maxBatchSize` items, checked against YNAB's answer. A write
//! whose answer was lost is settled by reading again, never by writing again. A bulk update YNAB
//! refuses for its content is split by submission, a bounded number of times, so one bad record
//! does not hold back the others.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::budget_links::{BudgetKey, SharedMirror};
use super::client::YnabClient;
use super::error::YnabError;
use super::mirror_sync::{self, MirrorKey};
use crate::logic::approval::edited::Written;
use crate::logic::runtime::request_priority::{self, Priority};
use crate::logic::transaction::batch::{self, Outcome, Plan, Stops, Submission};

/// Where a Budget's writes go.
#[derive(Clone)]
pub struct Destination {
    pub client: YnabClient,
    pub plan_id: String,
    pub mirror: SharedMirror,
    pub closed_through: Option<String>,
    /// How long to wait for more submissions after the first.
    pub window: Duration,
    pub max_batch: usize,
    pub key: MirrorKey,
    /// What ledgerops last wrote to each transaction, as the watches bring the objects: a write
    /// the policy runs is held to it right before it goes out.
    pub written: Arc<Mutex<Written>>,
}

/// One outcome per item of a submission, or the error that stopped its whole batch.
pub type Answer = Result<Vec<Outcome>, YnabError>;

/// Where a submission's answer goes: to whoever hands it on. A reply dropped unanswered (its
/// worker gone) answers that the queue closed, so no submitter waits for ever.
pub struct Reply(Option<Box<dyn FnOnce(Answer) + Send>>);

impl Reply {
    /// Calls `deliver` with the answer.
    pub fn to(deliver: impl FnOnce(Answer) + Send + 'static) -> Self {
        Self(Some(Box::new(deliver)))
    }

    /// Delivers `answer`.
    pub fn send(mut self, answer: Answer) {
        if let Some(deliver) = self.0.take() {
            deliver(answer);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(deliver) = self.0.take() {
            deliver(Err(closed()));
        }
    }
}

/// Submissions handed off together: they join the same batch.
struct Job {
    destination: Destination,
    waiting: Vec<Waiting>,
}

/// A submission in a batch, waiting for its outcomes.
struct Waiting {
    submission: Submission,
    reply: Reply,
}

/// One batching queue per Budget.
#[derive(Default)]
pub struct Batcher {
    queues: Mutex<HashMap<BudgetKey, mpsc::UnboundedSender<Job>>>,
}

/// However busy a Budget, a batch is written at the latest this many windows after it opened.
const MAX_WINDOWS: u32 = 100;

/// A batch gathers at most this many bulk requests' worth of items: its one read before
/// writing serves them all, and a batch stays bounded in memory and in time.
const REQUESTS_PER_BATCH: usize = 10;

impl Batcher {
    /// Writes `submissions` to the Budget `key`, in order, and returns for each one outcome per
    /// item, or the error that stopped its whole batch before anything was written. Handed off
    /// together, they go out back to back in one batch (as many as fit one): one fresh read of
    /// YNAB before all their requests, not one each.
    pub async fn submit_all(
        &self,
        key: &BudgetKey,
        destination: &Destination,
        submissions: Vec<Submission>,
    ) -> Vec<Answer> {
        let (waiting, answers): (Vec<_>, Vec<_>) = submissions
            .into_iter()
            .map(|submission| {
                let (sender, answer) = oneshot::channel();
                let reply = Reply::to(move |outcomes| drop(sender.send(outcomes)));
                (Waiting { submission, reply }, answer)
            })
            .unzip();
        self.queue(key.clone(), destination.clone(), waiting);
        let mut outcomes = Vec::with_capacity(answers.len());
        for answer in answers {
            outcomes.push(answer.await.unwrap_or_else(|_| Err(closed())));
        }
        outcomes
    }

    /// Queues `submission` for the Budget `key`'s next batch without waiting for it: `reply`
    /// gets the answer. Thousands of submitters can wait this way holding no task each.
    pub fn hand_off(
        &self,
        key: BudgetKey,
        destination: Destination,
        submission: Submission,
        reply: Reply,
    ) {
        self.queue(key, destination, vec![Waiting { submission, reply }]);
    }

    fn queue(&self, key: BudgetKey, destination: Destination, waiting: Vec<Waiting>) {
        let job = Job {
            destination,
            waiting,
        };
        let queue = {
            let mut queues = self.queues.lock().expect("batcher lock");
            let queue = queues.entry(key).or_insert_with(spawn_worker);
            if queue.is_closed() {
                *queue = spawn_worker();
            }
            queue.clone()
        };
        // Refused only once the process is shutting down: the job's reply, dropped with it,
        // answers so.
        let _ = queue.send(job);
    }

    /// Drops the queue of a Budget that no longer exists; its worker ends once the writes
    /// already queued are answered.
    pub fn forget(&self, key: &BudgetKey) {
        self.queues.lock().expect("batcher lock").remove(key);
    }
}

/// What a submission's items came to when its batch got no answer from YNAB: a request held back
/// for its turn waits until then; anything else did not land.
pub fn unanswered(e: &YnabError) -> Outcome {
    match e {
        YnabError::Paced { until, .. } => Outcome::Waiting {
            until: *until,
            why: e.to_string(),
        },
        e => Outcome::NotLanded(e.to_string()),
    }
}

fn closed() -> YnabError {
    YnabError::Unreachable {
        what: "the write queue".into(),
        reason: "the process is shutting down".into(),
    }
}

fn spawn_worker() -> mpsc::UnboundedSender<Job> {
    let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
    tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            // The batch is written to the newest destination it was given (the Budget as last
            // read); only that one is kept, not one per submission.
            let mut destination = first.destination;
            let window = destination.window;
            let deadline = Instant::now() + window * MAX_WINDOWS;
            let max_items = destination.max_batch.max(1) * REQUESTS_PER_BATCH;
            let mut batch = first.waiting;
            // Gather until the queue is quiet for a window, `REQUESTS_PER_BATCH` full requests'
            // worth of items are waiting, or the batch is old enough. A person waits on a write
            // they approved: that batch takes only what is queued already, unless its read
            // would wait for its turn anyway (then it gathers until the turn, so the turn
            // carries more).
            while items_in(&batch) < max_items {
                let wait = gather_for(&batch, &destination).min(deadline - Instant::now());
                let job = if wait.is_zero() {
                    rx.try_recv().ok()
                } else {
                    tokio::time::timeout(wait, rx.recv()).await.ok().flatten()
                };
                let Some(job) = job else { break };
                destination = job.destination;
                batch.extend(job.waiting);
                if Instant::now() >= deadline {
                    break;
                }
            }
            write_batch(destination, batch).await;
        }
    });
    tx
}

/// How long `batch` may wait for more: a window, or, when it holds a write a person waits on,
/// only until its read's turn (none when that is now).
fn gather_for(batch: &[Waiting], destination: &Destination) -> Duration {
    let Some(first) = batch
        .iter()
        .map(|w| w.submission.priority)
        .filter(|p| !p.gathers())
        .min()
    else {
        return destination.window;
    };
    let now = Timestamp::now();
    let mut window = destination.client.window().lock().expect("window lock");
    window.next_turn(now, first).map_or(Duration::ZERO, |turn| {
        turn.duration_since(now).try_into().unwrap_or_default()
    })
}

fn items_in(batch: &[Waiting]) -> usize {
    batch.iter().map(|w| w.submission.items.len()).sum()
}

async fn write_batch(destination: Destination, jobs: Vec<Waiting>) {
    let cell = &destination.mirror;
    let _turn = cell.turn.lock().await;
    let priority = request_priority::of_batch(jobs.iter().map(|j| j.submission.priority));
    if let Err(e) = sync(&destination, priority).await {
        for job in jobs {
            job.reply.send(Err(e.clone()));
        }
        return;
    }
    // The submissions alone cross the awaits: a job's reply is not `Sync`.
    let submissions: Vec<&Submission> = jobs.iter().map(|j| &j.submission).collect();
    let mut plans = decide(&destination, &submissions).await;
    let mut stops = Stops::decide(submissions.iter().copied(), &mut plans);
    let sent = send(&destination, &submissions, &plans, &mut stops).await;
    answer(&destination, jobs, &plans, sent, priority).await;
}

/// Decides each item of `jobs` on the mirror just read, right before the write: whether it is
/// written, or how it ends without a request.
async fn decide(destination: &Destination, jobs: &[&Submission]) -> Vec<Vec<Plan>> {
    let cell = &destination.mirror;
    let closed_through = destination.closed_through.as_deref();
    let key = &destination.key;
    let last = |s: &Submission| {
        let asking = s.respect.as_deref()?;
        let ids: HashSet<&str> = s.items.iter().map(|i| i.transaction_id.as_str()).collect();
        let written = destination.written.lock();
        let written = written.unwrap_or_else(PoisonError::into_inner);
        Some(written.of(&key.namespace, &key.budget, &ids, asking))
    };
    let mut slot = cell.state.write().await;
    let plans = batch::decide_all(&slot.mirror, closed_through, jobs.iter().copied(), last);
    // Decided on a read made after their lost answers: those answers are settled.
    let decided = jobs.iter().flat_map(|j| &j.items);
    for item in decided {
        slot.mirror.lost_answers.remove(&item.transaction_id);
    }
    plans
}

/// What the bulk updates of a batch left to answer: the items that failed, by (job, item), and
/// the transactions of the requests whose answer was lost.
struct Sent {
    failed: HashMap<(usize, usize), Outcome>,
    uncertain: Vec<String>,
}

/// Sends the items `plans` writes, packed into bulk updates; a chunk whose operation stopped
/// in an earlier request is not sent.
async fn send(
    destination: &Destination,
    jobs: &[&Submission],
    plans: &[Vec<Plan>],
    stops: &mut Stops,
) -> Sent {
    let cell = &destination.mirror;
    // Each submission's items to write, as (job, item) keys.
    let groups: Vec<Vec<(usize, usize)>> = plans
        .iter()
        .enumerate()
        .map(|(j, p)| {
            p.iter()
                .enumerate()
                .filter(|(_, p)| **p == Plan::Write)
                .map(|(i, _)| (j, i))
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect();

    let mut failed: HashMap<(usize, usize), Outcome> = HashMap::new();
    // The transactions of the requests whose answer was lost.
    let mut uncertain: Vec<String> = Vec::new();
    let mut requests: VecDeque<_> = batch::pack(&groups, destination.max_batch).into();
    let mut splits_left = batch::MAX_SPLITS;
    while let Some(mut request) = requests.pop_front() {
        // A chunk whose operation stopped in an earlier request is not sent.
        request.retain(|piece| {
            let submission = &jobs[piece[0].0];
            let Some(held) = stops.holds_back(submission) else {
                return true;
            };
            failed.extend(piece.iter().map(|&k| (k, held.clone())));
            false
        });
        if request.is_empty() {
            continue;
        }
        let keys: Vec<(usize, usize)> = request.iter().flatten().copied().collect();
        let priority = request_priority::of_batch(keys.iter().map(|&(j, _)| jobs[j].priority));
        let items = keys
            .iter()
            .map(|&(j, i)| {
                let item = &jobs[j].items[i];
                crate::logic::transaction::converge::save_item(&item.transaction_id, &item.target)
            })
            .collect();
        let error = match destination
            .client
            .patch_transactions(&destination.plan_id, items, priority)
            .await
        {
            Ok(data) => {
                let written = data.transactions.unwrap_or_default();
                cell.state.write().await.mirror.record_written(written);
                continue;
            }
            Err(YnabError::OutcomeUnknown { .. }) => {
                uncertain.extend(
                    keys.iter()
                        .map(|&(j, i)| jobs[j].items[i].transaction_id.clone()),
                );
                continue;
            }
            Err(e) => e,
        };
        if !error.refuses_content() {
            failed.extend(keys.iter().map(|&k| (k, unanswered(&error))));
            keys.iter().for_each(|&(j, _)| stops.stop(jobs[j]));
            continue;
        }
        // One bad record refuses the whole bulk update: split by submission to find it, so
        // the others are written.
        if let Some([a, b]) = batch::split(&request, splits_left) {
            splits_left -= 1;
            requests.push_front(b);
            requests.push_front(a);
            continue;
        }
        let outcome = if request.len() == 1 {
            Outcome::Refused(error.to_string())
        } else {
            Outcome::NotLanded(format!(
                "YNAB refused the bulk update this change was part of ({error}), and the batch's splits to find the refused change are spent: it goes out with the next batch"
            ))
        };
        failed.extend(keys.iter().map(|&k| (k, outcome.clone())));
        keys.iter().for_each(|&(j, _)| stops.stop(jobs[j]));
    }
    Sent { failed, uncertain }
}

/// Answers every job: an item that failed with its failure, one whose answer was lost with
/// what a read of YNAB settles (or that it is unsettled), and one written with what landed.
async fn answer(
    destination: &Destination,
    jobs: Vec<Waiting>,
    plans: &[Vec<Plan>],
    sent: Sent,
    priority: Priority,
) {
    let cell = &destination.mirror;
    let Sent { failed, uncertain } = sent;
    // An answer was lost: read YNAB again to learn which writes landed. Until a read settles
    // them, the mirror remembers them (see `Mirror::lost_answers`).
    let settle_error = if uncertain.is_empty() {
        None
    } else {
        let lost = uncertain.iter().map(|id| (id.clone(), false));
        cell.state.write().await.mirror.lost_answers.extend(lost);
        let settled = sync(destination, priority).await;
        if settled.is_ok() {
            let mut slot = cell.state.write().await;
            uncertain.iter().for_each(|id| {
                slot.mirror.lost_answers.remove(id);
            });
        }
        settled.err()
    };
    let slot = cell.state.read().await;

    for (j, job) in jobs.into_iter().enumerate() {
        let outcomes = plans[j]
            .iter()
            .enumerate()
            .map(|(i, plan)| match plan {
                Plan::Done(outcome) => outcome.clone(),
                Plan::Write => match (failed.get(&(j, i)), &settle_error) {
                    (Some(outcome), _) => outcome.clone(),
                    (None, Some(e)) => {
                        Outcome::Unsettled(format!("outcome unknown, and re-reading failed: {e}"))
                    }
                    (None, None) => batch::settle(&slot.mirror, &job.submission.items[i]),
                },
            })
            .collect();
        job.reply.send(Ok(outcomes));
    }
}

/// A delta read at `priority`; the caller holds the Budget's turn.
async fn sync(destination: &Destination, priority: Priority) -> Result<(), YnabError> {
    mirror_sync::sync(
        &destination.client,
        &destination.plan_id,
        &destination.mirror,
        &destination.key,
        priority,
        None,
    )
    .await
    .map(drop)
}
