//! `POST /webhooks/gitea`: verifies the signature, converts a comment delivery into a received
//! command and persists it as an AgentJob. Nothing else: it never calls Gitea and never parses
//! the command (that happens after the permission check). A push delivery wakes the ConfigRepos
//! that follow the pushed branch, and the rule proposals of a proposal's branch (202; they read
//! what to act on from Git and Gitea, never from the payload).
//!
//! Answers: 401 bad signature, 400 malformed or no `X-Gitea-Delivery`, 204 not a command,
//! 403 a command from a repository not on `--gitea-repository` (nothing stored; 403 rather than
//! 204 so that the repository's admins see in Gitea's delivery log that this hook is not
//! enabled here), 202 new command, 200 duplicate, 503 before the API server is reachable, 500
//! when persisting failed (so the delivery shows as failed in Gitea and can be redelivered).

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use k8s_openapi::jiff::Timestamp;

use crate::agent::store::{JobStore, Received};
use crate::logic::config_repo::push::{self, Push};
use crate::logic::job::trust::Allowlist;
use crate::logic::job::webhook::{Delivery, classify, signature_valid};

/// The endpoint's path.
pub const PATH: &str = "/webhooks/gitea";

/// The endpoint's state. The store is attached once the API server answered.
#[derive(Clone)]
pub struct Webhook {
    secret: Arc<Vec<u8>>,
    bot: Arc<str>,
    repositories: Arc<Allowlist>,
    store: Arc<OnceLock<JobStore>>,
    pushes: tokio::sync::broadcast::Sender<Push>,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("secret", &"<redacted>")
            .field("bot", &self.bot)
            .field("repositories", &self.repositories)
            .finish()
    }
}

impl Webhook {
    pub fn new(secret: Vec<u8>, bot: &str, repositories: Allowlist) -> Self {
        Self {
            secret: Arc::new(secret),
            bot: Arc::from(bot),
            repositories: Arc::new(repositories),
            store: Arc::new(OnceLock::new()),
            // Pushes wait here only until the ConfigRepo controller and the rule proposals take
            // them: a short queue.
            pushes: tokio::sync::broadcast::channel(64).0,
        }
    }

    /// The pushes received from now on (none reach a replica that is not leading).
    pub fn pushes(&self) -> tokio::sync::broadcast::Receiver<Push> {
        self.pushes.subscribe()
    }

    /// Starts persisting into `store`.
    pub fn attach(&self, store: JobStore) {
        let _ = self.store.set(store);
    }
}

/// The router serving [`PATH`].
pub fn router(webhook: Webhook) -> Router {
    Router::new().route(PATH, post(handle)).with_state(webhook)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn handle(
    State(webhook): State<Webhook>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    let signature = header(&headers, "X-Gitea-Signature").unwrap_or_default();
    if !signature_valid(&webhook.secret, &body, signature) {
        return (StatusCode::UNAUTHORIZED, "bad signature\n");
    }
    if header(&headers, "X-Gitea-Event") == Some("push") {
        let Some(push) = push::parse(&body) else {
            return (StatusCode::BAD_REQUEST, "malformed delivery\n");
        };
        tracing::info!(git_ref = %push.git_ref, "push received: syncing the ConfigRepos that follow it");
        // No receiver (a standby replica): the leader's interval picks the push up.
        let _ = webhook.pushes.send(push);
        return (StatusCode::ACCEPTED, "sync requested\n");
    }
    let delivery = classify(
        header(&headers, "X-Gitea-Event"),
        header(&headers, "X-Gitea-Event-Type"),
        header(&headers, "X-Gitea-Delivery"),
        &body,
        &webhook.bot,
    );
    let incoming = match delivery {
        Ok(Delivery::Command(c)) => c,
        Ok(Delivery::Ignored(why)) => {
            tracing::debug!(why, "webhook ignored");
            return (StatusCode::NO_CONTENT, "");
        }
        Err(e) => {
            tracing::info!(error = %e, "malformed webhook");
            return (StatusCode::BAD_REQUEST, "malformed delivery\n");
        }
    };
    if !webhook.repositories.allows(&incoming.repository) {
        tracing::warn!(repository = %incoming.repository, delivery = %incoming.delivery_id, "command from a repository not on --gitea-repository; not stored");
        return (StatusCode::FORBIDDEN, "repository not allowed\n");
    }
    let Some(store) = webhook.store.get() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "starting\n");
    };
    match store.receive(&incoming, Timestamp::now()).await {
        Ok(Received::New { name, sequence }) => {
            tracing::info!(job = %name, sequence, delivery = %incoming.delivery_id, "command received");
            (StatusCode::ACCEPTED, "accepted\n")
        }
        Ok(Received::Duplicate { name }) => {
            tracing::debug!(job = %name, delivery = %incoming.delivery_id, "duplicate delivery");
            (StatusCode::OK, "duplicate\n")
        }
        Err(e) => {
            tracing::warn!(error = %e, delivery = %incoming.delivery_id, "could not persist a command");
            (StatusCode::INTERNAL_SERVER_ERROR, "not persisted\n")
        }
    }
}
