//! States and a transaction as the step tests see them.

use k8s_openapi::jiff::Timestamp;

use super::Seen;
use crate::logic::transaction::converge::{Allocation, EndState};

pub fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

/// A state that puts the whole amount in `category`.
pub fn category(category: &str) -> EndState {
    EndState {
        allocation: Some(Allocation::Category(category.into())),
        ..EndState::default()
    }
}

/// Seed 002's bakery transaction, from `current` to `target`.
pub fn seen(current: EndState, target: EndState) -> Seen {
    Seen {
        id: "tx-048".into(),
        current,
        target,
        current_words: "Dining Out".into(),
        target_words: "Groceries".into(),
        applied_words: "Bakery".into(),
        change_words: "Dining Out → Groceries".into(),
        knowledge: 40,
        changed_since_intent: None,
    }
}
