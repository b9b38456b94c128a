//! Whether the credentials a client was made from still stand.
//!
//! A write can wait in the batcher's queue for a batch window and behind a slow read; by then the
//! Budget may be suspended, deleted, or its token Secret gone. [`super::budget_links`] withdraws
//! the permit of such a Budget's credentials, and the client checks it right before every
//! request, so a request already queued never goes out afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared by every client made from one pairing of Budget, URL, Secret and token.
#[derive(Debug, Clone, Default)]
pub struct Permit(Arc<AtomicBool>);

impl Permit {
    /// From now on, no client holding this permit sends anything.
    pub fn withdraw(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether [`Permit::withdraw`] was called on this permit or a clone of it.
    pub fn is_withdrawn(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
#[path = "permit_tests.rs"]
mod tests;
