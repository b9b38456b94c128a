//! The controller's HTTP endpoints: `/healthz`, `/readyz` and `/metrics`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

/// What the endpoints read.
#[derive(Clone)]
pub struct Probe {
    pub metrics: Arc<Metrics>,
    /// Set once the controllers run: the API server answered and the CRDs are installed.
    pub ready: Arc<AtomicBool>,
}

/// The router for the endpoints (the Gitea webhook has a listener of its own: `crate::webhook`).
pub fn router(probe: Probe) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(probe)
}

async fn readyz(State(probe): State<Probe>) -> impl IntoResponse {
    if probe.ready.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "starting: waiting for the Kubernetes API and the ledgerops CRDs",
        )
    }
}

async fn metrics(State(probe): State<Probe>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        probe.metrics.render(),
    )
}
