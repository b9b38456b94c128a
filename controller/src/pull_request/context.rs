//! What the pull-request controllers share: the bot's Gitea client and identity, the
//! repositories it may speak in, the namespace whose ConfigRepos, rules and ApprovalRequests it
//! speaks for, and each reconcile's retry delays.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::options::AgentOptions;
use crate::backoff::Attempts;
use crate::gitea::GiteaClient;
use crate::logic::job::trust::Allowlist;
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::ynab::budget_links::BudgetLinks;

/// What the controllers share.
pub struct Context {
    pub gitea: GiteaClient,
    /// The configured Gitea's base URL: only a ConfigRepo whose URL is a repository of it makes
    /// the bot speak.
    pub gitea_url: String,
    /// The bot's Gitea login: its comments are the ones looked for before commenting again.
    pub bot: String,
    /// The repositories the bot may speak in.
    pub repositories: Allowlist,
    /// The agent's namespace: a ConfigRepo elsewhere cannot make the bot speak.
    pub namespace: String,
    pub client: kube::Client,
    pub budget_links: Arc<BudgetLinks>,
    pub metrics: Arc<Metrics>,
    /// The process's SIGTERM (see `crate::shutdown`).
    pub shutdown: Shutdown,
    /// Failed reconciles, by `<controller>/<object>`, for their retry delays.
    attempts: Attempts,
}

impl Context {
    pub fn new(
        options: &AgentOptions,
        gitea: GiteaClient,
        ctx: &crate::reconcile::Context,
    ) -> Self {
        Self {
            gitea,
            gitea_url: options.gitea_url.clone(),
            bot: options.bot_login.clone(),
            repositories: options.repositories.clone(),
            namespace: options.namespace.clone(),
            client: ctx.client.clone(),
            budget_links: ctx.budget_links.clone(),
            metrics: ctx.metrics.clone(),
            shutdown: ctx.shutdown.clone(),
            attempts: Attempts::default(),
        }
    }

    /// The next retry delay of `key`: see [`Attempts::backoff`].
    pub fn backoff(&self, key: &str) -> Duration {
        self.attempts.backoff(key)
    }

    /// Counts a failed reconcile of controller `kind` for `reason` and returns the next retry
    /// delay of `key` (see [`Attempts::backoff`]).
    pub fn failed(&self, kind: &'static str, reason: &'static str, key: &str) -> Duration {
        self.metrics
            .reconcile_errors
            .get_or_create(&crate::metrics::ErrorLabels { kind, reason })
            .inc();
        self.backoff(key)
    }

    /// Forgets `key`'s failures after a success.
    pub fn succeeded(&self, key: &str) {
        self.attempts.succeeded(key);
    }
}
