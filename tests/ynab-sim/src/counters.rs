//! Request counters for `/v1`, by endpoint (method + route template), status and token.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::auth::bearer_token;
use crate::journal::Event;
use crate::legacy::Legacy;
use crate::sim::Sim;

/// Status key for a write whose connection was dropped on purpose.
pub const DROPPED: &str = "dropped";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub total: u64,
    /// e.g. `PATCH /v1/plans/{plan_id}/transactions`.
    pub by_endpoint: BTreeMap<String, u64>,
    /// e.g. `200`, `429`, `dropped`.
    pub by_status: BTreeMap<String, u64>,
    /// By bearer token; `-` for requests without one.
    pub by_token: BTreeMap<String, u64>,
    /// When each request came and was answered, oldest first (the first [`TIMELINE_MAX`]):
    /// how far apart a read and the writes decided on it were.
    #[serde(default)]
    pub timeline: Vec<Seen>,
}

/// The most requests [`Counters::timeline`] keeps.
pub const TIMELINE_MAX: usize = 10_000;

/// One request as it was seen: its endpoint, and when it came and was answered (milliseconds
/// since the Unix epoch, by the wall clock, not the simulated one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub endpoint: String,
    pub came_ms: u64,
    pub answered_ms: u64,
}

/// Wall-clock milliseconds since the Unix epoch: the journal's clock, which a checker compares
/// its own records with.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Counters {
    pub fn endpoint(&self, key: &str) -> u64 {
        self.by_endpoint.get(key).copied().unwrap_or(0)
    }

    /// Every request that could change something: POST, PUT, PATCH and DELETE, on any endpoint.
    pub fn writes(&self) -> u64 {
        self.by_endpoint
            .iter()
            .filter(|(endpoint, _)| {
                ["POST ", "PUT ", "PATCH ", "DELETE "]
                    .iter()
                    .any(|m| endpoint.starts_with(m))
            })
            .map(|(_, n)| n)
            .sum()
    }

    pub fn status(&self, key: &str) -> u64 {
        self.by_status.get(key).copied().unwrap_or(0)
    }

    pub fn record_status(&mut self, status: &str) {
        *self.by_status.entry(status.to_string()).or_default() += 1;
    }
}

/// The route template a request matched, spelled as the client called it.
pub fn endpoint_of(req: &Request) -> String {
    let template = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("(unmatched)", |m| m.as_str());
    let template = if req.extensions().get::<Legacy>().is_some() {
        Legacy::spell(template)
    } else {
        template.to_string()
    };
    format!("{} {}", req.method(), template)
}

pub async fn layer(State(sim): State<Arc<Sim>>, req: Request, next: Next) -> Response {
    let endpoint = endpoint_of(&req);
    let token = bearer_token(&req).unwrap_or_else(|| "-".to_string());
    {
        let mut counters = sim.counters.lock().unwrap();
        counters.total += 1;
        *counters.by_endpoint.entry(endpoint.clone()).or_default() += 1;
        *counters.by_token.entry(token.clone()).or_default() += 1;
    }
    let mut journaled = Journaled {
        knowledge: plan_of(req.uri().path()).and_then(|id| sim.knowledge(id)),
        sim: sim.clone(),
        endpoint,
        token,
        came_ms: now_ms(),
        status: None,
    };
    let response = next.run(req).await;
    let status = response.status().as_str().to_string();
    let mut counters = sim.counters.lock().unwrap();
    counters.record_status(&status);
    if counters.timeline.len() < TIMELINE_MAX {
        counters.timeline.push(Seen {
            endpoint: journaled.endpoint.clone(),
            came_ms: journaled.came_ms,
            answered_ms: now_ms(),
        });
    }
    drop(counters);
    journaled.status = Some(status);
    response
}

/// A request on its way: journaled when it is answered, or when its connection is dropped on
/// purpose and the request never finishes (status `dropped`).
struct Journaled {
    sim: Arc<Sim>,
    endpoint: String,
    token: String,
    came_ms: u64,
    knowledge: Option<i64>,
    status: Option<String>,
}

impl Drop for Journaled {
    fn drop(&mut self) {
        let answered_ms = now_ms();
        let event = Event::Request {
            endpoint: std::mem::take(&mut self.endpoint),
            token: std::mem::take(&mut self.token),
            status: self.status.take().unwrap_or_else(|| DROPPED.to_string()),
            came_ms: self.came_ms,
            knowledge: self.knowledge,
        };
        if let Ok(mut journal) = self.sim.journal.lock() {
            journal.record(answered_ms, event);
        }
    }
}

/// The plan id of a `/v1/plans/{plan_id}/…` (or legacy `/budgets/…`) path.
fn plan_of(path: &str) -> Option<&str> {
    let mut parts = path.trim_start_matches('/').split('/');
    parts.find(|p| *p == "plans" || *p == "budgets")?;
    parts.next().filter(|id| !id.is_empty())
}
