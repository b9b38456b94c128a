//! Turns at the paced share of a token's hour. The pace lets one request out at a time; without
//! turns, whichever asks first at each turn takes it. A request steps aside briefly for one
//! whose turn has come too and that goes first: a higher priority (a person's approved write
//! before a periodic sync), or, at the same priority, another Budget sharing the token (one
//! household, several plans) that has used fewer of the hour's paced requests, so that a Budget
//! with a busy day does not keep the others waiting for the whole hour.

use std::collections::BTreeMap;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::request_priority::Priority;

/// How long a Budget that steps aside waits before it asks again: long enough for the one it
/// stepped aside for to come back for its turn.
pub const STEP_ASIDE: SignedDuration = SignedDuration::from_secs(5);
/// How long after its turn a waiting Budget is still expected: one that has not come back by
/// then is no longer waited for (its work was done another way, or it was deleted).
pub const EXPECTED_FOR: SignedDuration = SignedDuration::from_secs(30);

/// The requests told to come back for a turn, by Budget and priority, and when.
#[derive(Debug, Clone, Default)]
pub struct Turns {
    waiting: BTreeMap<(String, Priority), Timestamp>,
}

impl Turns {
    /// A request of `budget` at `priority` was held back until `until`.
    pub fn wait(&mut self, budget: &str, priority: Priority, until: Timestamp) {
        self.waiting.insert((budget.to_owned(), priority), until);
    }

    /// A request of `budget` at `priority` took a turn.
    pub fn served(&mut self, budget: &str, priority: Priority) {
        self.waiting.remove(&(budget.to_owned(), priority));
    }

    /// Whether a request of `budget` at `priority`, which the pace lets go at `now`, steps aside
    /// (and until when) for one whose turn has come too and goes first: a higher priority, or
    /// the same from a Budget that has used fewer paced requests (`used`).
    pub fn step_aside(
        &mut self,
        now: Timestamp,
        budget: &str,
        priority: Priority,
        used: impl Fn(&str) -> usize,
    ) -> Option<Timestamp> {
        self.waiting.retain(|_, until| *until + EXPECTED_FOR > now);
        let mine = used(budget);
        let first = self.waiting.iter().any(|((other, p), until)| {
            *until <= now
                && (*p < priority || (*p == priority && other != budget && used(other) < mine))
        });
        first.then(|| now + STEP_ASIDE)
    }
}

#[cfg(test)]
#[path = "fair_share_tests.rs"]
mod tests;
