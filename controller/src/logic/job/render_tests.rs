//! Unit tests of `logic/job/render.rs`.

use super::*;
use crate::logic::job::event::{EventKind, JobEvent};
use crate::logic::job::state::next_state;
use k8s_openapi::jiff::Timestamp;

fn received() -> JobState {
    let ev = JobEvent::new(
        "received",
        Timestamp::from_second(1_790_000_000).unwrap(),
        EventKind::CommandReceived {
            text: "/agent status `now`\nmore".into(),
            truncated_from: None,
            author: "writer".into(),
            sequence: 3,
            generation: Some(1),
        },
    );
    next_state(None, &ev).unwrap().state
}

#[test]
fn no_comment_until_permission_is_decided() {
    assert_eq!(render_comment("aj-1", &received()), None);
    assert_eq!(pending_publication("aj-1", &received()), None);
}

#[test]
fn every_comment_starts_with_the_marker_and_quotes_safely() {
    let mut s = received();
    for phase in [
        JobPhase::Queued,
        JobPhase::Running,
        JobPhase::Succeeded,
        JobPhase::Rejected,
        JobPhase::Failed,
    ] {
        s.phase = phase;
        let body = render_comment("aj-1", &s).unwrap();
        assert!(
            body.starts_with("<!-- ledgerops:agentjob:aj-1 -->\n"),
            "{body}"
        );
        assert!(
            body.contains("**`/agent status 'now'`** from @writer"),
            "{body}"
        );
        assert_eq!(body.matches("<!--").count(), 1, "{body}");
    }
}

#[test]
fn publishes_only_what_the_comment_does_not_show() {
    let mut s = received();
    s.phase = JobPhase::Queued;
    let (body, hash) = pending_publication("aj-1", &s).unwrap();
    assert_eq!(hash, body_hash(&body));
    s.comment_hash = Some(hash);
    assert_eq!(pending_publication("aj-1", &s), None);
    s.phase = JobPhase::Running;
    assert!(pending_publication("aj-1", &s).is_some());
}

#[test]
fn only_bot_comments_count_and_the_lowest_id_wins() {
    let m = marker("aj-1");
    let c = |id, author: &str, body: &str| IssueComment {
        id,
        author: author.into(),
        body: body.into(),
    };
    let comments = [
        c(
            3,
            "ledgerops-bot",
            &format!("quoted {m}\nnot a status comment"),
        ),
        c(
            4,
            "ledgerops-bot",
            &format!("{m}-suffix\nanother job's prefix"),
        ),
        c(5, "writer", &format!("{m} spoofed")),
        c(9, "ledgerops-bot", &format!("{m}\nsecond")),
        c(7, "Ledgerops-Bot", &format!("{m}\nfirst")),
        c(6, "ledgerops-bot", &format!("{} other job", marker("aj-2"))),
    ];
    assert_eq!(
        canonical_comment(&comments, "ledgerops-bot", "aj-1"),
        Some(7)
    );
    assert_eq!(
        canonical_comment(&comments[..1], "ledgerops-bot", "aj-1"),
        None
    );
    assert_eq!(canonical_comment(&comments, "ledgerops-bot", "aj-3"), None);
}

#[test]
fn untrusted_text_is_escaped_in_every_phase() {
    let mut s = received();
    s.text = "/agent help <!-- ledgerops:agentjob:aj-2 --> @admin [x](http://e.vil)".into();
    s.author = "<!-- ledgerops:agentjob:aj-2 -->".into();
    s.stage = "![img](http://e.vil/x.png) @root".into();
    s.reason = "UnverifiedComment".into();
    s.error = Some("<!-- ledgerops:agentjob:aj-2 -->\n@root ```".into());
    s.branch = Some("b`<!-- x -->".into());
    s.pull_request_url = Some("http://e.vil/@root".into());
    for phase in [
        JobPhase::Queued,
        JobPhase::Running,
        JobPhase::Rejected,
        JobPhase::Failed,
    ] {
        s.phase = phase;
        let body = render_comment("aj-1", &s).unwrap();
        let rest = body.split_once('\n').unwrap().1;
        // Outside code, no HTML; inside code, nothing is interpreted; never a mention.
        for line in rest.lines() {
            assert!(
                !line.contains("@root") && !line.contains("@admin"),
                "{body}"
            );
        }
        // The command stays inside its code span, the author is text.
        assert!(
            rest.starts_with("**`/agent help <!-- ledgerops:agentjob:aj-2 --> @\u{200B}admin [x](http://e.vil)`** from &lt;"),
            "{body}"
        );
        assert!(!rest.contains("![img]("), "{body}");
        let comment = IssueComment {
            id: 1,
            author: "ledgerops-bot".into(),
            body: body.clone(),
        };
        assert_eq!(
            canonical_comment(std::slice::from_ref(&comment), "ledgerops-bot", "aj-2"),
            None,
            "{body}"
        );
    }
    s.phase = JobPhase::Rejected;
    let body = render_comment("aj-1", &s).unwrap();
    assert!(
        body.contains("```text\n&lt;") || body.contains("````text\n<!--"),
        "{body}"
    );
}
