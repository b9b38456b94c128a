//! The plan writes (attempt ids) this process started and has not finished. A lost answer of
//! theirs is still in the batcher's memory of the mirror (`Mirror::lost_answers`); an open
//! intent that is not here was left by an earlier run, and is settled by what YNAB says changed
//! since it was decided.

use std::collections::HashSet;
use std::sync::Mutex;

#[derive(Default)]
pub struct AttemptsHere(Mutex<HashSet<String>>);

impl AttemptsHere {
    /// The write `attempt` is about to go out from this process.
    pub fn started(&self, attempt: &str) {
        self.lock().insert(attempt.to_owned());
    }

    /// The write `attempt` is over: its outcome is recorded.
    pub fn finished(&self, attempt: &str) {
        self.lock().remove(attempt);
    }

    /// Whether this process started the write `attempt` and it is not over.
    pub fn contains(&self, attempt: &str) -> bool {
        self.lock().contains(attempt)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // Never held across an await or a panic-prone call: a poisoned lock is still sound.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
