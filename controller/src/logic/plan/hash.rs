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
mod tests {
    use super::*;
    use crate::logic::plan::test_support::mirror;

    #[test]
    fn no_category_and_leave_alone_hash_apart() {
        let m = mirror();
        let tx = &m.transactions["tx-065"];
        let set_none = preview_hash(
            "scope",
            &[PreviewStep::Set {
                transaction: tx,
                to: None,
            }],
        );
        let leave = preview_hash(
            "scope",
            &[PreviewStep::Conflict {
                transaction_id: &tx.id,
                current: Some(tx),
            }],
        );
        let gone = preview_hash(
            "scope",
            &[PreviewStep::Conflict {
                transaction_id: &tx.id,
                current: None,
            }],
        );
        assert_ne!(set_none, leave);
        assert_ne!(leave, gone);
        assert_ne!(set_none, gone);
    }

    #[test]
    fn is_lowercase_hex_sha256_independent_of_order() {
        let m = mirror();
        let step = |id: &str, to| PreviewStep::Set {
            transaction: &m.transactions[id],
            to,
        };
        let forward = preview_hash("scope", &[step("tx-048", Some("a")), step("tx-049", None)]);
        let backward = preview_hash("scope", &[step("tx-049", None), step("tx-048", Some("a"))]);
        assert_eq!(forward, backward);
        assert_eq!(forward.len(), 64);
        assert!(
            forward
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        );
        assert_eq!(preview_hash("scope", &[]), preview_hash("scope", &[]));
        assert_ne!(preview_hash("scope", &[]), forward);
    }
}
