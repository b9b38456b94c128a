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
    let hub = events_address
        .as_deref()
        .map(|address| start_hub(address, &instance, &metrics))
        .transpose()?;
    let ready = Arc::new(AtomicBool::new(false));
    let server = serve_probes(listen, &metrics, &ready).await?;
    let webhook = agent.as_ref().map(|a| {
        crate::webhook::Webhook::new(
            a.webhook_secret.clone(),
            &a.bot_login,
            a.repositories.clone(),
        )
    });
    let webhook_server = match &webhook {
        Some(w) => Some(serve_webhook(webhook_listen, w).await?),
        None => None,
    };
    let (kube_config, client) = connect(watch_namespace.as_deref()).await?;
    let attached = attach_agent(agent.as_ref(), webhook.as_ref(), &client)?;
    ready.store(true, Ordering::Relaxed);
    let record_namespace = record_namespace(election.as_ref(), &watch_namespace, &kube_config);
    let Some((leadership, mut elector)) = elect(election, &client, &shutdown).await else {
        return Ok(());
    };
    metrics.leader.set(1);

    // One watch per kind, shared by every controller; started once all have subscribed.
    let mut watches = Watches::new(&client, watch_namespace.as_deref());
    let (admission, admission_watch) = guard_admission(&client).await;
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
    observe_alerts(&metrics, &watches, &ctx);
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
    let gitea = start_gitea(agent.zip(attached), webhook.as_ref(), &ctx, &watches);
    // Gitea pushes of a followed branch sync its ConfigRepos at once (with the webhook only).
    let pushes = match &webhook {
        Some(w) => w.pushes(),
        None => tokio::sync::broadcast::channel(1).1,
    };
    let controllers = controllers(&ctx, &mut watches, approval_retention, repo_setup, pushes);
    let watching = watches.spawn();
    tracing::info!("controllers started");
    let outcome = while_leading(controllers, elector.as_mut()).await;
    finish_gitea(gitea, outcome.is_ok()).await;
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

/// Runs `controllers` while this replica leads: `Err` when it loses the lease first.
async fn while_leading(
    controllers: impl Future<Output = ()>,
    elector: Option<&mut Elector>,
) -> Result<(), RunError> {
    match elector {
        Some(elector) => tokio::select! {
            () = controllers => Ok(()),
            () = elector.keep() => Err(RunError::LeadershipLost),
        },
        None => {
            controllers.await;
            Ok(())
        }
    }
}

/// The `/agent` runtime's store and Gitea client. Every replica persists webhook deliveries;
/// only the leader runs what they ask.
fn attach_agent(
    agent: Option<&crate::agent::options::AgentOptions>,
    webhook: Option<&crate::webhook::Webhook>,
    client: &kube::Client,
) -> Result<Option<crate::agent::Attached>, RunError> {
    let Some(options) = agent else {
        return Ok(None);
    };
    let attached = crate::agent::attach(options, client.clone()).map_err(RunError::Agent)?;
    if let Some(webhook) = webhook {
        webhook.attach(attached.store().clone());
    }
    Ok(Some(attached))
}

/// Where each token's requests are recorded for the process after this one: where the
/// replicas elect their leader, else the namespace this controller watches, else the
/// configuration's own.
fn record_namespace(
    election: Option<&Election>,
    watch_namespace: &Option<String>,
    kube_config: &kube::Config,
) -> String {
    election
        .and_then(|e| e.namespace.clone())
        .or_else(|| watch_namespace.clone())
        .unwrap_or_else(|| kube_config.default_namespace.clone())
}

/// Budgets sync without the admission policies; approvals wait for them (logged either way).
/// The guard, and its watch of the policies.
async fn guard_admission(
    client: &kube::Client,
) -> (Arc<AdmissionGuard>, tokio::task::JoinHandle<()>) {
    let admission = Arc::new(AdmissionGuard::default());
    admission.check(client).await;
    let watch = tokio::spawn({
        let (admission, client) = (admission.clone(), client.clone());
        async move { admission.run(client).await }.instrument(info_span!("admission_guard"))
    });
    (admission, watch)
}

/// The `/agent` runtime, and the controllers that speak in pull requests of their own accord (a
/// push to a rule proposal's branch has its pull request looked at again): with the webhook only.
fn start_gitea(
    agent: Option<(crate::agent::options::AgentOptions, crate::agent::Attached)>,
    webhook: Option<&crate::webhook::Webhook>,
    ctx: &Arc<Context>,
    watches: &Watches,
) -> Option<[tokio::task::JoinHandle<()>; 2]> {
    let ((options, attached), webhook) = agent.zip(webhook)?;
    let gitea = attached.gitea().clone();
    let pull_requests = crate::pull_request::start(&options, gitea, webhook.pushes(), ctx, watches);
    let agent = crate::agent::start(options, attached, ctx, watches);
    Some([agent, pull_requests])
}

/// Asked to stop (`graceful`), the agent and the pull-request controllers finish what is under
/// way too; a lost lease stops them at once.
async fn finish_gitea(tasks: Option<[tokio::task::JoinHandle<()>; 2]>, graceful: bool) {
    for task in tasks.into_iter().flatten() {
        if graceful {
            let _ = task.await;
        } else {
            task.abort();
        }
    }
}

/// The alert gauges, from the shared caches at each scrape: never a LIST of their own.
fn observe_alerts(metrics: &Metrics, watches: &Watches, ctx: &Context) {
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
}

/// Every controller on the shared watches, as one future that ends when they all have.
fn controllers(
    ctx: &Arc<Context>,
    watches: &mut Watches,
    approval_retention: Duration,
    repo_setup: reconcile::config_repo::Setup,
    pushes: tokio::sync::broadcast::Receiver<crate::logic::config_repo::push::Push>,
) -> impl Future<Output = ()> + use<> {
    let controller = |kind: &str| info_span!("controller", kind);
    let rules = futures::future::join(
        reconcile::rule::run(ctx.clone(), watches).instrument(controller("CategorizationRule")),
        reconcile::learning::run(ctx.clone(), watches).instrument(controller("RuleLearning")),
    );
    let controllers = futures::future::join5(
        reconcile::budget::run(ctx.clone(), watches).instrument(controller("Budget")),
        reconcile::transaction::run(ctx.clone(), watches).instrument(controller("Transaction")),
        reconcile::plan::run(ctx.clone(), watches).instrument(controller("CategorizationPlan")),
        reconcile::approval::run(ctx.clone(), watches, approval_retention)
            .instrument(controller("ApprovalRequest")),
        reconcile::config_repo::run(ctx.clone(), watches, repo_setup, pushes)
            .instrument(controller("ConfigRepo")),
    );
    async move {
        futures::future::join(controllers, rules).await;
    }
}

/// The notification hub at `address`, which every Event is also posted to.
fn start_hub(
    address: &str,
    instance: &str,
    metrics: &Arc<Metrics>,
) -> Result<crate::hub::Hub, RunError> {
    let hub = crate::hub::Hub::start(address, instance, metrics)?;
    tracing::info!(
        address,
        "every Event is also posted to this notification hub"
    );
    Ok(hub)
}

/// Serves /healthz, /readyz (true once `ready` is) and /metrics on `listen`.
async fn serve_probes(
    listen: SocketAddr,
    metrics: &Arc<Metrics>,
    ready: &Arc<AtomicBool>,
) -> Result<tokio::task::JoinHandle<std::io::Result<()>>, RunError> {
    let listener = bind(listen).await?;
    tracing::info!(addr = %listener.local_addr().unwrap_or(listen), "serving /healthz, /readyz and /metrics");
    let router = http::router(Probe {
        metrics: metrics.clone(),
        ready: ready.clone(),
    });
    Ok(tokio::spawn(
        async move { axum::serve(listener, router).await }.instrument(info_span!("http")),
    ))
}

/// Serves the Gitea webhook on `listen`.
async fn serve_webhook(
    listen: SocketAddr,
    webhook: &crate::webhook::Webhook,
) -> Result<tokio::task::JoinHandle<std::io::Result<()>>, RunError> {
    let listener = bind(listen).await?;
    tracing::info!(addr = %listener.local_addr().unwrap_or(listen), path = crate::webhook::PATH, "serving the Gitea webhook");
    let router = crate::webhook::router(webhook.clone());
    Ok(tokio::spawn(
        async move { axum::serve(listener, router).await }.instrument(info_span!("webhook")),
    ))
}

/// The Kubernetes configuration and client, once the API server answers and has the CRDs
/// (read in `watch_namespace`, or everywhere).
async fn connect(watch_namespace: Option<&str>) -> Result<(kube::Config, kube::Client), RunError> {
    let kube_config = kube::Config::infer()
        .await
        .map_err(|e| RunError::Config(kube::Error::InferConfig(e)))?;
    let client = crate::k8s::client::build(kube_config.clone()).map_err(RunError::Config)?;
    let budgets: Api<Budget> = match watch_namespace {
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
    Ok((kube_config, client))
}

/// This replica's leadership: sole without an election, else once it holds the lease; `None`
/// when asked to stop first.
async fn elect(
    election: Option<Election>,
    client: &kube::Client,
    shutdown: &Shutdown,
) -> Option<(Leadership, Option<Elector>)> {
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
            () = shutdown.requested() => return None,
        }
    }
    Some((leadership, elector))
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, RunError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| RunError::Listen { addr, source })
}
