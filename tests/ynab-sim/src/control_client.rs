//! `SimControl`: a typed client for the `/__sim` controls, usable from any process.

use jiff::Timestamp;
use ledgerops::ynab_model::{NewTransaction, TransactionData, TransactionDetail};
use reqwest::{Method, RequestBuilder};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::SimError;
use crate::controls::{ClockSet, ClockView, Edited, LatencySet, RateLimitSet};
use crate::counters::Counters;
use crate::faults::{DropFault, Faults, StatusFault};
use crate::fixture::Fixture;
use crate::journal::Entry;

/// Record kinds an out-of-band edit can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    Transaction,
    Category,
    Payee,
    Account,
}

impl RecordKind {
    fn path(self) -> &'static str {
        match self {
            RecordKind::Transaction => "transactions",
            RecordKind::Category => "categories",
            RecordKind::Payee => "payees",
            RecordKind::Account => "accounts",
        }
    }
}

#[derive(Debug, Clone)]
pub struct SimControl {
    base: String,
    http: reqwest::Client,
}

impl SimControl {
    /// `base_url` is the simulator's root, e.g. `http://127.0.0.1:41234`.
    pub fn new(base_url: &str) -> Self {
        SimControl {
            base: format!("{}/__sim", base_url.trim_end_matches('/')),
            http: reqwest::Client::new(),
        }
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    async fn send(request: RequestBuilder) -> Result<reqwest::Response, SimError> {
        let response = request.send().await?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(SimError::Control {
            status: response.status().as_u16(),
            body: response.text().await.unwrap_or_default(),
        })
    }

    async fn call<T: DeserializeOwned>(request: RequestBuilder) -> Result<T, SimError> {
        Ok(Self::send(request).await?.json().await?)
    }

    async fn act(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<(), SimError> {
        let request = self.request(method, path);
        Self::send(match body {
            Some(body) => request.json(body),
            None => request,
        })
        .await
        .map(drop)
    }

    pub async fn load_fixture(&self, fixture: &Fixture) -> Result<(), SimError> {
        self.act(Method::POST, "/fixture", Some(fixture)).await
    }

    /// Back to the loaded fixture; also clears faults, counters and rate-limit windows.
    pub async fn reset(&self) -> Result<(), SimError> {
        self.act(Method::POST, "/reset", None::<&()>).await
    }

    pub async fn clock(&self) -> Result<ClockView, SimError> {
        Self::call(self.request(Method::GET, "/clock")).await
    }

    pub async fn set_clock(&self, set: &ClockSet) -> Result<ClockView, SimError> {
        Self::call(self.request(Method::POST, "/clock").json(set)).await
    }

    pub async fn set_now(&self, now: Timestamp) -> Result<ClockView, SimError> {
        self.set_clock(&ClockSet {
            now: Some(now),
            ..ClockSet::default()
        })
        .await
    }

    pub async fn advance_clock(&self, seconds: i64) -> Result<ClockView, SimError> {
        self.set_clock(&ClockSet {
            advance_seconds: Some(seconds),
            ..ClockSet::default()
        })
        .await
    }

    pub async fn set_rate_limit(&self, per_hour: u32) -> Result<(), SimError> {
        self.act(Method::PUT, "/rate-limit", Some(&RateLimitSet { per_hour }))
            .await
    }

    /// An edit made in the YNAB app: `fields` is a partial JSON object of the record.
    pub async fn edit(
        &self,
        plan_id: &str,
        kind: RecordKind,
        id: &str,
        fields: &Value,
    ) -> Result<Edited, SimError> {
        let path = format!("/plans/{plan_id}/{}/{id}", kind.path());
        Self::call(self.request(Method::PATCH, &path).json(fields)).await
    }

    pub async fn create_transaction(
        &self,
        plan_id: &str,
        new: &NewTransaction,
    ) -> Result<TransactionData, SimError> {
        let path = format!("/plans/{plan_id}/transactions");
        Self::call(self.request(Method::POST, &path).json(new)).await
    }

    /// A transaction as the simulator holds it now; not counted as a request.
    pub async fn transaction(
        &self,
        plan_id: &str,
        id: &str,
    ) -> Result<TransactionDetail, SimError> {
        let path = format!("/plans/{plan_id}/transactions/{id}");
        Self::call(self.request(Method::GET, &path)).await
    }

    pub async fn delete_transaction(&self, plan_id: &str, id: &str) -> Result<(), SimError> {
        let path = format!("/plans/{plan_id}/transactions/{id}");
        self.act(Method::DELETE, &path, None::<&()>).await
    }

    pub async fn inject_status(&self, fault: &StatusFault) -> Result<(), SimError> {
        self.act(Method::POST, "/faults/status", Some(fault)).await
    }

    pub async fn drop_after_write(&self, fault: &DropFault) -> Result<(), SimError> {
        self.act(Method::POST, "/faults/drop", Some(fault)).await
    }

    pub async fn set_latency(&self, latency_ms: u64) -> Result<(), SimError> {
        self.act(
            Method::PUT,
            "/faults/latency",
            Some(&LatencySet { latency_ms }),
        )
        .await
    }

    pub async fn faults(&self) -> Result<Faults, SimError> {
        Self::call(self.request(Method::GET, "/faults")).await
    }

    pub async fn clear_faults(&self) -> Result<(), SimError> {
        self.act(Method::DELETE, "/faults", None::<&()>).await
    }

    pub async fn counters(&self) -> Result<Counters, SimError> {
        Self::call(self.request(Method::GET, "/counters")).await
    }

    /// The journal's entries after `seq`, oldest first, one page (see [`crate::JOURNAL_PAGE`]).
    pub async fn journal_after(&self, seq: u64) -> Result<Vec<Entry>, SimError> {
        Self::call(self.request(Method::GET, &format!("/journal?after={seq}"))).await
    }

    pub async fn reset_counters(&self) -> Result<(), SimError> {
        self.act(Method::DELETE, "/counters", None::<&()>).await
    }
}
