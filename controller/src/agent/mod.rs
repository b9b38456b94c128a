//! The `/agent` job runtime: the reconciler that authorizes jobs and keeps their one status
//! comment current, and the executor that runs them strictly in receive order, one at a time.
//!
//! Effects are at-least-once and found again from the persisted state after a crash: a Received
//! job is authorized, a Queued one executed, a comment that does not show the state is
//! published. Execution is the exception: it starts only once JobStarted is durable, and a job
//! found Running at startup is failed as Interrupted, never run again.

pub mod approve_shown;
mod cleanup;
pub mod commands;
mod edits;
pub mod escalation;
pub mod executor;
pub mod feedback;
pub mod hooks;
pub mod options;
pub mod proposals;
pub mod reconciler;
mod sequence;
pub mod store;
pub mod verify;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::reflector::{ReflectHandle, Store};
use tokio::sync::Notify;
use tracing::{Instrument, info_span};

use crate::api::agent_job::AgentJob;

use crate::api::rule::CategorizationRule;
use crate::gitea::GiteaClient;
use crate::k8s::watches::{Listed, Watch};
use crate::logic::job::trust::Allowlist;
use crate::metrics::Metrics;
use crate::ynab::budget_links::BudgetLinks;
use hooks::TestHooks;
use store::JobStore;

/// What the runtime shares.
pub struct AgentContext {
    pub store: JobStore,
    /// Every job of the namespace, from the one AgentJob watch: the executor picks from it.
    pub jobs: Store<AgentJob>,
    /// Resolves once `jobs` holds the first full list.
    pub jobs_listed: Listed,
    pub gitea: GiteaClient,
    /// The bot's Gitea login: its comments are the only status comments.
    pub bot: String,
    /// The repositories whose comments are obeyed.
    pub repositories: Allowlist,
    pub budget_links: Arc<BudgetLinks>,
    pub metrics: Arc<Metrics>,
    /// Every CategorizationRule, from the shared watch: `/agent suggest` reads the Blessed ones.
    pub rules: Store<CategorizationRule>,
    /// Resolves once `rules` holds the first full list.
    pub rules_listed: Listed,
    /// Whether the admission policies are in force: rules are used only while they are.
    pub admission: Arc<crate::k8s::admission_guard::AdmissionGuard>,
    pub hooks: TestHooks,
    /// Wakes the executor when a job may have become runnable.
    pub wake: Notify,
    /// How often a finished job's comment is checked (a deleted one is recreated).
    pub comment_resync: Duration,
    /// Directory of the config repo that suggested plans are written to.
    pub plans_dir: String,
    /// How long a finished job is kept before it is deleted.
    pub job_retention: Duration,
    attempts: Mutex<HashMap<String, u32>>,
    /// Whether a job's comment was found authentic, by the job's uid (its spec never changes).
    /// In memory on purpose: a status anyone may write must not say so.
    trusted: Mutex<HashMap<String, bool>>,
    /// The process's SIGTERM (see `crate::shutdown`).
    pub shutdown: crate::shutdown::Shutdown,
}

impl AgentContext {
    pub fn new(
        store: JobStore,
        jobs: &Watch<AgentJob>,
        gitea: GiteaClient,
        bot: String,
        repositories: Allowlist,
        ctx: &crate::reconcile::Context,
        watches: &crate::k8s::watches::Watches,
    ) -> Self {
        Self {
            store,
            jobs: jobs.store(),
            jobs_listed: jobs.listed(),
            gitea,
            bot,
            repositories,
            budget_links: ctx.budget_links.clone(),
            metrics: ctx.metrics.clone(),
            rules: watches.rules.store(),
            rules_listed: watches.rules.listed(),
            admission: ctx.admission.clone(),
            shutdown: ctx.shutdown.clone(),
            hooks: TestHooks::from_env(),
            wake: Notify::new(),
            comment_resync: Duration::from_secs(300),
            plans_dir: "plans".into(),
            job_retention: Duration::from_secs(7 * 24 * 3600),
            attempts: Mutex::new(HashMap::new()),
            trusted: Mutex::new(HashMap::new()),
        }
    }

    /// What this process found about job `uid`'s comment, if it looked.
    pub fn trusted(&self, uid: &str) -> Option<bool> {
        self.trusted.lock().expect("trusted lock").get(uid).copied()
    }

    pub fn set_trusted(&self, uid: &str, trusted: bool) {
        self.trusted
            .lock()
            .expect("trusted lock")
            .insert(uid.to_owned(), trusted);
    }

    /// The next retry delay of `job`: doubling from 250ms, capped at 30s, never giving up.
    pub fn backoff(&self, job: &str) -> Duration {
        let mut attempts = self.attempts.lock().expect("attempts lock");
        let n = attempts.entry(job.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
        capped_backoff(*n)
    }

    /// Forgets `job`'s failures after a success.
    pub fn succeeded(&self, job: &str) {
        self.attempts.lock().expect("attempts lock").remove(job);
    }

    /// Forgets everything kept in memory about a deleted job.
    pub fn forget(&self, job: &str, uid: &str) {
        self.succeeded(job);
        self.trusted.lock().expect("trusted lock").remove(uid);
    }
}

/// 250ms doubling per attempt, at most 30s.
pub fn capped_backoff(attempt: u32) -> Duration {
    let millis = 250u64.saturating_mul(1u64 << attempt.saturating_sub(1).min(10));
    Duration::from_millis(millis.min(30_000))
}

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
    pushes: tokio::sync::broadcast::Receiver<crate::logic::config_repo::push::Push>,
    ctx: &crate::reconcile::Context,
    watches: &crate::k8s::watches::Watches,
) -> tokio::task::JoinHandle<()> {
    let watched = Watched {
        feedback: feedback::Watched::subscribe(watches),
        proposals: proposals::Watched::subscribe(watches, pushes),
        escalation: escalation::Watched::subscribe(watches),
    };
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
    tokio::spawn(run(
        agent,
        options.gitea_url,
        watched,
        jobs,
        jobs_changed,
        runtime,
    ))
}

/// What the parts of the runtime read from the shared watches.
struct Watched {
    feedback: feedback::Watched,
    proposals: proposals::Watched,
    escalation: escalation::Watched,
}

/// Runs the reconciler, the executor, the ConfigRepo feedback, the rule proposals and the
/// escalations until shutdown.
async fn run(
    ctx: Arc<AgentContext>,
    gitea_url: String,
    watched: Watched,
    jobs: Watch<AgentJob>,
    jobs_changed: ReflectHandle<AgentJob>,
    reconciler: impl Future<Output = ()>,
) {
    if !ctx.hooks.is_empty() {
        tracing::warn!("{} is set: test-only pauses are active", hooks::ENV);
    }
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
    let feedback = tokio::spawn(
        feedback::run(ctx.clone(), gitea_url.clone(), watched.feedback)
            .instrument(info_span!("feedback")),
    );
    let escalation = tokio::spawn(
        escalation::run(ctx.clone(), gitea_url.clone(), watched.escalation)
            .instrument(info_span!("escalation")),
    );
    let proposals = tokio::spawn(
        proposals::run(ctx.clone(), gitea_url, watched.proposals)
            .instrument(info_span!("proposals")),
    );
    reconciler.await;
    // Stopping. A job cut short is failed as Interrupted at the next start, never replayed; the
    // other controllers finish the reconciles under way (a comment posted is also logged).
    for task in [executor, waking, watch] {
        task.abort();
    }
    for task in [feedback, escalation, proposals] {
        let _ = task.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(capped_backoff(1), Duration::from_millis(250));
        assert_eq!(capped_backoff(2), Duration::from_millis(500));
        assert_eq!(capped_backoff(5), Duration::from_millis(4000));
        assert_eq!(capped_backoff(8), Duration::from_secs(30));
        assert_eq!(capped_backoff(1000), Duration::from_secs(30));
    }
}
