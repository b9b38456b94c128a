//! Unit tests of `logic/approval/escalation.rs`.

use serde_json::json;

use super::*;

const BOT: &str = "ledgerops-bot";

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

/// An expired request of plan `groceries` (uid `plan-uid`) of Budget `home`, escalated at 0.
fn request(status: serde_json::Value) -> ApprovalRequest {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
        "metadata": {"name": "groceries-1", "namespace": "family", "uid": "req-uid"},
        "spec": {"budgetRef": {"name": "home"},
                 "subject": {"kind": "CategorizationPlan", "name": "groceries"},
                 "previewHash": "h", "summary": "Move 3 transactions to Groceries",
                 "reason": "r", "changeCount": 3, "expiresAt": at(0).to_string(),
                 "escalateTo": ["alice", "bob.smith", "carol@example.com"]},
        "status": status,
    }))
    .unwrap()
}

fn expired() -> serde_json::Value {
    json!({"phase": "Expired", "escalatedAt": at(0).to_string(),
           "issuedFor": {"subjectUid": "plan-uid", "previewHash": "h", "at": at(-60).to_string()}})
}

#[test]
fn only_a_recent_escalation_of_an_issued_undecided_request_is_due() {
    let without = |key: &str| {
        let mut s = expired();
        s.as_object_mut().unwrap().remove(key);
        request(s)
    };
    let mut decided = request(expired());
    decided.spec.decision = Some(crate::api::approval::Decision {
        verdict: crate::api::approval::Verdict::Approve,
        by: "bob".into(),
        groups: Vec::new(),
        comment: None,
        edits: None,
    });
    let mut pending = expired();
    pending["phase"] = json!("Pending");
    let cases = [
        ("expired and escalated", request(expired()), 60, true),
        ("a day later", request(expired()), 86_399, true),
        ("older than a day", request(expired()), 86_400, false),
        ("not escalated", without("escalatedAt"), 60, false),
        ("not issued by ledgerops", without("issuedFor"), 60, false),
        ("approved too late", decided, 60, false),
        ("pending", request(pending), 60, false),
        ("no status", request(json!(null)), 60, false),
    ];
    for (case, r, now, expected) in cases {
        assert_eq!(due(&r, at(now)), expected, "{case}");
    }
}

fn said(id: i64, author: &str, body: &str) -> IssueComment {
    IssueComment {
        id,
        author: author.into(),
        body: body.into(),
    }
}

#[test]
fn the_bots_own_marked_comment_is_the_record() {
    let body = comment(&request(expired()));
    let cases = [
        ("the bot's comment", vec![said(1, BOT, &body)], true),
        (
            "a copy by someone else",
            vec![said(1, "mallory", &body)],
            false,
        ),
        (
            "the marker not on the first line",
            vec![said(1, BOT, &format!("quote:\n{body}"))],
            false,
        ),
        (
            "another request's",
            vec![said(1, BOT, &body.replace("req-uid", "other-uid"))],
            false,
        ),
        ("nothing", vec![], false),
    ];
    for (case, comments, expected) in cases {
        assert_eq!(is_announced(&comments, BOT, "req-uid"), expected, "{case}");
    }
}

#[test]
fn the_comment_mentions_the_logins_and_escapes_everything_else() {
    let mut r = request(expired());
    r.spec.summary = "@everyone see [here](https://evil.example.com) <!-- x -->".into();
    r.spec.escalate_to.push("eve<script>".into());
    let body = comment(&r);
    let first = body.lines().next().unwrap();
    assert_eq!(first, "<!-- ledgerops:escalation request=req-uid -->");
    assert!(
        body.contains("@alice, @bob.smith, carol@\u{200B}example\\.com, eve&lt;script&gt;:"),
        "{body}"
    );
    assert!(body.contains("expired at 2026-09-21T"), "{body}");
    assert!(body.contains("`groceries`"), "{body}");
    assert!(
        !body.contains("@everyone"),
        "no mention from the summary: {body}"
    );
    assert!(
        !body.contains("](https"),
        "no link from the summary: {body}"
    );
    assert_eq!(
        body.matches("<!--").count(),
        1,
        "no marker from the summary"
    );
    r.spec.escalate_to.clear();
    assert!(comment(&r).contains("\nThe Budget's owners: "));
}
