//! How long a failed reconcile waits before it is tried again: doubling from 250ms, capped at
//! 30s, never giving up; each key's failures are counted in memory until it succeeds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// 250ms doubling per attempt, at most 30s.
pub fn capped_backoff(attempt: u32) -> Duration {
    let millis = 250u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(10));
    Duration::from_millis(millis.min(30_000))
}

/// The failures so far, by key (a job, or `<controller>/<object>`).
#[derive(Default)]
pub struct Attempts(Mutex<HashMap<String, u32>>);

impl Attempts {
    /// The next retry delay of `key`.
    pub fn backoff(&self, key: &str) -> Duration {
        let mut attempts = self.0.lock().expect("attempts lock");
        let n = attempts.entry(key.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
        capped_backoff(*n)
    }

    /// Forgets `key`'s failures after a success.
    pub fn succeeded(&self, key: &str) {
        self.0.lock().expect("attempts lock").remove(key);
    }
}

#[cfg(test)]
#[path = "backoff_tests.rs"]
mod tests;
