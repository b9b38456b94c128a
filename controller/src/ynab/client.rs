//! The YNAB HTTP client: the only code that talks to YNAB. Every request passes the token's
//! request budget first, is counted in the metrics, and is retried only when that is safe.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::error::YnabError;
use super::permit::Permit;
#[cfg(feature = "test-hooks")]
use super::planted;
use super::window_record::WindowRecord;
use crate::leadership::Leadership;
use crate::logic::budget::api_url::AllowedApiUrl;
use crate::logic::runtime::request_priority::Priority;
use crate::logic::runtime::request_window::{self, Claim, Denied, RequestWindow};
use crate::logic::runtime::retry::{self, Failure, RequestKind};
use crate::logic::values::outside_text;
use crate::logic::values::token::Token;
use crate::metrics::{Metrics, RequestLabels};
use crate::ynab_model::{
    Envelope, ErrorResponse, PatchTransactionsWrapper, PlanData, SaveTransactionWithIdOrImportId,
    SaveTransactionsData,
};

/// YNAB cuts requests off at 30 s itself.
const TIMEOUT: Duration = Duration::from_secs(35);

/// The request budget of one token, shared by every client that uses the token.
pub type SharedWindow = Arc<Mutex<RequestWindow>>;

/// A client for one token and one API base URL that the operator's allowlist allows.
#[derive(Clone)]
pub struct YnabClient {
    http: reqwest::Client,
    base: AllowedApiUrl,
    token: Token,
    window: SharedWindow,
    metrics: Arc<Metrics>,
    /// Checked before every request: see [`Permit`].
    permit: Permit,
    /// Checked before every request too: only the leader sends.
    leadership: Leadership,
    /// Where the window's requests are recorded for the processes after this one, if anywhere.
    record: Option<Arc<WindowRecord>>,
    /// The Budget (`namespace/name`) its requests go out for: Budgets sharing a token take
    /// turns at the paced share of its hour.
    budget: Arc<str>,
}

impl std::fmt::Debug for YnabClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("YnabClient")
            .field("base", &self.base)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// One request: what the metrics and error messages call it, and what to send.
struct Call<'a, B> {
    method: Method,
    /// Route template for metrics, such as `GET /plans/{plan_id}`.
    endpoint: &'static str,
    /// Path segments below the base URL, each percent-encoded on its own.
    path: Vec<String>,
    query: Vec<(&'static str, String)>,
    body: Option<&'a B>,
    /// The record concerned, for error messages: `plan 6f1a…`.
    what: String,
    /// Why it goes out: what it may spend of the hour (see [`Priority`]).
    priority: Priority,
}

/// A connection pool for YNAB requests.
pub fn http() -> Result<reqwest::Client, YnabError> {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| YnabError::Unreachable {
            what: "the HTTP client".into(),
            reason: outside_text::sanitize(&e.to_string(), outside_text::MAX_CHARS),
        })
}

impl YnabClient {
    /// A client for `base` (such as `https://api.ynab.com/v1`, as allowed by
    /// [`crate::logic::budget::api_url::ApiUrlAllowlist::check`]) with `token`, counting requests against
    /// `window`.
    pub fn new(
        base: &AllowedApiUrl,
        token: Token,
        window: SharedWindow,
        metrics: Arc<Metrics>,
    ) -> Result<Self, YnabError> {
        Ok(Self::on(http()?, base, token, window, metrics))
    }

    /// Like [`YnabClient::new`], on an existing connection pool (from [`http`]), so that every
    /// client of one token and URL shares one.
    pub fn on(
        http: reqwest::Client,
        base: &AllowedApiUrl,
        token: Token,
        window: SharedWindow,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            http,
            base: base.clone(),
            token,
            window,
            metrics,
            permit: Permit::default(),
            leadership: Leadership::sole(),
            record: None,
            budget: Arc::from(""),
        }
    }

    /// The same client, recording its window's requests in `record` before each goes out.
    pub fn recorded(self, record: Option<Arc<WindowRecord>>) -> Self {
        Self { record, ..self }
    }

    /// The request window this client counts against.
    pub fn window(&self) -> &SharedWindow {
        &self.window
    }

    /// The same client, sending nothing once `permit` is withdrawn.
    pub fn under(self, permit: Permit) -> Self {
        Self { permit, ..self }
    }

    /// The same client, its requests going out for the Budget `name` in `namespace`.
    pub fn for_budget(self, namespace: &str, name: &str) -> Self {
        Self {
            budget: Arc::from(request_window::budget_of(namespace, name)),
            ..self
        }
    }

    /// The same client, sending nothing while this process is not the leader.
    pub fn led_by(self, leadership: Leadership) -> Self {
        Self { leadership, ..self }
    }

    /// The whole plan, or with `since` only what changed after that server knowledge: the one
    /// request a mirror sync makes.
    pub async fn plan(
        &self,
        plan_id: &str,
        since: Option<i64>,
        priority: Priority,
    ) -> Result<PlanData, YnabError> {
        self.execute::<(), _>(Call {
            method: Method::GET,
            endpoint: "GET /plans/{plan_id}",
            path: vec!["plans".into(), plan_id.into()],
            query: since
                .map(|k| ("last_knowledge_of_server", k.to_string()))
                .into_iter()
                .collect(),
            body: None,
            what: format!("plan {plan_id}"),
            priority,
        })
        .await
    }

    /// Updates many transactions in one request (`PATCH /plans/{plan_id}/transactions`), each
    /// found by id. Repeating it sets the same values, so a server error is retried; a broken
    /// connection is not, and comes back as [`YnabError::OutcomeUnknown`].
    pub async fn patch_transactions(
        &self,
        plan_id: &str,
        items: Vec<SaveTransactionWithIdOrImportId>,
        priority: Priority,
    ) -> Result<SaveTransactionsData, YnabError> {
        let what = match items.as_slice() {
            [one] => format!(
                "the update of transaction {}",
                one.id.as_deref().unwrap_or("?")
            ),
            many => format!(
                "the bulk update of {} transactions in plan {plan_id}",
                many.len()
            ),
        };
        let body = PatchTransactionsWrapper {
            transactions: items,
        };
        let call = || Call {
            method: Method::PATCH,
            endpoint: "PATCH /plans/{plan_id}/transactions",
            path: vec!["plans".into(), plan_id.into(), "transactions".into()],
            query: Vec::new(),
            body: Some(&body),
            what: what.clone(),
            priority,
        };
        let result = self.execute(call()).await;
        #[cfg(feature = "test-hooks")]
        if matches!(result, Err(YnabError::OutcomeUnknown { .. })) && planted::resend_after_drop() {
            return self.execute(call()).await;
        }
        result
    }

    async fn execute<B: Serialize, T: DeserializeOwned>(
        &self,
        call: Call<'_, B>,
    ) -> Result<T, YnabError> {
        let kind = match call.method {
            Method::GET => RequestKind::Read,
            Method::POST => RequestKind::Create,
            _ => RequestKind::IdempotentWrite,
        };
        let mut attempt = 1;
        loop {
            let (failure, error) = match self.attempt(&call, kind).await {
                Ok(data) => return Ok(data),
                Err(Attempt::Final(e)) => return Err(e),
                Err(Attempt::Retryable(failure, e)) => (failure, e),
            };
            let Some(delay) = retry::next_delay(kind, failure, attempt) else {
                return Err(error);
            };
            tracing::debug!(endpoint = call.endpoint, attempt, %error, "retrying YNAB request");
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    async fn attempt<B: Serialize, T: DeserializeOwned>(
        &self,
        call: &Call<'_, B>,
        kind: RequestKind,
    ) -> Result<T, Attempt> {
        // Right before sending, retries included: a withdrawn permit stops a queued write.
        if self.permit.is_withdrawn() {
            return Err(Attempt::Final(YnabError::Withdrawn {
                what: call.what.clone(),
            }));
        }
        if !self.leadership.holds() {
            return Err(Attempt::Final(YnabError::NotLeader {
                what: call.what.clone(),
            }));
        }
        let uncounted = |reason: String| {
            Attempt::Final(YnabError::Uncounted {
                what: call.what.clone(),
                reason,
            })
        };
        if let Some(record) = &self.record {
            record.read_once(&self.window).await.map_err(uncounted)?;
        }
        self.acquire(call.priority, call.method == Method::PATCH)?;
        if let Some(record) = &self.record {
            record.write(&self.window).await.map_err(uncounted)?;
        }
        let path: Vec<&str> = call.path.iter().map(String::as_str).collect();
        let mut request = self
            .http
            .request(call.method.clone(), self.base.endpoint(&path))
            .query(&call.query)
            .bearer_auth(self.token.expose());
        if let Some(body) = call.body {
            request = request.json(body);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                self.count(call, "transport");
                return Err(transport_failure(call, kind, &e));
            }
        };
        let status = response.status();
        self.count(call, status.as_str());
        let body = response
            .bytes()
            .await
            .map_err(|e| transport_failure(call, kind, &e))?;
        self.settle(status);
        if status.is_success() {
            return serde_json::from_slice::<Envelope<T>>(&body)
                .map(|e| e.data)
                .map_err(|e| {
                    Attempt::Final(YnabError::Decode {
                        what: call.what.clone(),
                        reason: decode_failure(&e),
                    })
                });
        }
        Err(self.refusal(call, status, &body))
    }

    /// A place in the window for a request; `write` is a bulk update, which follows the fresh
    /// read it was decided on (see [`RequestWindow::try_acquire_write`]).
    fn acquire(&self, priority: Priority, write: bool) -> Result<(), Attempt> {
        let mut window = self.window.lock().expect("request window lock");
        let now = Timestamp::now();
        let claim = Claim {
            priority,
            budget: &self.budget,
        };
        let acquired = if write {
            window.try_acquire_write(now, claim)
        } else {
            window.try_acquire(now, claim)
        };
        acquired.map_err(|denied| {
            Attempt::Final(match denied {
                Denied::BudgetSpent { until } => YnabError::BudgetSpent {
                    limit: window.limit(),
                    until,
                },
                Denied::RateLimited { until } => YnabError::RateLimited { until },
                Denied::Paced { until } => YnabError::Paced {
                    priority: priority.label(),
                    reserved: window.limits().reserved(),
                    limit: window.limit(),
                    until,
                },
            })
        })
    }

    fn settle(&self, status: StatusCode) {
        let mut window = self.window.lock().expect("request window lock");
        if status == StatusCode::TOO_MANY_REQUESTS {
            window.rate_limited(Timestamp::now());
        } else {
            window.answered();
        }
    }

    fn refusal<B>(&self, call: &Call<'_, B>, status: StatusCode, body: &[u8]) -> Attempt {
        let parsed = serde_json::from_slice::<ErrorResponse>(body).ok();
        let answer = outside_text::refusal(
            status.as_u16(),
            parsed
                .as_ref()
                .map(|r| (r.error.id.as_str(), r.error.name.as_str())),
        );
        let what = call.what.clone();
        let error = match status.as_u16() {
            401 => YnabError::Unauthorized { answer },
            403 => YnabError::Forbidden { answer },
            404 => YnabError::NotFound { what, answer },
            409 => YnabError::Conflict { what, answer },
            429 => {
                let until = self
                    .window
                    .lock()
                    .expect("request window lock")
                    .paused_until(Timestamp::now());
                YnabError::RateLimited {
                    until: until.unwrap_or_else(Timestamp::now),
                }
            }
            500..=599 => {
                return Attempt::Retryable(
                    Failure::ServerError,
                    YnabError::Server { what, answer },
                );
            }
            _ => YnabError::BadRequest { what, answer },
        };
        Attempt::Final(error)
    }

    fn count<B>(&self, call: &Call<'_, B>, status: &str) {
        self.metrics
            .ynab_requests
            .get_or_create(&RequestLabels {
                endpoint: call.endpoint,
                status: status.to_owned(),
                priority: call.priority.label(),
            })
            .inc();
    }
}

/// How one attempt ended, when it did not succeed.
enum Attempt {
    Final(YnabError),
    Retryable(Failure, YnabError),
}

/// A request with no answer. A write that may have reached YNAB is in doubt: it is never
/// retried here, and the caller settles it by reading.
fn transport_failure<B>(call: &Call<'_, B>, kind: RequestKind, e: &reqwest::Error) -> Attempt {
    let sent = !e.is_connect();
    let error = if sent && kind != RequestKind::Read {
        YnabError::OutcomeUnknown {
            what: call.what.clone(),
        }
    } else {
        YnabError::Unreachable {
            what: call.what.clone(),
            reason: outside_text::sanitize(&causes(e), outside_text::MAX_CHARS),
        }
    };
    Attempt::Retryable(Failure::Transport, error)
}

/// Why a request got no answer, from reqwest's causes: its own text ("error sending request for
/// url …") repeats what the message already names and says nothing of refused, reset or timed
/// out.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let chain: Vec<String> = std::iter::successors(e.source(), |c| c.source())
        .map(ToString::to_string)
        .collect();
    if chain.is_empty() {
        e.to_string()
    } else {
        chain.join(": ")
    }
}

/// Why a success body did not parse, without any of the body: serde's own message may quote it.
fn decode_failure(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Io => "it could not be read",
        Category::Syntax => "it is not valid JSON",
        Category::Data => "a field has an unexpected type or value",
        Category::Eof => "it ends early",
    };
    format!("{what}, at line {} column {}", e.line(), e.column())
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
