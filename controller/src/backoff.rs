//! How long a failed reconcile or write waits before it is tried again: from 250ms, doubling up
//! to 20s, each delay with jitter of up to itself (so objects, jobs and replicas that failed
//! together do not retry in step), never giving up; each key's delays go on in memory until it
//! succeeds. Every controller's retries and the agent's go through here.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};

/// The first delay, before jitter.
pub const FIRST: Duration = Duration::from_millis(250);
/// The longest delay before jitter; with it, a delay stays under twice this.
pub const LONGEST: Duration = Duration::from_secs(20);

/// The delays of one thing being retried, endless.
pub fn retries() -> ExponentialBackoff {
    ExponentialBuilder::default()
        .with_min_delay(FIRST)
        .with_max_delay(LONGEST)
        .with_factor(2.0)
        .with_jitter()
        .without_max_times()
        .build()
}

/// The next of `delays`, never running out.
pub fn next(delays: &mut ExponentialBackoff) -> Duration {
    delays.next().unwrap_or(LONGEST)
}

/// The retry delays so far, by key (a job, or `<controller>/<object>`).
#[derive(Default)]
pub struct Attempts(Mutex<HashMap<String, ExponentialBackoff>>);

impl Attempts {
    /// The next retry delay of `key`.
    pub fn backoff(&self, key: &str) -> Duration {
        let mut attempts = self.0.lock().expect("attempts lock");
        next(attempts.entry(key.to_owned()).or_insert_with(retries))
    }

    /// Forgets `key`'s failures after a success.
    pub fn succeeded(&self, key: &str) {
        self.0.lock().expect("attempts lock").remove(key);
    }
}

#[cfg(test)]
#[path = "backoff_tests.rs"]
mod tests;
