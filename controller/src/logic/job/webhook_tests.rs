//! Unit tests of `logic/job/webhook.rs`.

use super::*;
use serde_json::json;

fn payload(action: &str, login: &str, body: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "action": action,
        "issue": {"number": 4, "pull_request": null},
        "comment": {"id": 77, "body": body, "user": {"login": login}},
        "repository": {"full_name": "household/ledger-config"},
        "sender": {"login": login},
        "is_pull": false,
    }))
    .unwrap()
}

fn run(
    event: &str,
    event_type: &str,
    delivery: Option<&str>,
    body: &[u8],
) -> Result<Delivery, Malformed> {
    classify(
        Some(event),
        Some(event_type),
        delivery,
        body,
        "ledgerops-bot",
    )
}

#[test]
fn signature_round_trip_and_forgery() {
    let sig = sign(b"s3cr3t", b"{}");
    assert!(signature_valid(b"s3cr3t", b"{}", &sig));
    assert!(!signature_valid(b"s3cr3t", b"{ }", &sig));
    assert!(!signature_valid(b"other", b"{}", &sig));
    assert!(!signature_valid(b"s3cr3t", b"{}", "not hex"));
    assert!(!signature_valid(b"s3cr3t", b"{}", ""));
}

#[test]
fn converts_issue_and_pull_request_commands() {
    let body = payload("created", "writer", "/agent status\nplease");
    let Delivery::Command(c) = run("issue_comment", "issue_comment", Some("d-1"), &body).unwrap()
    else {
        panic!("not a command");
    };
    assert_eq!(c.event, CommentEvent::IssueComment);
    assert_eq!(c.command, "/agent status\nplease");
    assert_eq!((c.issue_number, c.comment_id), (4, 77));
    assert_eq!(c.author, "writer");
    let Delivery::Command(pr) =
        run("issue_comment", "pull_request_comment", Some("d-2"), &body).unwrap()
    else {
        panic!("not a command");
    };
    assert_eq!(pr.event, CommentEvent::PullRequestComment);
    // A redelivery (new delivery id) names the same job.
    assert_eq!(c.job_name(), pr.job_name());
    assert!(c.job_name().starts_with("aj-") && c.job_name().len() == 39);
}

#[test]
fn ignores_what_is_not_a_new_command() {
    let cases = [
        (
            "push",
            "push",
            payload("created", "writer", "/agent status"),
        ),
        (
            "issue_comment",
            "issue_comment",
            payload("edited", "writer", "/agent status"),
        ),
        (
            "issue_comment",
            "issue_comment",
            payload("deleted", "writer", "/agent status"),
        ),
        (
            "issue_comment",
            "issue_comment",
            payload("created", "ledgerops-bot", "/agent status"),
        ),
        (
            "issue_comment",
            "issue_comment",
            payload("created", "writer", "nice, thanks"),
        ),
        (
            "issue_comment",
            "pull_request_review_comment",
            payload("created", "writer", "/agent status"),
        ),
    ];
    for (event, event_type, body) in cases {
        assert!(
            matches!(
                run(event, event_type, Some("d"), &body),
                Ok(Delivery::Ignored(_))
            ),
            "{event} {event_type}"
        );
    }
}

#[test]
fn long_commands_are_kept_cut_with_their_length() {
    let at_limit = format!("/agent {}", "x".repeat(MAX_COMMAND - 7));
    let over = format!("{at_limit}y");
    // A 3-byte character across the limit is not split.
    let wide = format!("/agent {}€", "x".repeat(MAX_COMMAND - 8));
    let cases = [
        ("/agent status", "/agent status".to_owned(), None),
        (at_limit.as_str(), at_limit.clone(), None),
        (
            over.as_str(),
            at_limit.clone(),
            Some(MAX_COMMAND as i64 + 1),
        ),
        (
            wide.as_str(),
            wide[..MAX_COMMAND - 1].to_owned(),
            Some(MAX_COMMAND as i64 + 2),
        ),
    ];
    for (text, kept, length) in cases {
        assert_eq!(kept_command(text), (kept, length), "{} bytes", text.len());
    }
    let body = payload("created", "writer", &over);
    let Delivery::Command(c) = run("issue_comment", "issue_comment", Some("d-1"), &body).unwrap()
    else {
        panic!("not a command");
    };
    assert_eq!(c.command.len(), MAX_COMMAND);
    assert_eq!(c.truncated_from, Some(MAX_COMMAND as i64 + 1));
}

#[test]
fn malformed_deliveries() {
    let body = payload("created", "writer", "/agent status");
    assert_eq!(
        run("issue_comment", "issue_comment", None, &body),
        Err(Malformed::NoDeliveryId)
    );
    assert_eq!(
        run("issue_comment", "issue_comment", Some(" "), &body),
        Err(Malformed::NoDeliveryId)
    );
    assert!(matches!(
        run("issue_comment", "issue_comment", Some("d"), b"{not json"),
        Err(Malformed::Payload(_))
    ));
    assert!(matches!(
        run(
            "issue_comment",
            "issue_comment",
            Some("d"),
            br#"{"action":"created"}"#
        ),
        Err(Malformed::Payload(_))
    ));
}
