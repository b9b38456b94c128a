//! `ledgerops run`: connects to Kubernetes, checks the CRDs, then runs every controller and the
//! HTTP endpoints until SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kube::Api;
use kube::api::ListParams;
use tracing::{Instrument, info_span};

use crate::api::budget::Budget;
use crate::http::{self, Probe};
use crate::k8s::admission_guard::AdmissionGuard;
use crate::k8s::lease::{Election, Elector};
use crate::k8s::request_record::RequestRecords;
use crate::k8s::watches::Watches;
use crate::leadership::Leadership;
use crate::logic::budget::api_url::ApiUrlAllowlist;
use crate::metrics::Metrics;
use crate::reconcile::{self, Context};
use crate::shutdown::Shutdown;
use crate::ynab::budget_links::BudgetLinks;

/// Why the controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("no Kubernetes configuration found ({0}): set KUBECONFIG, or run inside a cluster")]
    Config(#[source] kube::Error),
    #[error(
        "the ledgerops CRDs are not installed ({0}): run `ledgerops crdgen | kubectl apply --server-side -f -`"
    )]
    NoCrds(#[source] kube::Error),
    #[error(
        "the Kubernetes API server did not answer the first request ({0}): check that it is up and reachable from here (KUBECONFIG, or the in-cluster service); ledgerops exits and its restart tries again"
    )]
    ApiUnreachable(#[source] kube::Error),
    #[error("/agent commands: {0}")]
    Agent(String),
    #[error(
        "this replica lost the leader lease (it could not renew it in time, or another replica took it over): exiting so that only the holder acts; it restarts as a standby"
    )]
    LeadershipLost,
    #[error("cannot listen for SIGTERM and SIGINT: {0}")]
    Signals(#[source] std::io::Error),
    #[error(transparent)]
    Hub(#[from] crate::hub::HubError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// What `ledgerops run` was told.
pub struct Options {
    pub listen: SocketAddr,
    /// Where the Gitea webhook is served, when Gitea is configured.
    pub webhook_listen: SocketAddr,
    pub api_urls: ApiUrlAllowlist,
    pub agent: Option<crate::agent::options::AgentOptions>,
    /// Settled ApprovalRequests that a newer one replaced are deleted this long after they
    /// settled.
    pub approval_retention: Duration,
    pub token_namespaces: Vec<String>,
    /// The one namespace whose objects are reconciled; `None`: every namespace.
    pub watch_namespace: Option<String>,
    /// The notification hub every Event is also posted to.
    pub events_address: Option<String>,
    /// `None`: this is the only replica, and it acts at once.
    pub election: Option<Election>,
    pub config_repos: crate::git::options::ConfigRepoArgs,
    /// Which Git URLs ConfigRepos may fetch (checked at start-up).
    pub git_urls: crate::logic::config_repo::url::UrlPolicy,
}

/// Runs until a shutdown signal, or until this replica loses the leader lease (an error, so the
/// process exits and restarts as a standby).
pub async fn run(options: Options) -> Result<(), RunError> {
    let Options {
        listen,
        webhook_listen,
        api_urls,
        agent,
        approval_retention,
        token_namespaces,
        watch_namespace,
        events_address,
        election,
        config_repos,
        git_urls,
    } = options;
    // Before anything else: a SIGTERM from now on is never lost (see `crate::shutdown`).
    let shutdown = Shutdown::on_signals().map_err(RunError::Signals)?;
    tracing::info!(allowed = %api_urls.describe(), "YNAB tokens go only to these API base URLs");
    let metrics = Arc::new(Metrics::default());
    let instance = crate::k8s::events::instance();
    let hub = match &events_address {
        Some(address) => {
            let hub = crate::hub::Hub::start(address, &instance, &metrics)?;
            tracing::info!(
                address,
                "every Event is also posted to this notification hub"
            );
            Some(hub)
        }
        None => None,
    };
    let ready = Arc::new(AtomicBool::new(false));
    let listener = bind(listen).await?;
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
    });
    let server = tokio::spawn(
        async move { axum::serve(listener, router).await }.instrument(info_span!("http")),
    );
    let webhook_server = match &webhook {
        Some(w) => {
            let listener = bind(webhook_listen).await?;
            tracing::info!(addr = %listener.local_addr().unwrap_or(webhook_listen), path = crate::webhook::PATH, "serving the Gitea webhook");
            let router = crate::webhook::router(w.clone());
            Some(tokio::spawn(
                async move { axum::serve(listener, router).await }
                    .instrument(info_span!("webhook")),
            ))
        }
        None => None,
    };

    let kube_config = kube::Config::infer()
        .await
        .map_err(|e| RunError::Config(kube::Error::InferConfig(e)))?;
    let client = crate::k8s::client::build(kube_config.clone()).map_err(RunError::Config)?;
    let budgets: Api<Budget> = match &watch_namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    budgets
        .list(&ListParams::default().limit(1))
        .await
        .map_err(|e| {
            // Only a 404 says the CRDs are missing; anything else is the API server itself.
            if crate::k8s::is_not_found(&e) {
                RunError::NoCrds(e)
            } else {
                RunError::ApiUnreachable(e)
            }
        })?;
    // Every replica persists webhook deliveries; only the leader runs what they ask.
    let attached = match &agent {
        Some(options) => {
            Some(crate::agent::attach(options, client.clone()).map_err(RunError::Agent)?)
        }
        None => None,
    };
    if let (Some(webhook), Some(attached)) = (&webhook, &attached) {
        webhook.attach(attached.store().clone());
    }
    ready.store(true, Ordering::Relaxed);
    // Where each token's requests are recorded for the process after this one: where the
    // replicas elect their leader, else the namespace this controller watches, else the
    // configuration's own.
    let record_namespace = election
        .as_ref()
        .and_then(|e| e.namespace.clone())
        .or_else(|| watch_namespace.clone())
        .unwrap_or_else(|| kube_config.default_namespace.clone());
    let (leadership, mut elector) = match election {
        Some(election) => {
            let leadership = Leadership::elected(election.timing);
            let elector = Elector::new(client.clone(), election, leadership.clone());
            (leadership, Some(elector))
        }
        None => (Leadership::sole(), None),
    };
    if let Some(elector) = elector.as_mut() {
        tokio::select! {
            () = elector.acquire() => {}
            () = shutdown.requested() => return Ok(()),
        }
    }
    metrics.leader.set(1);

    // One watch per kind, shared by every controller; started once all have subscribed.
    let mut watches = Watches::new(&client, watch_namespace.as_deref());
    // Budgets sync without the admission policies; approvals wait for them (logged either way).
    let admission = Arc::new(AdmissionGuard::default());
    admission.check(&client).await;
    let admission_watch = tokio::spawn({
        let (admission, client) = (admission.clone(), client.clone());
        async move { admission.run(client).await }.instrument(info_span!("admission_guard"))
    });
    let ctx = Arc::new(Context {
        admission,
        metrics: metrics.clone(),
        token_namespaces,
        leadership,
        shutdown,
        // The YNAB windows record their requests in the Kubernetes adapter's ConfigMap.
        budget_links: Arc::new(BudgetLinks::recording(Arc::new(RequestRecords::new(
            client.clone(),
            &record_namespace,
        )))),
        events: reconcile::tell::Tell::new(crate::k8s::events::Events::new(client.clone()), hub),
        ..Context::new(client, kube_config, &watches, api_urls)
    });
    // The alert gauges, from the shared caches at each scrape: never a LIST of their own.
    metrics.observe_state(Box::new({
        let (budgets, requests) = (watches.budgets.store(), watches.approvals.store());
        let links = ctx.budget_links.clone();
        move |now| {
            let (budgets, requests) = (budgets.state(), requests.state());
            crate::logic::status::alerts::budget_gauges(
                budgets.iter().map(Arc::as_ref),
                requests.iter().map(Arc::as_ref),
                &links.request_use(now),
                now,
            )
        }
    }));
    let repo_setup = reconcile::config_repo::Setup {
        options: config_repos,
        urls: git_urls,
        gitea: agent.as_ref().zip(attached.as_ref()).map(|(a, attached)| {
            reconcile::authorship::Forge {
                url: a.gitea_url.clone(),
                client: attached.gitea().clone(),
            }
        }),
    };
    // The `/agent` runtime, and the controllers that speak in pull requests of their own accord
    // (a push to a rule proposal's branch has its pull request looked at again).
    let gitea = agent
        .zip(attached)
        .zip(webhook.as_ref())
        .map(|((options, attached), webhook)| {
            let gitea = attached.gitea().clone();
            let pull_requests =
                crate::pull_request::start(&options, gitea, webhook.pushes(), &ctx, &watches);
            let agent = crate::agent::start(options, attached, &ctx, &watches);
            [agent, pull_requests]
        });
    // Gitea pushes of a followed branch sync its ConfigRepos at once (with the webhook only).
    let pushes = match &webhook {
        Some(w) => w.pushes(),
        None => tokio::sync::broadcast::channel(1).1,
    };
    let controller = |kind: &str| info_span!("controller", kind);
    let rules = futures::future::join(
        reconcile::rule::run(ctx.clone(), &watches).instrument(controller("CategorizationRule")),
        reconcile::learning::run(ctx.clone(), &watches).instrument(controller("RuleLearning")),
    );
    let controllers = futures::future::join5(
        reconcile::budget::run(ctx.clone(), &mut watches).instrument(controller("Budget")),
        reconcile::transaction::run(ctx.clone(), &watches).instrument(controller("Transaction")),
        reconcile::plan::run(ctx.clone(), &watches).instrument(controller("CategorizationPlan")),
        reconcile::approval::run(ctx.clone(), &watches, approval_retention)
            .instrument(controller("ApprovalRequest")),
        reconcile::config_repo::run(ctx.clone(), &mut watches, repo_setup, pushes)
            .instrument(controller("ConfigRepo")),
    );
    let watching = watches.spawn();
    tracing::info!("controllers started");
    let controllers = async {
        futures::future::join(controllers, rules).await;
    };
    let outcome = match elector.as_mut() {
        Some(elector) => tokio::select! {
            () = controllers => Ok(()),
            () = elector.keep() => Err(RunError::LeadershipLost),
        },
        None => {
            controllers.await;
            Ok(())
        }
    };
    // Asked to stop, the agent and the pull-request controllers finish what is under way too; a
    // lost lease stops them at once.
    for task in gitea.into_iter().flatten() {
        if outcome.is_ok() {
            let _ = task.await;
        } else {
            task.abort();
        }
    }
    watching.iter().for_each(tokio::task::JoinHandle::abort);
    admission_watch.abort();
    if outcome.is_ok()
        && let Some(elector) = elector.as_mut()
    {
        elector.release().await;
    }
    metrics.leader.set(0);
    server.abort();
    webhook_server
        .iter()
        .for_each(tokio::task::JoinHandle::abort);
    outcome
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, RunError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| RunError::Listen { addr, source })
}
