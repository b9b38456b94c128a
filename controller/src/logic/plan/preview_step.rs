//! The steps a preview is made of: one per transaction it covers. The preview assembles them and
//! the hash covers them, so they live apart from both.

use crate::ynab_model::TransactionSummary;

/// One transaction a preview covers, and what is asked of it.
pub(super) enum PreviewStep<'a> {
    /// Put the transaction in category `to`; `None` leaves it with no category.
    Set {
        transaction: &'a TransactionSummary,
        to: Option<&'a str>,
    },
    /// Leave the transaction alone: it changed since, or was deleted (`current` is `None`).
    Conflict {
        transaction_id: &'a str,
        current: Option<&'a TransactionSummary>,
    },
}
