//! Turns at the paced share of a token's hour between the Budgets that share the token (one
//! household, several plans). The pace gives the token one request nobody waits for at a time;
//! without turns, whichever Budget asks first at each turn takes it, and a Budget with a busy
//! day keeps the others waiting for the whole hour. A Budget whose turn has come while another
//! that has used fewer of the hour's paced requests waits for the same turn steps aside briefly.

use std::collections::BTreeMap;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// How long a Budget that steps aside waits before it asks again: long enough for the one it
/// stepped aside for to come back for its turn.
pub const STEP_ASIDE: SignedDuration = SignedDuration::from_secs(5);
/// How long after its turn a waiting Budget is still expected: one that has not come back by
/// then is no longer waited for (its work was done another way, or it was deleted).
pub const EXPECTED_FOR: SignedDuration = SignedDuration::from_secs(30);

/// The Budgets told to come back for a turn, and when.
#[derive(Debug, Clone, Default)]
pub struct Turns {
    waiting: BTreeMap<String, Timestamp>,
}

impl Turns {
    /// `budget` was held back until `until`.
    pub fn wait(&mut self, budget: &str, until: Timestamp) {
        self.waiting.insert(budget.to_owned(), until);
    }

    /// `budget` took a turn.
    pub fn served(&mut self, budget: &str) {
        self.waiting.remove(budget);
    }

    /// Whether `budget`, which the pace lets go at `now`, steps aside (and until when) for a
    /// Budget whose turn has come too and that has used fewer paced requests (`used`).
    pub fn step_aside(
        &mut self,
        now: Timestamp,
        budget: &str,
        used: impl Fn(&str) -> usize,
    ) -> Option<Timestamp> {
        self.waiting.retain(|_, until| *until + EXPECTED_FOR > now);
        let mine = used(budget);
        let fairer = self
            .waiting
            .iter()
            .any(|(other, until)| other != budget && *until <= now && used(other) < mine);
        fairer.then(|| now + STEP_ASIDE)
    }
}

#[cfg(test)]
#[path = "fair_share_tests.rs"]
mod tests;
