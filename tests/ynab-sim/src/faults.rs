//! Fault injection: answer the next N (matching) requests with a status, add latency to every
//! request, or apply the next N (matching) writes and then drop the connection unanswered.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::SimError;
use crate::counters::DROPPED;
use crate::server::ConnectionKill;
use crate::sim::Sim;

/// Which requests a fault applies to; an unset field matches anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// A concrete path (`/v1/plans/…/transactions`) or a route template
    /// (`/v1/plans/{plan_id}/transactions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Text the request body must contain, such as one transaction's id: a bulk update that
    /// carries that record is refused, one without it goes through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
}

/// What a fault is matched against, taken before the request is handed on.
struct Seen {
    method: Method,
    path: String,
    template: Option<String>,
    body: Bytes,
}

impl Seen {
    fn of(req: &Request, body: Bytes) -> Seen {
        Seen {
            method: req.method().clone(),
            path: req.uri().path().to_string(),
            template: req
                .extensions()
                .get::<MatchedPath>()
                .map(|m| m.as_str().to_string()),
            body,
        }
    }
}

impl RequestMatch {
    fn matches(&self, seen: &Seen) -> bool {
        let method_ok = self
            .method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(seen.method.as_str()));
        let path_ok = self
            .path
            .as_deref()
            .is_none_or(|p| p == seen.path || Some(p) == seen.template.as_deref());
        let body_ok = self.body_contains.as_deref().is_none_or(|text| {
            seen.body
                .windows(text.len().max(1))
                .any(|w| w == text.as_bytes())
        });
        method_ok && path_ok && body_ok
    }
}

/// The largest body the simulator reads (a bulk update of 1,000 transactions is far smaller).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Answer `count` matching requests with `status` (and YNAB's error body for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusFault {
    pub status: u16,
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(flatten)]
    pub only: RequestMatch,
}

/// Apply `count` matching successful writes, then drop the connection without answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropFault {
    pub count: u32,
    /// Keep the connection open this long after the write landed before dropping it: time for a
    /// test to kill the client while the write is in flight from its point of view.
    #[serde(default)]
    pub hold_ms: u64,
    #[serde(flatten)]
    pub only: RequestMatch,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Faults {
    pub statuses: Vec<StatusFault>,
    pub drops: Vec<DropFault>,
    pub latency_ms: u64,
}

/// Takes one use of the first fault in `list` that matches, dropping used-up ones.
fn take<T>(
    list: &mut Vec<T>,
    count: impl Fn(&mut T) -> &mut u32,
    hit: impl Fn(&T) -> bool,
) -> Option<T>
where
    T: Clone,
{
    let pos = list.iter().position(&hit)?;
    let left = count(&mut list[pos]);
    *left = left.saturating_sub(1);
    let taken = list[pos].clone();
    if *count(&mut list[pos]) == 0 {
        list.remove(pos);
    }
    Some(taken)
}

fn is_write(method: &Method) -> bool {
    [Method::POST, Method::PUT, Method::PATCH, Method::DELETE].contains(method)
}

pub async fn layer(
    State(sim): State<Arc<Sim>>,
    req: Request,
    next: Next,
) -> Result<Response, SimError> {
    let latency = sim.faults.lock().unwrap().latency_ms;
    if latency > 0 {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    // The body is read once so a fault can look into it, then handed on unchanged.
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|e| SimError::BadRequest(format!("request body: {e}")))?;
    let req = Request::from_parts(parts, Body::from(bytes.clone()));
    let seen = Seen::of(&req, bytes);
    let injected = take(
        &mut sim.faults.lock().unwrap().statuses,
        |f| &mut f.count,
        |f| f.only.matches(&seen),
    );
    if let Some(fault) = injected {
        let detail = fault
            .detail
            .unwrap_or_else(|| format!("injected fault: status {}", fault.status));
        return Err(SimError::Injected {
            status: fault.status,
            detail,
        });
    }
    let kill = req.extensions().get::<ConnectionKill>().cloned();
    let response = next.run(req).await;
    if !(is_write(&seen.method) && response.status().is_success()) {
        return Ok(response);
    }
    let drop = take(
        &mut sim.faults.lock().unwrap().drops,
        |f| &mut f.count,
        |f| f.only.matches(&seen),
    );
    match (drop, kill) {
        (Some(fault), Some(kill)) => {
            sim.counters.lock().unwrap().record_status(DROPPED);
            tokio::time::sleep(Duration::from_millis(fault.hold_ms)).await;
            kill.fire();
            // Never answer: the connection task closes the socket once it sees the kill.
            let never = std::future::pending::<std::convert::Infallible>().await;
            match never {}
        }
        _ => Ok(response),
    }
}
