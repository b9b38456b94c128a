//! The Events ledgerops posts to a notification hub (`--events-address`), in the form Flux's
//! notification-controller accepts from the controllers it serves: the involved object, a
//! severity, the reason and message, and metadata naming the Budget and the ApprovalRequest.
//! Also when a post counts as delivered and how long to wait before trying again.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

/// The group every metadata key carries: the hub keeps only keys prefixed with the involved
/// object's group (Flux's `cleanupMetadata`).
const GROUP: &str = "ledgerops.dev";
/// Reasons a person's decision gives: told as news, not as something to act on, even where the
/// object's Event is a Warning (a rejected plan is settled, not broken).
const DECIDED: &[&str] = &["Rejected"];
/// Posts of one Event before it is dropped.
pub const ATTEMPTS: u32 = 5;
const FIRST_DELAY: Duration = Duration::from_millis(500);
const LONGEST_DELAY: Duration = Duration::from_secs(30);

/// Flux's two severities: `error` alerts subscribed to errors only, `info` everyone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Error,
}

/// `error` for what needs a person (a Warning Event: Diverged, Failed, PartiallyApplied,
/// Blocked, a Budget out of requests or unauthorized, the autopilot stopped, a request expired
/// unanswered); `info` for the rest (waiting, decided, written).
pub fn severity(warning: bool, reason: &str) -> Severity {
    if warning && !DECIDED.contains(&reason) {
        Severity::Error
    } else {
        Severity::Info
    }
}

/// The object an Event is about, as a Kubernetes ObjectReference.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Involved {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
}

/// One Event as the hub reads it (Flux's `event/v1beta1.Event`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HubEvent {
    pub involved_object: Involved,
    pub severity: Severity,
    /// RFC 3339, seconds.
    pub timestamp: String,
    pub message: String,
    pub reason: String,
    pub metadata: BTreeMap<String, String>,
    pub reporting_controller: String,
    pub reporting_instance: String,
}

/// What was published, and where.
pub struct Published<'a> {
    pub involved: Involved,
    pub warning: bool,
    pub reason: &'a str,
    pub note: &'a str,
    /// The object as JSON: its Budget and ApprovalRequest are read from it.
    pub object: &'a Value,
    pub instance: &'a str,
}

/// The Event to post for `p`, stamped `now`.
pub fn event(p: Published<'_>, now: Timestamp) -> HubEvent {
    HubEvent {
        metadata: metadata(&p.involved, p.object),
        severity: severity(p.warning, p.reason),
        timestamp: now.round(k8s_openapi::jiff::Unit::Second).map_or_else(
            |_| now.to_string(),
            |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        ),
        message: p.note.to_owned(),
        reason: p.reason.to_owned(),
        reporting_controller: "ledgerops".into(),
        reporting_instance: p.instance.to_owned(),
        involved_object: p.involved,
    }
}

/// `ledgerops.dev/budget` (`namespace/name`) and `ledgerops.dev/approvalRequest` (its name):
/// the Budget is the object itself or its `spec.budgetRef`; the request is the object itself or
/// its `status.approvalRequest` (a plan's).
fn metadata(involved: &Involved, object: &Value) -> BTreeMap<String, String> {
    let text = |path: &[&str]| {
        path.iter()
            .try_fold(object, |v, k| v.get(k))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let budget = match involved.kind.as_str() {
        "Budget" => Some(involved.name.clone()),
        _ => text(&["spec", "budgetRef", "name"]),
    };
    let request = match involved.kind.as_str() {
        "ApprovalRequest" => Some(involved.name.clone()),
        _ => text(&["status", "approvalRequest"]),
    };
    let mut out = BTreeMap::new();
    if let Some(b) = budget {
        out.insert(
            format!("{GROUP}/budget"),
            format!("{}/{b}", involved.namespace),
        );
    }
    if let Some(r) = request {
        out.insert(format!("{GROUP}/approvalRequest"), r);
    }
    out
}

/// What an answer from the hub means for one post.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Taken (2xx), or already taken: 429 is how Flux's hub refuses a duplicate within its
    /// rate-limit interval.
    Delivered,
    /// The hub is down, overloaded or unreachable (`None`): try again later.
    Retry,
    /// The hub read it and will never take it (any other 4xx): dropped at once.
    Refused,
}

/// `status`: the HTTP status the hub answered, `None` when none came.
pub fn delivery(status: Option<u16>) -> Delivery {
    match status {
        Some(200..=299 | 429) => Delivery::Delivered,
        Some(408) | Some(500..) | None => Delivery::Retry,
        Some(_) => Delivery::Refused,
    }
}

/// How long to wait before post number `attempt + 1` (attempt counts from 1): "full jitter",
/// a share of an exponential ceiling chosen by `draw` (any random number), so replicas or
/// bursts that failed together do not come back together.
pub fn retry_delay(attempt: u32, draw: u64) -> Duration {
    let ceiling = FIRST_DELAY
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(LONGEST_DELAY);
    let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(draw % (ceiling_ms + 1))
}

#[cfg(test)]
#[path = "hub_tests.rs"]
mod tests;
