//! Unit tests of `logic/plan/hash.rs`.

use super::*;
use crate::logic::plan::fixtures::mirror;

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
