//! The job's one status comment: its body, the hidden marker that finds it again, and which of
//! several marked comments is the real one. Every piece of text that did not come from
//! ledgerops itself (the command line, the author, a stage or an error that may hold names) is
//! escaped (see [`super::escape`]); a command's own result is Markdown ledgerops built, with its
//! untrusted parts escaped where it was built.

use sha2::{Digest, Sha256};

use super::escape;
use super::state::JobState;
use crate::api::agent_job::JobPhase;

/// The hidden marker of `job`'s status comment. It is a correlation id, not a proof: anyone can
/// copy it, so only comments by the bot count (see [`canonical_comment`]).
pub fn marker(job: &str) -> String {
    format!("<!-- ledgerops:agentjob:{job} -->")
}

/// The status comment for `state`, or None while the job is only received (the first comment
/// appears once permission is decided).
pub fn render_comment(job: &str, state: &JobState) -> Option<String> {
    let head = format!(
        "**{}** from {}",
        quote_command(&state.text),
        escape::mention(&state.author)
    );
    let body = match state.phase {
        JobPhase::Received => return None,
        JobPhase::Queued => format!(
            "{head}: queued as #{}, waiting for its turn.",
            state.sequence
        ),
        JobPhase::Running => format!("{head}: running ({}).", escape::text(&state.stage)),
        JobPhase::Succeeded => format!(
            "{head}: done.\n\n{}",
            state.result.as_deref().unwrap_or_default()
        ),
        JobPhase::Rejected => {
            let error = state.error.as_deref().unwrap_or_default();
            // These messages are ledgerops' own Markdown with the user's parts escaped; the
            // others (Gitea's answers, names from a claim) are shown as literal text.
            let error = if MARKDOWN_REASONS.contains(&state.reason.as_str()) {
                error.to_owned()
            } else {
                escape::block(error)
            };
            format!(
                "{head}: rejected ({}).\n\n{error}{}",
                escape::text(&state.reason),
                left_behind(state)
            )
        }
        JobPhase::Failed => format!(
            "{head}: failed ({}).\n\n{}{}",
            escape::text(&state.reason),
            escape::block(state.error.as_deref().unwrap_or_default()),
            left_behind(state)
        ),
    };
    Some(format!("{}\n{body}", marker(job)))
}

/// What a job that did not succeed left in Gitea: its cleanup's note (ledgerops' Markdown,
/// names in code spans), or until then the branch and pull request it made.
fn left_behind(state: &JobState) -> String {
    if let Some(note) = &state.cleanup {
        return format!("\n\n{note}");
    }
    let mut text = String::new();
    if let Some(branch) = &state.branch {
        text.push_str(&format!(
            "\n\nIt had created the branch {}.",
            escape::code(branch)
        ));
    }
    if let Some(url) = &state.pull_request_url {
        text.push_str(&format!("\n\nIt had opened {}.", escape::code(url)));
    }
    text
}

/// Rejection reasons whose message is ledgerops' Markdown (user parts escaped when built).
const MARKDOWN_REASONS: &[&str] = &["InvalidCommand", "PermissionDenied", "PreconditionFailed"];

/// The first line of the command, short, as a code span: it is untrusted text.
fn quote_command(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    escape::code(&super::state::truncate(line, 80))
}

/// A short stable hash of a comment body.
pub fn body_hash(body: &str) -> String {
    let digest = Sha256::digest(body.as_bytes());
    hex::encode(&digest[..12])
}

/// The body to publish when the comment does not show `state` yet.
pub fn pending_publication(job: &str, state: &JobState) -> Option<(String, String)> {
    let body = render_comment(job, state)?;
    let hash = body_hash(&body);
    (state.comment_hash.as_deref() != Some(hash.as_str())).then_some((body, hash))
}

/// A comment on the issue, as far as finding the status comment is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueComment {
    pub id: i64,
    pub author: String,
    pub body: String,
}

/// Whether `body` is a status comment of `job`: its first line is exactly the marker (every
/// status comment starts so; the marker quoted anywhere else does not count).
pub fn is_status_comment(body: &str, job: &str) -> bool {
    body.lines().next().map(str::trim_end) == Some(marker(job).as_str())
}

/// The status comment of `job` among `comments`: one that starts with the marker and was
/// written by `bot`. Among several, the lowest id wins; copies by anyone else are ignored.
pub fn canonical_comment(comments: &[IssueComment], bot: &str, job: &str) -> Option<i64> {
    comments
        .iter()
        .filter(|c| c.author.eq_ignore_ascii_case(bot) && is_status_comment(&c.body, job))
        .map(|c| c.id)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::job::state::{EventKind, JobEvent, next_state};
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
}
