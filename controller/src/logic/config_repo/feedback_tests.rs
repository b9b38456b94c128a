//! Unit tests of `logic/config_repo/feedback.rs`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::api::approval::{ApprovalRequestSpec, Subject, SubjectKind};
use crate::api::common::{Amount, CategoryChange, LocalRef};

const BOT: &str = "ledgerops-bot";

fn plan(status: serde_json::Value) -> CategorizationPlan {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": "groceries"},
        "spec": {"budgetRef": {"name": "home"}, "assignments": []},
        "status": status,
    }))
    .unwrap()
}

fn change(id: &str, payee: &str) -> CategoryChange {
    CategoryChange {
        transaction_id: id.into(),
        date: "2026-09-01".into(),
        amount: Amount("-12.340".into()),
        payee: Some(payee.into()),
        from_category_id: None,
        from_category: None,
        to_category_id: Some("cat-1".into()),
        to_category: Some("Groceries".into()),
    }
}

fn request(name: &str, hash: &str, changes: Vec<CategoryChange>, count: u32) -> ApprovalRequest {
    ApprovalRequest::new(
        name,
        ApprovalRequestSpec {
            budget_ref: LocalRef {
                name: "home".into(),
            },
            subject: Subject {
                kind: SubjectKind::CategorizationPlan,
                name: "groceries".into(),
            },
            preview_hash: hash.into(),
            summary: "s".into(),
            reason: "r".into(),
            changes,
            change_count: count,
            expires_at: Time(Timestamp::from_second(1_800_000_000).unwrap()),
            escalate_to: vec![],
            proposed_by: Vec::new(),
            four_eyes: false,
            decision: None,
            review: None,
        },
    )
}

fn comment(id: i64, author: &str, body: &str) -> IssueComment {
    IssueComment {
        id,
        author: author.into(),
        body: body.into(),
    }
}

#[test]
fn a_clone_url_names_a_repository_only_on_the_configured_gitea() {
    let gitea = "http://127.0.0.1:3000";
    let cases = [
        (
            "http://127.0.0.1:3000/household/ledger.git",
            Some("household/ledger"),
        ),
        (
            "http://127.0.0.1:3000/household/ledger",
            Some("household/ledger"),
        ),
        (
            "http://127.0.0.1:3000/household/ledger/",
            Some("household/ledger"),
        ),
        ("http://127.0.0.1:3001/household/ledger.git", None),
        ("https://127.0.0.1:3000/household/ledger.git", None),
        ("http://other:3000/household/ledger.git", None),
        ("http://127.0.0.1:3000/household", None),
        ("http://127.0.0.1:3000/a/b/c.git", None),
        ("http://127.0.0.1:3000/household/ledger.git?x=1", None),
        ("http://127.0.0.1:3000/household/%2e%2e", None),
        ("file:///srv/household/ledger.git", None),
        ("not a url", None),
    ];
    for (url, want) in cases {
        assert_eq!(gitea_repository(url, gitea).as_deref(), want, "{url}");
    }
    // Gitea served under a sub-path, and the default port spelled out or not.
    assert_eq!(
        gitea_repository(
            "https://git.example/gitea/h/l.git",
            "https://git.example/gitea/"
        )
        .as_deref(),
        Some("h/l")
    );
    assert_eq!(
        gitea_repository("https://git.example:443/h/l.git", "https://git.example").as_deref(),
        Some("h/l")
    );
    assert_eq!(
        gitea_repository(
            "https://git.example/other/h/l.git",
            "https://git.example/gitea"
        ),
        None
    );
}

#[test]
fn each_plan_phase_has_one_commit_state() {
    use CommitState::*;
    let ready = |message: &str| {
        json!([{"type": "Ready", "status": "False", "reason": "R",
        "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}])
    };
    let cases = [
        ("Pending", None, ""),
        (
            "AwaitingApproval",
            Some(Pending),
            "3 change(s) await approval",
        ),
        ("ReadOnly", Some(Pending), "writes are enabled"),
        ("Applying", Some(Pending), "writing 3"),
        ("Applied", Some(Success), "applied 3"),
        ("NothingToDo", Some(Success), "nothing to change"),
        ("Rejected", Some(Failure), "rejected: because"),
        ("Expired", Some(Failure), "nobody decided"),
        ("Invalid", Some(Failure), "Invalid: because"),
        ("Blocked", Some(Failure), "Blocked: because"),
        ("Failed", Some(Failure), "Failed: because"),
        (
            "PartiallyApplied",
            Some(Failure),
            "PartiallyApplied: because",
        ),
    ];
    for (phase, state, text) in cases {
        let p = plan(json!({
            "phase": phase, "conditions": ready("because"), "approvalRequest": "groceries-1",
            "preview": {"hash": "h", "serverKnowledge": 1, "changeCount": 3, "unchangedCount": 0},
        }));
        let report = commit_report(&p);
        assert_eq!(report.as_ref().map(|r| r.state), state, "{phase}");
        if let Some(r) = report {
            assert!(r.description.contains(text), "{phase}: {}", r.description);
        }
    }
    assert_eq!(commit_report(&plan(json!({}))), None, "no phase yet");
}

#[test]
fn a_long_reason_is_cut_to_one_short_line() {
    let long = "x".repeat(1000);
    let p = plan(
        json!({"phase": "Failed", "conditions": [{"type": "Ready", "status": "False",
        "reason": "R", "message": long, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}),
    );
    let r = commit_report(&p).unwrap();
    assert_eq!(r.description.chars().count(), DESCRIPTION_MAX);
    assert!(r.is_shown_by("failure", &r.description));
    assert!(!r.is_shown_by("pending", &r.description));
    assert!(!r.is_shown_by("failure", "older text"));
}

#[test]
fn the_preview_comment_names_what_an_approval_covers_and_escapes_ynab_text() {
    let r = request(
        "groceries-1",
        "abc123",
        vec![
            change("tx-1", "Bakery"),
            change("tx-2", "<b>@alice</b> | x"),
        ],
        5,
    );
    let body = preview_comment("groceries", &r, "0123456789abcdef0123");
    let first = body.lines().next().unwrap();
    assert_eq!(
        first,
        "<!-- ledgerops:preview plan=groceries request=groceries-1 hash=abc123 -->"
    );
    assert!(body.contains("5 change(s) await approval"), "{body}");
    assert!(body.contains("0123456789ab"), "{body}");
    assert!(!body.contains("0123456789abc"), "short commit: {body}");
    assert!(
        body.contains("| `tx-1` | 2026\\-09\\-01 | Bakery | \\-12\\.340 |"),
        "{body}"
    );
    assert!(!body.contains("<b>"), "{body}");
    assert!(!body.contains("@alice"), "a mention would notify: {body}");
    assert!(body.contains("…and 3 more"), "{body}");
    assert!(body.contains("/agent approve"), "{body}");
    // The comment it renders is found again as this request's preview.
    let comments = [comment(7, BOT, &body)];
    assert!(is_shown(&comments, BOT, "groceries-1"));
    assert!(!is_shown(&comments, BOT, "groceries-2"));
    assert!(!is_shown(&comments, "alice", "groceries-1"));
}

#[test]
fn an_approval_answers_the_last_preview_the_bot_showed_before_it() {
    let shown = |plan: &str, request: &str, hash: &str| Shown {
        plan: plan.into(),
        request: request.into(),
        hash: hash.into(),
    };
    let m = |s: &Shown| marker(s);
    let a1 = shown("groceries", "groceries-1", "h1");
    let a2 = shown("groceries", "groceries-2", "h2");
    let b1 = shown("rent", "rent-1", "h3");
    let forged = shown("groceries", "groceries-9", "h9");
    let comments = [
        comment(10, BOT, &format!("{}\ntable", m(&a1))),
        comment(11, "alice", &format!("{}\nforged", m(&forged))),
        comment(12, BOT, &format!("{}\ntable", m(&b1))),
        comment(13, BOT, "a job's status comment"),
        comment(20, BOT, &format!("{}\ntable", m(&a2))),
    ];
    // Before the newer preview: the older one (the person saw only that).
    assert_eq!(shown_before(&comments, BOT, 15), [a1.clone(), b1.clone()]);
    // After it: the newer one for that plan.
    assert_eq!(shown_before(&comments, BOT, 21), [a2, b1]);
    // Nothing was shown before the first preview.
    assert_eq!(shown_before(&comments, BOT, 10), []);
    // Only the bot's comments count, whoever else copies a marker.
    assert_eq!(shown_before(&comments, "alice", 100), [forged]);
}

#[test]
fn only_an_exact_marker_line_is_a_preview() {
    let cases = [
        (
            "<!-- ledgerops:preview plan=p request=r hash=h -->\nx",
            true,
        ),
        ("<!-- ledgerops:preview plan=p request=r hash=h -->", true),
        (
            "x\n<!-- ledgerops:preview plan=p request=r hash=h -->",
            false,
        ),
        (" <!-- ledgerops:preview plan=p request=r hash=h -->", false),
        ("<!-- ledgerops:preview plan=p request=r -->", false),
        (
            "<!-- ledgerops:preview plan=p request=r hash=h extra=1 -->",
            false,
        ),
        ("<!-- ledgerops:preview request=r plan=p hash=h -->", false),
        (
            "<!-- ledgerops:preview plan=p request=r hash=h<b> -->",
            false,
        ),
        ("<!-- ledgerops:preview plan= request=r hash=h -->", false),
    ];
    for (body, want) in cases {
        assert_eq!(parse(body).is_some(), want, "{body}");
    }
}

#[test]
fn a_context_is_per_plan() {
    assert_eq!(context("groceries"), "ledgerops/plan/groceries");
}

#[test]
fn an_approval_holds_only_for_the_request_plan_and_preview_shown() {
    let shown = Shown {
        plan: "groceries".into(),
        request: "groceries-1".into(),
        hash: "h1".into(),
    };
    assert!(still_holds(
        &shown,
        &request("groceries-1", "h1", vec![], 0)
    ));
    assert!(
        !still_holds(&shown, &request("groceries-1", "h2", vec![], 0)),
        "new preview"
    );
    assert!(
        !still_holds(&shown, &request("groceries-2", "h1", vec![], 0)),
        "other request"
    );
    let mut other_plan = request("groceries-1", "h1", vec![], 0);
    other_plan.spec.subject.name = "rent".into();
    assert!(!still_holds(&shown, &other_plan), "other plan");
    let mut transaction = request("groceries-1", "h1", vec![], 0);
    transaction.spec.subject.kind = SubjectKind::Transaction;
    assert!(!still_holds(&shown, &transaction), "other kind");
}

#[test]
fn the_edits_are_told_once_when_their_write_started() {
    let decision = json!({"verdict": "Approve", "by": "gitea:carol", "previewHash": "h",
        "request": "sept-1", "edits": {"drop": ["tx-1"]}});
    let cases = [
        ("Applied", decision.clone(), true),
        ("Applying", decision.clone(), true),
        ("AwaitingApproval", decision.clone(), false),
        (
            "Applied",
            json!({"verdict": "Approve", "by": "bob", "previewHash": "h", "request": "sept-1"}),
            false,
        ),
        (
            "Applied",
            json!({"verdict": "Approve", "by": "bob", "previewHash": "h", "request": "sept-1", "edits": {}}),
            false,
        ),
    ];
    for (phase, decision, told) in cases {
        let p = plan(json!({"phase": phase, "decision": decision}));
        assert_eq!(edited(&p).is_some(), told, "{phase} {decision}");
    }
    let p = plan(json!({"phase": "Applied", "decision": decision}));
    let (request, record) = edited(&p).unwrap();
    let body = edits_comment("september", request, record, "dropped tx-1 | `x`");
    assert!(
        body.starts_with("<!-- ledgerops:edits request=sept-1 -->\n"),
        "{body}"
    );
    assert!(
        body.contains("approved by `gitea:carol` with edits: dropped tx"),
        "{body}"
    );
    assert!(
        body.contains("\\|") && !body.contains(" `x`"),
        "the summary is escaped: {body}"
    );
    let bot = "ledgerops-bot";
    assert!(edits_shown(&[comment(5, bot, &body)], bot, "sept-1"));
    assert!(
        !edits_shown(&[comment(5, "mallory", &body)], bot, "sept-1"),
        "only the bot's"
    );
    assert!(!edits_shown(&[comment(5, bot, &body)], bot, "sept-2"));
}
