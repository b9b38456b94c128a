//! `ledgerops run`: connects to Kubernetes, checks the CRDs, then runs every controller and the
//! HTTP endpoints until SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use kube::api::ListParams;
use kube::runtime::{WatchStreamExt, reflector, watcher};

use crate::api::budget::Budget;
use crate::http::{self, Probe};
use crate::k8s::admission_guard::AdmissionGuard;
use crate::k8s::events::Events;
use crate::logic::api_url::ApiUrlAllowlist;
use crate::metrics::Metrics;
use crate::reconcile::{self, Context};
use crate::registry::Registry;
use crate::writer::Writer;

/// Why the controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no Kubernetes configuration found ({0}): set KUBECONFIG, or run inside a cluster")]
    Config(#[source] kube::Error),
    #[error(
        "the ledgerops CRDs are not installed ({0}): run `ledgerops crdgen | kubectl apply --server-side -f -`"
    )]
    NoCrds(#[source] kube::Error),
    #[error("/agent commands: {0}")]
    Agent(String),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Runs until a shutdown signal. Settled ApprovalRequests that a newer one replaced are deleted
/// `approval_retention` after they settled.
pub async fn run(
    listen: SocketAddr,
    api_urls: ApiUrlAllowlist,
    agent: Option<crate::agent::options::AgentOptions>,
    approval_retention: Duration,
    token_namespaces: Vec<String>,
) -> Result<(), RunError> {
    tracing::info!(allowed = %api_urls.describe(), "YNAB tokens go only to these API base URLs");
    let metrics = Arc::new(Metrics::default());
    let ready = Arc::new(AtomicBool::new(false));
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| RunError::Listen {
            addr: listen,
            source,
        })?;
    tracing::info!(addr = %listener.local_addr().unwrap_or(listen), "serving /healthz, /readyz and /metrics");
    let webhook = agent.as_ref().map(|a| {
        crate::webhook::Webhook::new(
            a.webhook_secret.clone(),
            &a.bot_login,
            a.repositories.clone(),
        )
    });
    let router = http::router(Probe {
        metrics: metrics.clone(),
        ready: ready.clone(),
        webhook: webhook.clone(),
    });
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let client = kube::Client::try_default()
        .await
        .map_err(RunError::Config)?;
    Api::<Budget>::all(client.clone())
        .list(&ListParams::default().limit(1))
        .await
        .map_err(RunError::NoCrds)?;
    let (budgets, budget_writer) = reflector::store();
    let budget_watch = watcher(
        Api::<Budget>::all(client.clone()),
        watcher::Config::default().any_semantic(),
    )
    .default_backoff()
    .reflect(budget_writer)
    .for_each(|_| async {});
    let budget_watch = tokio::spawn(budget_watch);
    let _ = budgets.wait_until_ready().await;
    // Budgets sync without the admission policies; approvals wait for them (logged either way).
    let admission = Arc::new(AdmissionGuard::default());
    admission.check(&client).await;
    let admission_watch = tokio::spawn({
        let (admission, client) = (admission.clone(), client.clone());
        async move { admission.run(client).await }
    });
    let ctx = Arc::new(Context {
        admission,
        budgets,
        events: Events::new(client.clone()),
        client,
        metrics,
        registry: Arc::new(Registry::default()),
        writer: Arc::new(Writer::default()),
        api_urls,
        token_namespaces,
    });
    let agent = match agent {
        Some(options) => {
            Some(crate::agent::start(options, &ctx, webhook.as_ref()).map_err(RunError::Agent)?)
        }
        None => None,
    };
    ready.store(true, Ordering::Relaxed);
    tracing::info!("controllers started");
    tokio::join!(
        reconcile::budget::run(ctx.clone()),
        reconcile::transaction::run(ctx.clone()),
        reconcile::plan::run(ctx.clone()),
        reconcile::approval::run(ctx, approval_retention)
    );
    if let Some(agent) = agent {
        agent.abort();
    }
    server.abort();
    budget_watch.abort();
    admission_watch.abort();
    Ok(())
}
