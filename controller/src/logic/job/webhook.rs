//! Gitea webhook deliveries: signature check and conversion into a received command. Pure: the
//! endpoint persists what this returns and calls nothing else.

use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use sha2::Sha256;
use uuid::Uuid;

use crate::api::agent_job::CommentEvent;

/// Namespace of the UUIDv5 job names (a fixed random UUID: names must never change).
const JOB_NAMESPACE: Uuid = Uuid::from_u128(0x5d1c_6c3e_8f4b_4a57_9a2e_17c0_b3d9_4e21);

/// The longest command kept and run, in bytes (as the CRD allows): a longer comment is kept cut
/// to this, with its length, and refused rather than run.
pub const MAX_COMMAND: usize = 4096;

/// What is kept of a comment: at most [`MAX_COMMAND`] bytes, cut at a character boundary, and the
/// whole comment's length in bytes when it was cut.
pub fn kept_command(text: &str) -> (String, Option<i64>) {
    if text.len() <= MAX_COMMAND {
        return (text.to_owned(), None);
    }
    let mut end = MAX_COMMAND;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let length = i64::try_from(text.len()).unwrap_or(i64::MAX);
    (text[..end].to_owned(), Some(length))
}

/// Whether `signature` (hex, as in `X-Gitea-Signature`) is the HMAC-SHA256 of `body` under
/// `secret`. The comparison is constant-time.
pub fn signature_valid(secret: &[u8], body: &[u8], signature: &str) -> bool {
    let Ok(expected) = hex::decode(signature.trim()) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// The HMAC-SHA256 of `body` under `secret`, hex: what Gitea sends.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// A command as received, before anything checked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    pub delivery_id: String,
    pub event: CommentEvent,
    pub repository: String,
    pub issue_number: i64,
    pub comment_id: i64,
    pub author: String,
    pub command: String,
    /// The comment's length in bytes when it was longer than [`MAX_COMMAND`].
    pub truncated_from: Option<i64>,
}

impl Incoming {
    /// The de-duplication key: a comment is one command, however many deliveries bring it
    /// (Gitea gives a manual redelivery a new delivery id).
    pub fn dedup_key(&self) -> String {
        format!(
            "gitea-comment:{}:{}",
            self.repository.to_ascii_lowercase(),
            self.comment_id
        )
    }

    /// The AgentJob's name: UUIDv5 of the de-duplication key, so that creating it de-duplicates.
    pub fn job_name(&self) -> String {
        format!(
            "aj-{}",
            Uuid::new_v5(&JOB_NAMESPACE, self.dedup_key().as_bytes())
        )
    }
}

/// What to do with a delivery whose signature is valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Not a command: answer 204.
    Ignored(&'static str),
    /// A command to persist.
    Command(Incoming),
}

/// Why a delivery cannot be understood: answer 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("no X-Gitea-Delivery header")]
    NoDeliveryId,
    #[error("the body is not a comment payload: {0}")]
    Payload(String),
}

#[derive(Deserialize)]
struct Payload {
    action: String,
    issue: Issue,
    comment: Comment,
    repository: Repository,
    #[serde(default)]
    sender: Option<User>,
}

#[derive(Deserialize)]
struct Issue {
    number: i64,
}

#[derive(Deserialize)]
struct Comment {
    id: i64,
    body: String,
    user: User,
}

#[derive(Deserialize)]
struct Repository {
    full_name: String,
}

#[derive(Deserialize)]
struct User {
    login: String,
}

/// Converts a delivery. `event` is `X-Gitea-Event`, `event_type` is `X-Gitea-Event-Type` (it
/// tells issue comments from pull-request comments), `bot` the controller's own login.
pub fn classify(
    event: Option<&str>,
    event_type: Option<&str>,
    delivery_id: Option<&str>,
    body: &[u8],
    bot: &str,
) -> Result<Delivery, Malformed> {
    if event != Some("issue_comment") {
        return Ok(Delivery::Ignored("not an issue_comment event"));
    }
    let kind = match event_type.unwrap_or("issue_comment") {
        "issue_comment" => CommentEvent::IssueComment,
        "pull_request_comment" => CommentEvent::PullRequestComment,
        _ => return Ok(Delivery::Ignored("not a comment event type")),
    };
    let payload: Payload =
        serde_json::from_slice(body).map_err(|e| Malformed::Payload(e.to_string()))?;
    if payload.action != "created" {
        return Ok(Delivery::Ignored("not a created comment"));
    }
    let author = payload.comment.user.login;
    let sender = payload.sender.map(|s| s.login);
    if author.eq_ignore_ascii_case(bot) || sender.is_some_and(|s| s.eq_ignore_ascii_case(bot)) {
        return Ok(Delivery::Ignored("the bot's own comment"));
    }
    let text = payload.comment.body;
    if !text.trim_start().starts_with("/agent") {
        return Ok(Delivery::Ignored("not an /agent command"));
    }
    let delivery_id = delivery_id
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .ok_or(Malformed::NoDeliveryId)?;
    if delivery_id.len() > 128 {
        return Err(Malformed::Payload("X-Gitea-Delivery is too long".into()));
    }
    let repository = payload.repository.full_name;
    if repository.len() < 3 || !repository.contains('/') {
        return Err(Malformed::Payload(format!(
            "repository.full_name `{repository}` is not owner/name"
        )));
    }
    if payload.issue.number < 1 || payload.comment.id < 1 || author.is_empty() {
        return Err(Malformed::Payload(
            "issue number, comment id and author are required".into(),
        ));
    }
    let (command, truncated_from) = kept_command(&text);
    Ok(Delivery::Command(Incoming {
        delivery_id: delivery_id.to_owned(),
        event: kind,
        repository,
        issue_number: payload.issue.number,
        comment_id: payload.comment.id,
        author,
        command,
        truncated_from,
    }))
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
