//! When a proposal's branch needs looking at again. A rule's status writes (learning, every
//! pass) wake the namespace's ConfigRepo, and must not cost Gitea requests each time, so a
//! branch looked at is left alone for a while; a push to it must be looked at, even one that
//! lands while a look is under way (that look read the branch before it).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Per branch: how many pushes were seen, and the last look (when it started, and how many
/// pushes had been seen then).
#[derive(Default)]
pub(super) struct Looks {
    pushes: HashMap<String, u64>,
    looked: HashMap<String, (Instant, u64)>,
}

impl Looks {
    /// A push to `branch` arrived.
    pub(super) fn pushed(&mut self, branch: &str) {
        *self.pushes.entry(branch.to_owned()).or_default() += 1;
    }

    /// Whether `branch` is to be looked at `now`: never looked at, pushed to since the last look
    /// began, or last looked at `quiet` or longer ago. If so, the look begins: the pushes seen
    /// so far are what it covers once [`Looks::done`].
    pub(super) fn begin(&self, branch: &str, now: Instant, quiet: Duration) -> Option<Look> {
        let pushes = self.pushes.get(branch).copied().unwrap_or_default();
        let fresh = self.looked.get(branch).is_some_and(|(at, covered)| {
            *covered == pushes && now.saturating_duration_since(*at) < quiet
        });
        (!fresh).then_some(Look { at: now, pushes })
    }

    /// The look at `branch` that began as `look` read it.
    pub(super) fn done(&mut self, branch: &str, look: Look) {
        self.looked
            .insert(branch.to_owned(), (look.at, look.pushes));
    }
}

/// A look under way: when it began, and the pushes it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Look {
    at: Instant,
    pushes: u64,
}

#[cfg(test)]
#[path = "looks_tests.rs"]
mod tests;
