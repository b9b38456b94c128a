//! Reconcilers, one per kind: read, decide with the logic, act through the adapters, write status.

pub mod approval;
pub mod approval_gate;
pub mod attempts_here;
pub mod authority;
pub mod authorship;
pub mod autopilot;
pub mod budget;
pub mod budget_scoped;
pub mod config_repo;
pub mod learning;
pub mod lineage;
pub mod plan;
pub mod plan_cut_off;
pub mod plan_write;
pub mod read_back;
pub mod rule;
pub mod summarize;
pub mod tell;
pub mod transaction;
pub mod writes_in_flight;

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::reflector::Store;
use kube::{Resource, ResourceExt};

use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::backoff::Attempts;
use crate::k8s::admission_guard::AdmissionGuard;
use crate::k8s::events::Events;
use crate::k8s::watches::{Listed, Watches};
use crate::leadership::Leadership;
use crate::logic::approval::edited::{LastWritten, Written};
use crate::logic::budget::api_url::ApiUrlAllowlist;
use crate::logic::runtime::pacing::Limits;
use crate::logic::values::duration;
use crate::metrics::{ErrorLabels, Measure, Metrics};
use crate::shutdown::Shutdown;
use crate::ynab::batcher::{Batcher, Destination};
use crate::ynab::budget_links::BudgetLinks;
use crate::ynab::mirror_sync::MirrorKey;
use writes_in_flight::WritesInFlight;

/// Reconciles at once, for a controller whose reconciles never wait for YNAB (they talk to the
/// API server and Gitea, or hand their write off): enough to keep those busy, while a leader
/// taking over thousands of objects queues them as references instead of running them all as
/// tasks at once (in the soak, each takeover grew the new leader by over 100 MB in seconds).
pub const CONCURRENCY: u16 = 64;

/// What every reconciler shares.
pub struct Context {
    pub client: kube::Client,
    pub metrics: Arc<Metrics>,
    pub budget_links: Arc<BudgetLinks>,
    /// Where Events go: Kubernetes, and the notification hub if there is one.
    pub events: tell::Tell,
    pub batcher: Arc<Batcher>,
    /// Every Budget, kept current by the shared watch: reconcilers read them without asking
    /// the API.
    pub budgets: Store<Budget>,
    /// Every ConfigRepo, from the shared watch: whether one governs is read here.
    pub repos: Store<ConfigRepo>,
    /// Every ApprovalRequest, from the shared watch: the approval gate finds a subject's
    /// requests here. What it writes on a request is conditional on the version it read, so a
    /// cached copy that is behind is refused, never acted on.
    pub approvals: Store<ApprovalRequest>,
    /// The API base URLs a YNAB token may be sent to (`--ynab-api-url-allow`).
    pub api_urls: ApiUrlAllowlist,
    /// The namespaces whose token Secrets may be read (`--token-namespace`); empty: all.
    pub token_namespaces: Vec<String>,
    /// Whether the admission policies are in force: no approval is followed while they are not.
    pub admission: Arc<AdmissionGuard>,
    /// Whether this replica holds the leader lease: YNAB requests go out only while it does.
    pub leadership: Leadership,
    /// What `client` was built from: a ConfigRepo with a ServiceAccount impersonates it on top.
    pub kube_config: kube::Config,
    /// Transaction writes handed to the batcher, until their outcome is recorded.
    pub writes_in_flight: Arc<WritesInFlight>,
    /// The API server's authorizer, asked before a write whether its authority still holds.
    pub authorizer: Arc<crate::k8s::access::Authorizer>,
    /// Who may read each token Secret's namespace, asked of the authorizer every few minutes.
    pub secret_readers: Arc<crate::k8s::secret_readers::SecretReaders>,
    /// The process's SIGTERM: every controller finishes its reconciles and stops.
    pub shutdown: Shutdown,
    /// The retry delays of the objects whose last reconcile failed ([`error_policy`]).
    pub failures: Attempts,
    /// The plan writes this process started and has not finished.
    pub attempts_here: Arc<attempts_here::AttemptsHere>,
    /// What ledgerops last wrote to each transaction, from the shared watches, and whether
    /// the Transactions and plans it is noted from are listed.
    pub written: Arc<std::sync::Mutex<Written>>,
    pub written_listed: [Listed; 2],
}

impl Context {
    /// A context on `client` whose caches are the stores of `watches`, with its own YNAB links
    /// and batcher, and defaults the process overrides: fresh metrics, admission not yet
    /// verified (no approval is followed), any token namespace, sole leadership, and no
    /// shutdown.
    pub fn new(
        client: kube::Client,
        kube_config: kube::Config,
        watches: &Watches,
        api_urls: ApiUrlAllowlist,
    ) -> Self {
        Self {
            admission: Arc::new(AdmissionGuard::default()),
            budgets: watches.budgets.store(),
            repos: watches.repos.store(),
            approvals: watches.approvals.store(),
            events: tell::Tell::new(Events::new(client.clone()), None),
            client,
            metrics: Arc::new(Metrics::default()),
            budget_links: Arc::new(BudgetLinks::default()),
            batcher: Arc::new(Batcher::default()),
            writes_in_flight: Arc::new(WritesInFlight::new(watches.transactions.store())),
            api_urls,
            token_namespaces: Vec::new(),
            leadership: Leadership::sole(),
            kube_config,
            authorizer: Arc::default(),
            secret_readers: Arc::default(),
            shutdown: Shutdown::never(),
            failures: Attempts::default(),
            attempts_here: Arc::default(),
            written: watches.written.clone(),
            written_listed: [watches.transactions.listed(), watches.plans.listed()],
        }
    }

    /// Waits until every Transaction and plan is listed, so that [`Context::last_written`] can
    /// tell (at once after the first time; not at all if the watches stopped).
    pub async fn written_known(&self) {
        let [transactions, plans] = self.written_listed.clone();
        futures::join!(transactions.wait(), plans.wait());
    }

    /// What ledgerops last wrote, or may have written, to the transactions `ids` of Budget
    /// `budget` in `namespace`, for the object `asking` (see [`key_of`](crate::logic::approval::edited::key_of)); `None` until
    /// every Transaction and plan is listed.
    pub fn last_written(
        &self,
        (namespace, budget): (&str, &str),
        ids: &HashSet<&str>,
        asking: &str,
    ) -> Option<LastWritten> {
        if !self.written_listed.iter().all(Listed::now) {
            return None;
        }
        Some(self.noted().of(namespace, budget, ids, asking))
    }

    /// The oldest knowledge an unsettled write of Budget `budget` in `namespace` was decided on,
    /// as far as the watches have brought them.
    pub fn oldest_open_write(&self, namespace: &str, budget: &str) -> Option<i64> {
        self.noted().oldest_open(namespace, budget)
    }

    fn noted(&self) -> std::sync::MutexGuard<'_, Written> {
        // Poisoned only by a panic while noting; what was noted before stays good.
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The Budget `name` of `namespace`, from the shared cache.
    pub fn budget(&self, namespace: &str, name: &str) -> Option<Arc<Budget>> {
        self.budgets.get(&ObjectRef::new(name).within(namespace))
    }

    /// Where the Budget's writes go, with the token its last sync used; `None` before a sync,
    /// while the Budget is suspended, and when `spec.apiUrl` is not allowed or the Budget names
    /// another URL or Secret than that sync. The client carries the credentials' permit: once
    /// the Budget is suspended or deleted or its Secret goes, it sends nothing, even from the
    /// batcher's queue.
    pub fn destination(&self, namespace: &str, budget: &Budget) -> Option<Destination> {
        let spec = &budget.spec;
        if spec.suspend {
            return None;
        }
        let url = self.api_urls.check(&spec.api_url).ok()?;
        let (token, permit) = self.budget_links.credentials_for(
            namespace,
            &budget.name_any(),
            &url,
            &spec.token_secret_ref,
        )?;
        let client = self
            .budget_links
            .client(&url, &token, Limits::of(spec), self.metrics.clone())
            .ok()?
            .under(permit)
            .led_by(self.leadership.clone())
            .for_budget(namespace, &budget.name_any());
        Some(Destination {
            client,
            plan_id: spec.plan_id.clone(),
            mirror: self.budget_links.mirror(namespace, &budget.name_any()),
            closed_through: spec.closed_through.clone(),
            window: duration::parse(&spec.writes.batch_window.0)
                .unwrap_or(Duration::from_millis(200)),
            max_batch: spec.writes.max_batch_size as usize,
            key: MirrorKey {
                namespace: namespace.to_owned(),
                budget: budget.name_any(),
                budget_links: self.budget_links.clone(),
            },
            written: self.written.clone(),
        })
    }
}

/// Binds previews and approvals to one Budget and the YNAB plan it mirrors: the same change in
/// another Budget, or after the Budget is pointed at another plan, hashes apart.
pub fn scope_of(namespace: &str, budget: &Budget) -> String {
    format!("{namespace}/{}/{}", budget.name_any(), budget.spec.plan_id)
}

/// The kind of `K`, as a metrics label.
fn kind_label<K: Resource<DynamicType = ()>>() -> &'static str {
    match K::kind(&()) {
        Cow::Borrowed(kind) => kind,
        Cow::Owned(_) => "Unknown",
    }
}

/// Counts one reconcile of a `K`, and times it until the returned guard is dropped.
pub fn measure<K: Resource<DynamicType = ()>>(ctx: &Context) -> Measure {
    Measure::start(&ctx.metrics, kind_label::<K>())
}

/// What every controller does with a failed reconcile: count it, log it, and try again after
/// its object's next delay (see [`retry_after`]).
pub fn error_policy<K: Resource<DynamicType = ()>>(
    object: Arc<K>,
    error: &Error,
    ctx: Arc<Context>,
) -> Action {
    let kind = kind_label::<K>();
    ctx.metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind,
            reason: error.reason(),
        })
        .inc();
    let conflict = error.is_conflict();
    if conflict {
        tracing::debug!(%error, kind, "reconcile started from an outdated copy");
    } else {
        tracing::warn!(%error, kind, "reconcile failed");
    }
    let key = failure_key(&ObjectRef::from_obj(object.as_ref()));
    let draw = uuid::Uuid::new_v4().as_u64_pair().0;
    Action::requeue(retry_after(conflict, &ctx.failures, &key, draw))
}

/// How long a failed reconcile of `key` waits. A conflict: our cached copy was behind a write
/// (ours, or another reconciler's on the same object, as the plan's and the request's on an
/// approval just given); the watch catches up in milliseconds, and a status write of another
/// reconciler wakes nobody here, so look again soon, at a random moment (`draw`), or two that
/// collided would collide again. Anything else (the API server down, a journal write refused)
/// backs off per object, with jitter, from 250 ms to about 20 s, so a thousand objects that
/// failed together neither retry in step nor wait 15 s after a blip.
pub fn retry_after(conflict: bool, failures: &Attempts, key: &str, draw: u64) -> Duration {
    if conflict {
        CONFLICT_RETRY + Duration::from_millis(draw % CONFLICT_JITTER_MS)
    } else {
        failures.backoff(key)
    }
}

/// The least wait before a reconcile that met a conflict looks again, and the most added to it.
const CONFLICT_RETRY: Duration = Duration::from_millis(30);
const CONFLICT_JITTER_MS: u64 = 120;

/// The key of an object's failures in [`Context::failures`].
fn failure_key<K: Resource<DynamicType = ()>>(object: &ObjectRef<K>) -> String {
    format!("{}/{object}", kind_label::<K>())
}

/// Runs a controller to its end, logging the reconciles that did not complete.
pub async fn drain<K, E>(results: impl Stream<Item = Result<(ObjectRef<K>, Action), E>>)
where
    K: Resource,
    E: std::fmt::Display,
{
    results
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, "reconcile did not complete");
            }
        })
        .await;
}

/// [`drain`], for a controller whose errors go through [`error_policy`]: a reconcile that
/// completes forgets its object's failures, so the next one starts from the first delay.
pub async fn drain_forgetting<K, E>(
    results: impl Stream<Item = Result<(ObjectRef<K>, Action), E>>,
    ctx: Arc<Context>,
) where
    K: Resource<DynamicType = ()>,
    E: std::fmt::Display,
{
    let forgetting = results.inspect(|result| {
        if let Ok((object, _)) = result {
            ctx.failures.succeeded(&failure_key(object));
        }
    });
    drain(forgetting).await;
}

/// A reconcile that could not finish; the controller retries it with backoff
/// ([`retry_after`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Journal(#[from] crate::k8s::journal::JournalError),
    /// An object written a moment ago is not in the shared cache yet: look again shortly.
    #[error("{0} is not in the cache yet")]
    CacheBehind(String),
}

impl Error {
    /// The API server refused a write made from an outdated copy (409).
    fn is_conflict(&self) -> bool {
        matches!(self, Error::Kube(e) if crate::k8s::is_conflict(e))
            || matches!(self, Error::CacheBehind(_))
    }

    /// A short label for the metrics.
    pub fn reason(&self) -> &'static str {
        if self.is_conflict() {
            return "Conflict";
        }
        match self {
            Error::Kube(_) => "KubeApi",
            Error::Journal(_) => "Journal",
            Error::CacheBehind(_) => "CacheBehind",
        }
    }
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
