//! The decision a comment writes, and the sentences approving and rejecting answer with.

use serde_json::json;

use super::*;
use crate::api::common::CategoryEdit;

#[test]
fn an_approval_records_its_author_comment_and_edits() {
    let except = [Exception {
        transaction_id: "tx-1".into(),
        category: None,
    }];
    let edits = Edits {
        drop: vec!["tx-1".into()],
        set: vec![CategoryEdit {
            transaction_id: "tx-2".into(),
            category_id: "cat-9".into(),
        }],
    };
    let by = by("alice");
    assert_eq!(by, "gitea:alice");
    assert_eq!(
        patch(
            Verdict::Approve(&except),
            &by,
            Some("looks right"),
            Some(&edits)
        ),
        json!({"spec": {"decision": {
            "verdict": "Approve",
            "by": "gitea:alice",
            "comment": "looks right",
            "edits": {"drop": ["tx-1"], "set": [{"transactionId": "tx-2", "categoryId": "cat-9"}]},
        }}})
    );
}

#[test]
fn a_rejection_without_comment_records_only_who() {
    assert_eq!(
        patch(Verdict::Reject, "gitea:bob", None, None),
        json!({"spec": {"decision": {"verdict": "Reject", "by": "gitea:bob"}}})
    );
}

#[test]
fn the_answer_names_the_request_its_summary_and_the_edits() {
    assert_eq!(
        decided(Verdict::Reject, "ar-1", "Groceries", None, "gitea:bob"),
        "Rejected ApprovalRequest `ar-1` (Groceries), recorded as `gitea:bob`."
    );
    assert_eq!(
        decided(
            Verdict::Approve(&[]),
            "ar-1",
            "3 changes",
            Some("1 dropped"),
            "gitea:alice"
        ),
        "Approved ApprovalRequest `ar-1` (3 changes) with edits (1 dropped), recorded as `gitea:alice`."
    );
}

#[test]
fn untrusted_text_in_answers_is_escaped() {
    let summary = "**bold** <b>";
    assert_eq!(
        decided(Verdict::Reject, "ar-1", summary, None, "gitea:bob"),
        format!(
            "Rejected ApprovalRequest `ar-1` ({}), recorded as `gitea:bob`.",
            cell(summary)
        )
    );
    assert!(!refused_by_api("ar-1", "<script>").contains("<script>"));
    assert!(!shown_gone("a`b").contains("a`b"));
}

#[test]
fn approving_what_was_shown_lists_approvals_then_refusals() {
    let approved = ["Approved a".to_owned(), "Approved b".to_owned()];
    let refused = ["c is gone".to_owned()];
    assert_eq!(
        shown_answer(&approved, &refused),
        "Approved a\n\nApproved b\n\nc is gone"
    );
    assert_eq!(shown_answer(&[], &refused), "c is gone");
}
