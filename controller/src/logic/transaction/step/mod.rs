//! What a Transaction's reconcile does next, decided from what it read: a verdict that still
//! stands, how a person's resolution and an interrupted write settle the decision, what holds a
//! write back, and what the write's outcome means. The reconciler reads, acts and records.

mod decide;
mod standing;
mod write;

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

pub use decide::{Decision, Settled, decide, pin_baseline, without_write};
pub use standing::standing;
pub use write::{approval_used, held_back, no_token, start, written};

use super::converge::{self, Allocation, EndState};
use super::status::Verdict;
use super::view;
use crate::api::common::{Amount, WriteIntent};
use crate::api::transaction::{AppliedState, SplitLine, TransactionStatus};
use crate::logic::budget::mirror::Mirror;
use crate::logic::status::awaiting_read_back as waiting_words;
use crate::logic::values::money;

/// `ours` writes the spec over someone else's edit; `theirs` keeps YNAB's state until the spec
/// changes. Removed once handled.
pub const RESOLVE: &str = "ledgerops.dev/resolve";

/// The transaction as the decisions see it: its states, and the words status uses for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub id: String,
    /// YNAB's state, on the fields the spec manages.
    pub current: EndState,
    /// The state the spec declares.
    pub target: EndState,
    /// The current, target and last applied allocations, by category name.
    pub current_words: String,
    pub target_words: String,
    pub applied_words: String,
    /// What a write would change, field by field.
    pub change_words: String,
    /// The mirror's `server_knowledge`: what a write decided now is decided on.
    pub knowledge: i64,
    /// Whether YNAB changed the transaction after the knowledge an unsettled write was decided
    /// on; `None` when there is no such write, or it recorded no knowledge.
    pub changed_since_intent: Option<bool>,
}

impl Seen {
    /// Transaction `id` going from `current` to `target`, named as the mirror names categories;
    /// `applied` is what ledgerops last applied to it, `intent` the write an earlier run left
    /// unsettled.
    pub fn new(
        id: &str,
        (current, target): (EndState, EndState),
        applied: Option<&AppliedState>,
        intent: Option<&WriteIntent>,
        mirror: &Mirror,
    ) -> Self {
        let applied_words = applied.map_or_else(
            || "nothing".to_owned(),
            |a| view::allocation_words(&converge::prior_of(a), mirror),
        );
        Self {
            id: id.to_owned(),
            current_words: view::allocation_words(&current, mirror),
            target_words: view::allocation_words(&target, mirror),
            applied_words,
            change_words: view::change_words(&current, &target, mirror),
            current,
            target,
            knowledge: mirror.server_knowledge,
            changed_since_intent: intent
                .and_then(|i| i.knowledge)
                .and_then(|k| mirror.changed_since(id, k)),
        }
    }

    /// The summary of the ApprovalRequest that asks for the write.
    pub fn summary(&self) -> String {
        format!("{}: {}", self.id, self.change_words)
    }
}

/// The verdict while the write an earlier run left unsettled (`intent`) cannot be settled: it
/// was decided on a knowledge older than the mirror's history, so whether YNAB changed the
/// transaction since is unknown until a read back to it. `None`: go on deciding.
pub fn awaiting_read_back(intent: Option<&WriteIntent>, mirror: &Mirror) -> Option<Verdict> {
    let unread = intent.filter(|i| i.knowledge.is_some_and(|k| !mirror.remembers(k)))?;
    Some(Verdict::Pending(waiting_words(&unread.attempt_id)))
}

/// A reconcile's verdict, and when to look at the Transaction again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub verdict: Verdict,
    pub requeue: Duration,
}

impl Step {
    /// Nothing to do until something changes: the spec, an approval, or the record in YNAB (a
    /// sync announces it). The long requeue is a safety net.
    pub fn idle(verdict: Verdict) -> Self {
        Self::after(verdict, Duration::from_secs(600))
    }

    /// Something the decision needs is not there yet (the Budget, its sync, its token).
    pub fn not_ready(verdict: Verdict) -> Self {
        Self::after(verdict, Duration::from_secs(60))
    }

    fn after(verdict: Verdict, requeue: Duration) -> Self {
        Self { verdict, requeue }
    }
}

fn converged(reason: &'static str, message: &str) -> Verdict {
    Verdict::Converged {
        reason,
        message: message.to_owned(),
    }
}

fn refused(message: String) -> Verdict {
    Verdict::Blocked {
        reason: "RefusedByYnab",
        message,
    }
}

/// Records `state` as applied (written or adopted) at `at`: from now on an edit is measured
/// against it, and the baseline of the first write is done with.
fn record_applied(status: &mut TransactionStatus, state: &EndState, at: Timestamp) {
    status.applied = Some(applied_state(state, at));
    status.baseline = None;
}

/// `state` as the status records it, applied (written or adopted) at `at`.
fn applied_state(state: &EndState, at: Timestamp) -> AppliedState {
    let (category_id, split) = match &state.allocation {
        Some(Allocation::Category(c)) => (Some(c.clone()), None),
        Some(Allocation::Split(lines)) => {
            let lines = lines
                .iter()
                .map(|l| SplitLine {
                    amount: Amount(money::to_decimal(l.amount, 3)),
                    category_id: l.category_id.clone(),
                    memo: l.memo.clone(),
                })
                .collect();
            (None, Some(lines))
        }
        Some(Allocation::Uncategorized) | None => (None, None),
    };
    AppliedState {
        hash: state.hash(),
        category_id,
        split,
        memo: state.memo.clone(),
        approved: state.approved,
        flag_color: state.flag,
        at: Time(at),
    }
}

#[cfg(test)]
pub mod fixtures;

#[cfg(test)]
mod tests;
