//! What the `/agent` runtime's parts share: the AgentJob store and cache, the Gitea client and
//! the bot's identity, the shared watches commands read, and what is kept in memory about each
//! job (its retry delays, whether its comment was found authentic).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::runtime::reflector::Store;
use tokio::sync::Notify;

use super::hooks::TestHooks;
use super::store::JobStore;
use crate::api::agent_job::AgentJob;
use crate::api::budget::Budget;
use crate::api::rule::CategorizationRule;
use crate::backoff::Attempts;
use crate::gitea::GiteaClient;
use crate::k8s::watches::{Listed, Watch};
use crate::logic::job::trust::Allowlist;
use crate::metrics::Metrics;
use crate::ynab::budget_links::BudgetLinks;

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
    /// Every Budget, from the shared watch: a decision reads its four eyes and Gitea mapping.
    pub budgets: Store<Budget>,
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
    /// Failed reconciles per job, for their retry delays.
    attempts: Attempts,
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
            budgets: ctx.budgets.clone(),
            rules_listed: watches.rules.listed(),
            admission: ctx.admission.clone(),
            shutdown: ctx.shutdown.clone(),
            hooks: TestHooks::from_env(),
            wake: Notify::new(),
            comment_resync: Duration::from_secs(300),
            plans_dir: "plans".into(),
            job_retention: Duration::from_secs(7 * 24 * 3600),
            attempts: Attempts::default(),
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

    /// The next retry delay of `job`: see [`Attempts::backoff`].
    pub fn backoff(&self, job: &str) -> Duration {
        self.attempts.backoff(job)
    }

    /// Forgets `job`'s failures after a success.
    pub fn succeeded(&self, job: &str) {
        self.attempts.succeeded(job);
    }

    /// Forgets everything kept in memory about a deleted job.
    pub fn forget(&self, job: &str, uid: &str) {
        self.succeeded(job);
        self.trusted.lock().expect("trusted lock").remove(uid);
    }
}
