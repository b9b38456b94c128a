//! Whether this process may act on YNAB, Gitea and the statuses now.
//!
//! Without leader election a process always may. With it, only while it holds the Lease and last
//! renewed it within the renew deadline ([`crate::logic::runtime::lease::may_act`]); every YNAB request
//! checks this right before it is sent, so a holder that lost its lease in the middle of a batch
//! sends nothing more even before it exits.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::logic::runtime::lease::{self, Timing};

#[derive(Debug, Clone, Default)]
pub struct Leadership(Option<Arc<Term>>);

#[derive(Debug)]
struct Term {
    timing: Timing,
    renewed: Mutex<Option<Instant>>,
}

impl Leadership {
    /// Leader election is off: this process is the only one and always acts.
    pub fn sole() -> Self {
        Self(None)
    }

    /// Leader election is on: nothing is held until [`Leadership::renewed`].
    pub fn elected(timing: Timing) -> Self {
        Self(Some(Arc::new(Term {
            timing,
            renewed: Mutex::new(None),
        })))
    }

    /// Whether this process may act now.
    pub fn holds(&self) -> bool {
        match &self.0 {
            None => true,
            Some(term) => lease::may_act(
                *term.renewed.lock().expect("term lock"),
                &term.timing,
                Instant::now(),
            ),
        }
    }

    /// The lease was written as ours by a request sent at `sent`.
    pub fn renewed(&self, sent: Instant) {
        if let Some(term) = &self.0 {
            *term.renewed.lock().expect("term lock") = Some(sent);
        }
    }

    /// The lease is no longer ours (released, or somebody else holds it).
    pub fn lost(&self) {
        if let Some(term) = &self.0 {
            *term.renewed.lock().expect("term lock") = None;
        }
    }
}

#[cfg(test)]
#[path = "leadership_tests.rs"]
mod tests;
