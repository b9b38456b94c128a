//! Transaction writes handed to the batcher and not yet recorded. A reconcile records its
//! intent, hands the write off and returns; the batch's answer lands here and wakes the
//! Transaction, whose next reconcile records the outcome. So 10,000 Transactions waiting on one
//! batch hold an entry each here, not a task each.
//!
//! Only this process's writes are here: after a restart, the intent in status is settled by
//! reading YNAB, as before.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::mpsc;

use super::approval_gate::Grant;
use crate::api::transaction::Transaction;
use crate::logic::transaction::batch::Outcome;
use crate::logic::transaction::step::Seen;
use crate::ynab::batcher::{self, Answer, Reply};

/// What recording a write's outcome needs from the reconcile that started it.
#[derive(Clone)]
pub struct Write {
    pub grant: Grant,
    pub seen: Seen,
    /// The spec generation written: a refusal holds for it, not for a newer one.
    pub generation: Option<i64>,
}

/// A write whose outcome is known, for the reconcile that records it.
pub struct Landed {
    pub write: Write,
    pub outcome: Outcome,
    /// The Transaction was woken while the write was in flight (its spec, its Budget or YNAB
    /// changed): look at it again once the outcome is recorded.
    pub look_again: bool,
}

struct Entry {
    object: ObjectRef<Transaction>,
    write: Write,
    outcome: Option<Outcome>,
    look_again: bool,
}

/// Answers settled between sweeps of entries whose Transaction is gone.
const SWEEP_EVERY: usize = 1024;

/// The writes in flight, by Transaction uid, and the stream of Transactions whose write landed.
pub struct WritesInFlight {
    entries: Mutex<Entries>,
    landed: mpsc::UnboundedSender<ObjectRef<Transaction>>,
    woken: Mutex<Option<mpsc::UnboundedReceiver<ObjectRef<Transaction>>>>,
    transactions: Store<Transaction>,
}

#[derive(Default)]
struct Entries {
    by_uid: HashMap<String, Entry>,
    settled_since_sweep: usize,
}

impl WritesInFlight {
    /// `transactions`: the shared cache, to drop outcomes of Transactions deleted meanwhile.
    pub fn new(transactions: Store<Transaction>) -> Self {
        let (landed, woken) = mpsc::unbounded_channel();
        Self {
            entries: Mutex::default(),
            landed,
            woken: Mutex::new(Some(woken)),
            transactions,
        }
    }

    /// The Transactions to reconcile because their write landed; taken once, by their
    /// controller.
    pub fn woken(&self) -> Option<mpsc::UnboundedReceiver<ObjectRef<Transaction>>> {
        self.woken.lock().expect("in-flight lock").take()
    }

    /// Records that `object` (uid `uid`) has `write` in flight; the returned reply settles it.
    pub fn start(
        self: &Arc<Self>,
        uid: &str,
        object: ObjectRef<Transaction>,
        write: Write,
    ) -> Reply {
        let entry = Entry {
            object,
            write,
            outcome: None,
            look_again: false,
        };
        self.lock().by_uid.insert(uid.to_owned(), entry);
        let this = self.clone();
        let uid = uid.to_owned();
        Reply::to(move |answer| this.settle(&uid, answer))
    }

    /// Defers a reconcile of `uid` while its write is in flight: `true` if it is. The
    /// Transaction is then looked at again once the outcome is recorded, so whatever woke it
    /// meanwhile is not lost.
    pub fn defer(&self, uid: &str) -> bool {
        let mut entries = self.lock();
        match entries.by_uid.get_mut(uid) {
            Some(entry) if entry.outcome.is_none() => {
                entry.look_again = true;
                true
            }
            _ => false,
        }
    }

    /// `uid`'s write whose outcome is known and not yet recorded.
    pub fn landed(&self, uid: &str) -> Option<Landed> {
        let entries = self.lock();
        let entry = entries.by_uid.get(uid)?;
        Some(Landed {
            write: entry.write.clone(),
            outcome: entry.outcome.clone()?,
            look_again: entry.look_again,
        })
    }

    /// Forgets `uid`'s landed write once its outcome is recorded in status.
    pub fn recorded(&self, uid: &str) {
        let mut entries = self.lock();
        if entries.by_uid.get(uid).is_some_and(|e| e.outcome.is_some()) {
            entries.by_uid.remove(uid);
        }
    }

    fn settle(&self, uid: &str, answer: Answer) {
        let outcome = match answer {
            Ok(mut outcomes) => outcomes.pop().expect("one outcome per item"),
            Err(e) => batcher::unanswered(&e),
        };
        let mut entries = self.lock();
        let Some(entry) = entries.by_uid.get_mut(uid) else {
            return;
        };
        entry.outcome = Some(outcome);
        let _ = self.landed.send(entry.object.clone());
        entries.settled_since_sweep += 1;
        if entries.settled_since_sweep >= SWEEP_EVERY {
            entries.settled_since_sweep = 0;
            // A Transaction deleted before its outcome was recorded is never reconciled again.
            let store = &self.transactions;
            entries.by_uid.retain(|uid, e| {
                e.outcome.is_none()
                    || store
                        .get(&e.object)
                        .is_some_and(|t| t.metadata.uid.as_deref() == Some(uid))
            });
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().expect("in-flight lock")
    }
}

#[cfg(test)]
#[path = "writes_in_flight_tests.rs"]
mod tests;
