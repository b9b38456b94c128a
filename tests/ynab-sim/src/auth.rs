//! Bearer-token authentication (401) and the per-token rolling-hour limit (429).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;

use crate::SimError;
use crate::sim::Sim;

/// The token from `Authorization: Bearer …`, or from `?access_token=` as YNAB also accepts.
pub fn bearer_token(req: &Request) -> Option<String> {
    let header = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    header.or_else(|| {
        req.uri().query().and_then(|q| {
            q.split('&')
                .find_map(|pair| pair.strip_prefix("access_token="))
                .map(str::to_string)
        })
    })
}

pub async fn layer(
    State(sim): State<Arc<Sim>>,
    req: Request,
    next: Next,
) -> Result<Response, SimError> {
    let token = bearer_token(&req)
        .filter(|t| sim.knows_token(t))
        .ok_or(SimError::NotAuthorized)?;
    let now = sim.clock.now_seconds();
    sim.limiter.lock().unwrap().check(&token, now)?;
    Ok(next.run(req).await)
}
