//! Unit tests of `logic/approval/inbox_body.rs`.

use serde_json::json;

use super::*;
use crate::logic::approval::inbox::tests::request;

fn change(tx: &str, payee: &str, amount: &str, to: &str) -> serde_json::Value {
    json!({"transactionId": tx, "date": "2026-09-03", "amount": amount, "payee": payee,
           "fromCategory": "Dining Out", "toCategory": to})
}

/// The waiting request with a review: one exception, one question, two categories.
fn waiting() -> ApprovalRequest {
    let mut r = request("groceries-2", 0, &["alice"]);
    r.spec.changes = serde_json::from_value(json!([
        change("tx-1", "Bakery", "-4.20", "Groceries"),
        change(
            "tx-2",
            "@everyone [win](https://evil.example.com) <!-- x -->",
            "-120.00",
            "Groceries"
        ),
        change("tx-3", "Train", "-38.80", "Transport"),
    ]))
    .unwrap();
    r.spec.review = Some(
        serde_json::from_value(json!({
            "groups": [],
            "categories": [{"category": "Groceries", "count": 2, "total": "124.20"},
                           {"category": "Transport", "count": 1, "total": "38.80"}],
            "exceptions": [{"change": change("tx-2", "@everyone [win](https://evil.example.com) <!-- x -->", "-120.00", "Groceries"),
                            "why": "5× the payee's usual amount"}],
            "exceptionCount": 1,
            "questions": [{"change": change("tx-4", "Corner shop", "-9.99", "Groceries"),
                           "rules": ["corner-groceries", "corner-snacks"],
                           "categories": ["Groceries", "Snacks"]}],
        }))
        .unwrap(),
    );
    r
}

fn view(r: &ApprovalRequest, subject: Option<SubjectState>) -> IssueState {
    issue(&View {
        request: r,
        subject,
        assignees: vec!["bob".into()],
        decimal_digits: 2,
    })
}

#[test]
fn a_waiting_request_shows_the_review_first_and_the_words_to_answer_with() {
    let r = waiting();
    let i = view(&r, None);
    assert!(i.open);
    assert_eq!(i.assignees, ["bob"]);
    assert_eq!(
        i.title,
        "Decide: CategorizationPlan groceries: 3 change(s), 163.00 (Budget home)"
    );
    let body = &i.body;
    assert_eq!(
        body.lines().next(),
        Some("<!-- ledgerops:inbox subject=plan-uid -->")
    );
    assert!(
        body.contains(
            "**Waiting for a decision** on ApprovalRequest `groceries-2` until 2026-09-21 "
        ),
        "{body}"
    );
    assert!(body.contains("Asked: @bob."), "{body}");
    let order = [
        "Look at these first (1 of 1 listed)",
        "The rules disagree on",
        "By category",
        "The changes",
        "How to answer",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|s| body.find(s).unwrap_or_else(|| panic!("{s}: {body}")))
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "in order {order:?}: {body}"
    );
    assert!(body.contains("| `tx-4` | 2026\\-09\\-03 | Corner shop | \\-9\\.99 | Dining Out | Groceries or Snacks | `corner-groceries`, `corner-snacks` |"), "{body}");
    assert!(body.contains("| Groceries | 2 | 124\\.20 |"), "{body}");
    assert!(
        body.contains("- `/agent approve groceries-2` approves exactly this preview;"),
        "{body}"
    );
    assert!(
        body.contains("`/agent approve groceries-2 except tx-1, tx-2=Groceries`"),
        "{body}"
    );
    assert!(body.contains("`/agent reject groceries-2 <why>`"), "{body}");
    assert!(body.contains("Proposed by: `alice`"), "{body}");
}

#[test]
fn bank_text_stays_text() {
    let body = view(&waiting(), None).body;
    assert!(!body.contains("@everyone"), "no mention: {body}");
    assert!(!body.contains("](https"), "no link: {body}");
    assert_eq!(body.matches("<!--").count(), 1, "no second marker: {body}");
}

#[test]
fn a_long_change_shows_its_groups_instead_of_its_lines() {
    let mut r = waiting();
    r.spec.change_count = 300;
    r.spec.review.as_mut().unwrap().groups = serde_json::from_value(json!([
        {"payee": "Bakery", "category": "Groceries", "count": 120, "total": "500.00"},
        {"category": "Groceries", "count": 180, "total": "900.00"},
    ]))
    .unwrap();
    let body = view(&r, None).body;
    assert!(body.contains("### By payee"), "{body}");
    assert!(
        body.contains("| Bakery | Groceries | 120 | 500\\.00 |"),
        "{body}"
    );
    assert!(
        body.contains("| (other payees) | Groceries | 180 | 900\\.00 |"),
        "{body}"
    );
    assert!(!body.contains("### The changes"), "{body}");
}

fn decided(verdict: &str, phase: &str, comment: Option<&str>) -> ApprovalRequest {
    let mut r = waiting();
    r.spec.decision = Some(
        serde_json::from_value(json!({"verdict": verdict, "by": "gitea:bob", "comment": comment}))
            .unwrap(),
    );
    let status = r.status.as_mut().unwrap();
    status.phase = Some(serde_json::from_value(json!(phase)).unwrap());
    status.decided_at = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::from_second(1_790_000_030).unwrap(),
    ));
    r
}

#[test]
fn an_ended_request_closes_its_issue_with_the_outcome_on_top() {
    let applied = |written: bool| {
        let mut r = decided("Approve", "Applied", None);
        r.status.as_mut().unwrap().used = Some(
            serde_json::from_value(
                json!({"attemptId": "a", "startedAt": "2026-09-21T10:00:00Z", "written": written}),
            )
            .unwrap(),
        );
        r
    };
    let mut expired = waiting();
    expired.status.as_mut().unwrap().phase = Some(ApprovalPhase::Expired);
    let mut stale = waiting();
    stale.status.as_mut().unwrap().phase = Some(ApprovalPhase::Stale);
    let cases = [
        (
            "approved, not written yet",
            decided("Approve", "Approved", None),
            "Approved: ",
            "**Approved** by `gitea:bob` at 2026-09-21 ",
        ),
        (
            "approved before the controller saw it",
            decided("Approve", "Pending", None),
            "Approved: ",
            "**Approved** by `gitea:bob`",
        ),
        (
            "written",
            applied(true),
            "Approved and written: ",
            "and **written to YNAB**.",
        ),
        (
            "approved, the preview no longer held",
            applied(false),
            "Approved, not written: ",
            "but **nothing was written**",
        ),
        (
            "rejected",
            decided("Reject", "Rejected", Some("not @mallory's <b>call</b>")),
            "Rejected: ",
            "They said: not @\u{200B}mallory's &lt;b&gt;call&lt;/b&gt;",
        ),
        (
            "expired",
            expired,
            "Expired unanswered: ",
            "**Expired** at 2026-09-21 ",
        ),
        (
            "replaced by nothing",
            stale,
            "No longer asked: ",
            "**No longer asked**",
        ),
    ];
    for (case, r, title, says) in cases {
        let subject = SubjectState {
            phase: "Applied".into(),
            message: "3 of 3 change(s) written".into(),
        };
        let i = view(&r, Some(subject));
        assert!(!i.open, "{case}");
        assert!(i.assignees.is_empty(), "{case}");
        assert!(i.title.starts_with(title), "{case}: {}", i.title);
        assert!(i.body.contains(says), "{case}: {}", i.body);
        assert!(
            i.body.contains(
                "CategorizationPlan `groceries` is now **Applied**: 3 of 3 change\\(s\\) written"
            ),
            "{case}: {}",
            i.body
        );
        assert!(!i.body.contains("How to answer"), "{case}");
        assert!(
            i.body.contains("### By category"),
            "the review stays, for the record: {case}"
        );
    }
}

#[test]
fn nobody_to_assign_says_who_can_still_decide() {
    let r = waiting();
    let i = issue(&View {
        request: &r,
        subject: None,
        assignees: vec![],
        decimal_digits: 2,
    });
    assert!(
        i.body
            .contains("Nobody mapped in the Budget's `approval.giteaUsers` may decide it"),
        "{}",
        i.body
    );
}
