//! Each Budget's link to YNAB, shared by the reconcilers of one process: the token it paired with
//! and the permit its clients carry, that token's request window and connections, and the
//! Budget's mirror. Kubernetes holds everything durable; this is only what is cheaper to keep in
//! memory than to ask YNAB again.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use tokio::sync::broadcast;

use super::client::{self, SharedWindow, YnabClient};
use super::error::YnabError;
use super::permit::Permit;
use super::window_record::WindowRecord;
use crate::api::common::SecretKeyRef;
use crate::logic::budget::api_url::AllowedApiUrl;
use crate::logic::budget::mirror::Mirror;
use crate::logic::budget::sync_due::SyncedFor;
use crate::logic::runtime::pacing::Limits;
use crate::logic::runtime::request_record::RecordStore;
use crate::logic::runtime::request_window::RequestWindow;
use crate::logic::status::alerts::RequestUse;
use crate::logic::values::token::Token;
use crate::metrics::Metrics;

/// A Budget's mirror and the plan it mirrors: a changed plan id or API URL starts afresh.
#[derive(Debug, Default)]
pub struct MirrorSlot {
    pub source: (String, String),
    pub mirror: Mirror,
    /// When this process last synced it, and for what: kept here, never read from a status
    /// someone else could write.
    pub synced: Option<(std::time::Instant, SyncedFor)>,
    /// When the syncs a person asked for (an annotation alone) ran, the recent ones: they are
    /// limited (see `sync_due::ASKED_BURST`).
    pub asked: Vec<std::time::Instant>,
}

impl MirrorSlot {
    /// Whether this process has synced the mirror with YNAB for plan `plan_id`: a mirror of
    /// another plan (the Budget's `planId` changed) or one never synced says nothing yet.
    pub fn synced_for(&self, plan_id: &str) -> bool {
        self.mirror.has_read() && self.source.0 == plan_id
    }
}

/// A Budget's mirror. `state` is locked only to read or update it in memory, never across a
/// request; `turn` lets one sync or batch write at a time talk to YNAB for the Budget (each
/// decides on the state the one before it left), without keeping readers waiting on the network.
#[derive(Debug, Default)]
pub struct MirrorCell {
    pub state: tokio::sync::RwLock<MirrorSlot>,
    pub turn: tokio::sync::Mutex<()>,
    /// The last read back the request window held back, until the time it named: every
    /// unsettled write of the Budget waits on the same read, so none asks again before then.
    pub read_back_held: std::sync::Mutex<Option<YnabError>>,
}

pub type SharedMirror = Arc<MirrorCell>;

/// Transactions of a Budget that a sync found changed in YNAB: their reconcilers look again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorChange {
    pub namespace: String,
    pub budget: String,
    pub transaction_ids: Vec<String>,
}

/// What a Budget's last sync paired: the token it read, the Secret key it read it from, and the
/// allowed URL it sent it to. Writes reuse the pair only while the Budget still names both.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub url: AllowedApiUrl,
    pub secret: SecretKeyRef,
    pub token: Token,
}

/// A Budget's credentials and the permit every client made from them carries.
struct Paired {
    credentials: Credentials,
    permit: Permit,
}

/// A Budget, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BudgetKey {
    pub namespace: String,
    pub name: String,
}

impl BudgetKey {
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// A token's request window, by API base URL and token.
type WindowKey = (String, Token);

/// What every client of one token and URL shares: its request window, its connection pool, and
/// YNAB's refusal of the token, if it refused it.
struct TokenShare {
    window: SharedWindow,
    record: Option<Arc<WindowRecord>>,
    http: reqwest::Client,
    refused: Option<(YnabError, Instant)>,
}

/// The process-wide links of every Budget to YNAB.
pub struct BudgetLinks {
    changes: broadcast::Sender<MirrorChange>,
    /// By API base URL and token: YNAB counts per token, and a test may run several YNABs.
    windows: Mutex<HashMap<WindowKey, TokenShare>>,
    /// The window each Budget last synced through, kept while the Budget exists (suspended or
    /// not): a window no Budget uses any more is dropped.
    window_users: Mutex<HashMap<BudgetKey, WindowKey>>,
    mirrors: Mutex<HashMap<BudgetKey, SharedMirror>>,
    /// What each Budget's last successful pairing was: writes use it without reading the Secret
    /// again.
    credentials: Mutex<HashMap<BudgetKey, Paired>>,
    /// Where every token's requests are recorded for the next process, if anywhere.
    records: Option<Arc<dyn RecordStore>>,
}

impl Default for BudgetLinks {
    fn default() -> Self {
        Self {
            changes: broadcast::channel(1024).0,
            windows: Mutex::default(),
            window_users: Mutex::default(),
            mirrors: Mutex::default(),
            credentials: Mutex::default(),
            records: None,
        }
    }
}

impl BudgetLinks {
    /// Links whose windows record their requests in `records` (and read them back first).
    pub fn recording(records: Arc<dyn RecordStore>) -> Self {
        Self {
            records: Some(records),
            ..Self::default()
        }
    }

    /// Tells whoever listens that these transactions changed in YNAB.
    pub fn announce(&self, change: MirrorChange) {
        if !change.transaction_ids.is_empty() {
            // Nobody listening is fine: no controller cares yet.
            let _ = self.changes.send(change);
        }
    }

    /// Listens to [`BudgetLinks::announce`].
    pub fn subscribe(&self) -> broadcast::Receiver<MirrorChange> {
        self.changes.subscribe()
    }

    /// A client for `token` at `api_url`, sharing one request window (set to `limits`) and one
    /// connection pool with every other client of that token and URL.
    pub fn client(
        &self,
        api_url: &AllowedApiUrl,
        token: &Token,
        limits: Limits,
        metrics: Arc<Metrics>,
    ) -> Result<YnabClient, YnabError> {
        let (window, record, http) = {
            let mut windows = self.windows.lock().expect("budget links lock");
            let key = (api_url.as_str().to_owned(), token.clone());
            let share = match windows.entry(key) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(TokenShare {
                    window: Arc::new(Mutex::new(RequestWindow::with(limits))),
                    record: self.records.clone().map(|records| {
                        Arc::new(WindowRecord::new(records, api_url.as_str(), token))
                    }),
                    http: client::http()?,
                    refused: None,
                }),
            };
            (
                share.window.clone(),
                share.record.clone(),
                share.http.clone(),
            )
        };
        window.lock().expect("window lock").set_limits(limits);
        Ok(YnabClient::on(http, api_url, token.clone(), window, metrics).recorded(record))
    }

    /// Remembers that YNAB refused `token` at `api_url` (or, with `None`, that it accepted it).
    pub fn set_refusal(&self, api_url: &AllowedApiUrl, token: &Token, refusal: Option<YnabError>) {
        let key = (api_url.as_str().to_owned(), token.clone());
        if let Some(share) = self
            .windows
            .lock()
            .expect("budget links lock")
            .get_mut(&key)
        {
            share.refused = refusal.map(|e| (e, Instant::now()));
        }
    }

    /// YNAB's refusal of `token` at `api_url`, if it came less than `for_at_least` ago: the same
    /// token is refused again, so asking once more costs a request and changes nothing.
    pub fn refusal(
        &self,
        api_url: &AllowedApiUrl,
        token: &Token,
        for_at_least: Duration,
    ) -> Option<YnabError> {
        let key = (api_url.as_str().to_owned(), token.clone());
        let windows = self.windows.lock().expect("budget links lock");
        let (error, at) = windows.get(&key)?.refused.as_ref()?;
        (at.elapsed() < for_at_least).then(|| error.clone())
    }

    /// The mirror of the Budget `namespace/name`.
    pub fn mirror(&self, namespace: &str, name: &str) -> SharedMirror {
        self.mirrors
            .lock()
            .expect("budget links lock")
            .entry(BudgetKey::new(namespace, name))
            .or_default()
            .clone()
    }

    /// Remembers what the Budget `namespace/name` synced with. Another pairing than the last
    /// withdraws the last one's permit: nothing queued with the old token goes out.
    pub fn set_credentials(&self, namespace: &str, name: &str, credentials: Credentials) {
        let budget = BudgetKey::new(namespace, name);
        let window = (
            credentials.url.as_str().to_owned(),
            credentials.token.clone(),
        );
        let mut all = self.credentials.lock().expect("budget links lock");
        match all.get(&budget) {
            Some(paired) if paired.credentials == credentials => {}
            _ => {
                let paired = Paired {
                    credentials,
                    permit: Permit::default(),
                };
                if let Some(old) = all.insert(budget.clone(), paired) {
                    old.permit.withdraw();
                }
            }
        }
        drop(all);
        let previous = self
            .window_users
            .lock()
            .expect("budget links lock")
            .insert(budget, window);
        if previous.is_some() {
            self.prune_windows();
        }
    }

    /// The token the Budget `namespace/name` last synced with and the permit its clients carry,
    /// if it was read from `secret` and sent to `url`: a Budget that since names another Secret
    /// or URL writes nothing until a sync has checked them.
    pub fn credentials_for(
        &self,
        namespace: &str,
        name: &str,
        url: &AllowedApiUrl,
        secret: &SecretKeyRef,
    ) -> Option<(Token, Permit)> {
        self.credentials
            .lock()
            .expect("budget links lock")
            .get(&BudgetKey::new(namespace, name))
            .filter(|p| &p.credentials.url == url && &p.credentials.secret == secret)
            .map(|p| (p.credentials.token.clone(), p.permit.clone()))
    }

    /// Forgets the token of a Budget that was suspended, or whose URL or Secret was refused, and
    /// withdraws its permit: nothing writes with it, not even a write already queued.
    pub fn forget_credentials(&self, namespace: &str, name: &str) {
        let removed = self
            .credentials
            .lock()
            .expect("budget links lock")
            .remove(&BudgetKey::new(namespace, name));
        if let Some(paired) = removed {
            paired.permit.withdraw();
        }
    }

    /// Forgets everything of a Budget that no longer exists: its mirror, its token (withdrawn),
    /// and its token's request window once no other Budget uses it.
    pub fn forget(&self, namespace: &str, name: &str) {
        let budget = BudgetKey::new(namespace, name);
        self.forget_credentials(namespace, name);
        self.mirrors
            .lock()
            .expect("budget links lock")
            .remove(&budget);
        self.window_users
            .lock()
            .expect("budget links lock")
            .remove(&budget);
        self.prune_windows();
    }

    /// Every Budget something is held for.
    pub fn budgets(&self) -> Vec<BudgetKey> {
        let mut all: Vec<BudgetKey> = self
            .mirrors
            .lock()
            .expect("budget links lock")
            .keys()
            .cloned()
            .collect();
        all.extend(
            self.credentials
                .lock()
                .expect("budget links lock")
                .keys()
                .cloned(),
        );
        all.extend(
            self.window_users
                .lock()
                .expect("budget links lock")
                .keys()
                .cloned(),
        );
        all.sort();
        all.dedup();
        all
    }

    /// Each Budget's use of its token's request window at `now`, by (namespace, name): Budgets
    /// sharing a token show the same window.
    pub fn request_use(&self, now: Timestamp) -> BTreeMap<(String, String), RequestUse> {
        let users = self.window_users.lock().expect("budget links lock").clone();
        let windows = self.windows.lock().expect("budget links lock");
        users
            .into_iter()
            .filter_map(|(budget, key)| {
                let mut window = windows.get(&key)?.window.lock().expect("window lock");
                let used = RequestUse {
                    used: window.used(now),
                    limit: window.limit(),
                };
                Some(((budget.namespace, budget.name), used))
            })
            .collect()
    }

    /// Drops the request windows no Budget uses.
    fn prune_windows(&self) {
        let used: Vec<WindowKey> = self
            .window_users
            .lock()
            .expect("budget links lock")
            .values()
            .cloned()
            .collect();
        self.windows
            .lock()
            .expect("budget links lock")
            .retain(|k, _| used.contains(k));
    }
}

#[cfg(test)]
#[path = "budget_links_tests.rs"]
mod tests;
