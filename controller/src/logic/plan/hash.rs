//! The preview hash an approval names. It covers what would be written and the state of every
//! transaction the plan involves, so an approval goes stale when either changes, and only then.

use std::fmt::Write;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::preview_step::PreviewStep;
use crate::ynab_model::TransactionSummary;

/// Bumped whenever what is hashed changes, so an old approval can never match a new meaning.
const DOMAIN: &str = "ledgerops.dev/categorization-preview/v2";

/// One transaction, as hashed.
#[derive(Serialize)]
struct Row<'a> {
    transaction_id: &'a str,
    /// The transaction as the preview saw it; `None` when it was deleted.
    current: Option<Current<'a>>,
    intent: Intent<'a>,
}

/// The field a write overwrites (the category) and those the person approved it by. Memo,
/// flag and cleared status are left out: editing them does not change what was approved.
#[derive(Serialize)]
struct Current<'a> {
    category_id: Option<&'a str>,
    account_id: &'a str,
    date: &'a str,
    amount: i64,
    payee_id: Option<&'a str>,
}

/// What the plan asks of the transaction. An enum rather than nested options so that "set to
/// no category" and "leave alone" can never hash alike.
#[derive(Serialize)]
enum Intent<'a> {
    Set { category_id: Option<&'a str> },
    LeaveAlone,
}

/// Lowercase hex SHA-256 of `steps` in `scope` (the Budget and YNAB plan), sorted by
/// transaction id so the plan's order is irrelevant.
pub(super) fn preview_hash(scope: &str, steps: &[PreviewStep<'_>]) -> String {
    let mut rows: Vec<Row<'_>> = steps.iter().map(row).collect();
    rows.sort_by(|a, b| a.transaction_id.cmp(b.transaction_id));
    let canonical = serde_json::to_vec(&(DOMAIN, scope, rows))
        .expect("strings, integers and options serialize");
    hex_sha256(&canonical)
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

fn row<'a>(step: &PreviewStep<'a>) -> Row<'a> {
    match *step {
        PreviewStep::Set { transaction, to } => Row {
            transaction_id: &transaction.id,
            current: Some(current(transaction)),
            intent: Intent::Set { category_id: to },
        },
        PreviewStep::Conflict {
            transaction_id,
            current: now,
        } => Row {
            transaction_id,
            current: now.map(current),
            intent: Intent::LeaveAlone,
        },
    }
}

fn current(tx: &TransactionSummary) -> Current<'_> {
    Current {
        category_id: tx.category_id.as_deref(),
        account_id: &tx.account_id,
        date: &tx.date,
        amount: tx.amount,
        payee_id: tx.payee_id.as_deref(),
    }
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
