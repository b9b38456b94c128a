//! A minimal JSON client for Gitea's REST API (`/api/v1`).

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::{Error, Result};

/// How a request authenticates. Basic is needed only to mint tokens.
#[derive(Clone, Copy)]
pub(super) enum Auth<'a> {
    None,
    Token(&'a str),
    Basic(&'a str, &'a str),
}

pub(super) struct Api {
    base: String,
    http: reqwest::Client,
}

impl Api {
    pub fn new(base: &str) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            // A shared Gitea outlives the runtimes of the tests that use it, and a pooled
            // connection belongs to the runtime that opened it: never reuse one.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| api_error("building the HTTP client", e))?;
        Ok(Self {
            base: format!("{base}/api/v1"),
            http,
        })
    }

    /// Sends `method path` with an optional JSON body; returns the JSON answer, or `Null` when
    /// there is none (204). Any non-2xx status is an error carrying Gitea's message.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        auth: Auth<'_>,
        body: Option<&Value>,
    ) -> Result<Value> {
        let call = format!("{method} {path}");
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        req = match auth {
            Auth::None => req,
            Auth::Token(token) => req.header("Authorization", format!("token {token}")),
            Auth::Basic(user, password) => req.basic_auth(user, Some(password)),
        };
        if let Some(body) = body {
            req = req.json(body);
        }
        let resp = req.send().await.map_err(|e| api_error(&call, e))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| api_error(&call, e))?;
        if !status.is_success() {
            return Err(api_error(&call, format!("HTTP {status}: {text}")));
        }
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .map_err(|e| api_error(&call, format!("answer is not JSON ({e}): {text}")))
    }
}

pub(super) fn api_error(call: &str, detail: impl ToString) -> Error {
    Error::GiteaApi {
        call: call.to_owned(),
        detail: detail.to_string(),
    }
}
