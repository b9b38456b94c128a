//! The `/agent` job runtime: the reconciler that authorizes jobs and keeps their one status
//! comment current, and the executor that runs them strictly in receive order, one at a time.
//!
//! Effects are at-least-once and found again from the persisted state after a crash: a Received
//! job is authorized, a Queued one executed, a comment that does not show the state is
//! published. Execution is the exception: it starts only once JobStarted is durable, and a job
//! found Running at startup is failed as Interrupted, never run again.

mod cleanup;
pub mod commands;
pub mod context;
pub mod error;
pub mod executor;
pub mod hooks;
pub mod options;
pub mod reconciler;
mod sequence;
pub mod store;
pub mod verify;

use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::reflector::ReflectHandle;
use tracing::{Instrument, info_span};

use crate::api::agent_job::AgentJob;
use crate::gitea::GiteaClient;
use crate::k8s::watches::Watch;
use context::AgentContext;
use store::JobStore;

/// What every replica builds at start: the Gitea client (so a bad URL stops start-up) and the
/// AgentJob store, which the caller hands to the webhook so that leader and standby alike persist
/// deliveries (the agent does not know the webhook).
pub struct Attached {
    store: JobStore,
    gitea: GiteaClient,
}

impl Attached {
    /// The AgentJob store deliveries are persisted into.
    pub fn store(&self) -> &JobStore {
        &self.store
    }

    /// The Gitea client, which the pull-request controllers speak through too.
    pub fn gitea(&self) -> &GiteaClient {
        &self.gitea
    }
}

pub fn attach(options: &options::AgentOptions, client: kube::Client) -> Result<Attached, String> {
    let gitea = GiteaClient::new(&options.gitea_url, options.token.clone())
        .map_err(|e| format!("building the Gitea client: {e}"))?;
    let store = JobStore::new(client, &options.namespace);
    Ok(Attached { store, gitea })
}

/// Spawns the runtime that authorizes and runs the jobs: on the leader only.
pub fn start(
    options: options::AgentOptions,
    attached: Attached,
    ctx: &crate::reconcile::Context,
    watches: &crate::k8s::watches::Watches,
) -> tokio::task::JoinHandle<()> {
    let jobs = Watch::namespaced(attached.store.client(), &options.namespace);
    attached.store.seen_through(jobs.store());
    let mut agent = AgentContext::new(
        attached.store,
        &jobs,
        attached.gitea,
        options.bot_login.clone(),
        options.repositories.clone(),
        ctx,
        watches,
    );
    agent.comment_resync = options.comment_resync;
    agent.plans_dir = options.plans_dir.clone();
    agent.job_retention = options.job_retention;
    tracing::info!(namespace = %options.namespace, gitea = %options.gitea_url, bot = %options.bot_login, repositories = ?options.repositories.entries(), "serving /agent commands");
    let agent = Arc::new(agent);
    let jobs_changed = jobs.subscribe();
    let runtime = reconciler::run(agent.clone(), jobs.subscribe());
    tokio::spawn(run(agent, jobs, jobs_changed, runtime))
}

/// Runs the reconciler and the executor until shutdown.
async fn run(
    ctx: Arc<AgentContext>,
    jobs: Watch<AgentJob>,
    jobs_changed: ReflectHandle<AgentJob>,
    reconciler: impl Future<Output = ()>,
) {
    let watch = tokio::spawn(jobs.run());
    // Any change of a job may make another runnable: the executor looks again.
    let waking = tokio::spawn({
        let ctx = ctx.clone();
        jobs_changed.for_each(move |_| {
            ctx.store.cache_changed();
            ctx.wake.notify_one();
            futures::future::ready(())
        })
    });
    let executor = tokio::spawn(executor::run(ctx.clone()).instrument(info_span!("executor")));
    reconciler.await;
    // Stopping. A job cut short is failed as Interrupted at the next start, never replayed.
    for task in [executor, waking, watch] {
        task.abort();
    }
}
