//! `ledgerops run`: connects to Kubernetes, checks the CRDs, then runs every controller and the
//! HTTP endpoints until SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kube::Api;
use kube::api::ListParams;

use crate::api::budget::Budget;
use crate::http::{self, Probe};
use crate::k8s::events::Events;
use crate::metrics::Metrics;
use crate::reconcile::{self, Context};
use crate::registry::Registry;

/// Why the controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no Kubernetes configuration found ({0}): set KUBECONFIG, or run inside a cluster")]
    Config(#[source] kube::Error),
    #[error(
        "the ledgerops CRDs are not installed ({0}): run `ledgerops crdgen | kubectl apply --server-side -f -`"
    )]
    NoCrds(#[source] kube::Error),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Runs until a shutdown signal.
pub async fn run(listen: SocketAddr) -> Result<(), RunError> {
    let metrics = Arc::new(Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| RunError::Listen {
            addr: listen,
            source,
        })?;
    tracing::info!(addr = %listener.local_addr().unwrap_or(listen), "serving /healthz, /readyz and /metrics");
    let router = http::router(Probe {
        metrics: metrics.clone(),
        ready: ready.clone(),
    });
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let client = kube::Client::try_default()
        .await
        .map_err(RunError::Config)?;
    Api::<Budget>::all(client.clone())
        .list(&ListParams::default().limit(1))
        .await
        .map_err(RunError::NoCrds)?;
    let ctx = Arc::new(Context {
        events: Events::new(client.clone()),
        client,
        metrics,
        registry: Arc::new(Registry::default()),
    });
    ready.store(true, Ordering::Relaxed);
    tracing::info!("controllers started");
    reconcile::budget::run(ctx).await;
    server.abort();
    Ok(())
}
