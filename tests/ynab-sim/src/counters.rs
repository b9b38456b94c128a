//! Request counters for `/v1`, by endpoint (method + route template), status and token.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde::{Deserialize, Serialize};

use crate::auth::bearer_token;
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

fn now_ms() -> u64 {
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
    let came_ms = now_ms();
    {
        let mut counters = sim.counters.lock().unwrap();
        counters.total += 1;
        *counters.by_endpoint.entry(endpoint.clone()).or_default() += 1;
        let token = bearer_token(&req).unwrap_or_else(|| "-".to_string());
        *counters.by_token.entry(token).or_default() += 1;
    }
    let response = next.run(req).await;
    let mut counters = sim.counters.lock().unwrap();
    counters.record_status(response.status().as_str());
    if counters.timeline.len() < TIMELINE_MAX {
        counters.timeline.push(Seen {
            endpoint,
            came_ms,
            answered_ms: now_ms(),
        });
    }
    drop(counters);
    response
}
