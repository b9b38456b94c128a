//! State shared by the reconcilers of one process: each token's request budget and each
//! Budget's mirror. Kubernetes holds everything durable; this is only what is cheaper to keep
//! in memory than to ask YNAB again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::api::common::SecretKeyRef;
use crate::logic::api_url::AllowedApiUrl;
use crate::logic::mirror::Mirror;
use crate::logic::request_window::RequestWindow;
use crate::ynab::client::SharedWindow;
use crate::ynab::token::Token;

/// A Budget's mirror and the plan it mirrors: a changed plan id or API URL starts afresh.
#[derive(Debug, Default)]
pub struct MirrorSlot {
    pub source: (String, String),
    pub mirror: Mirror,
}

/// A Budget's mirror, locked while a sync updates it.
pub type SharedMirror = Arc<tokio::sync::RwLock<MirrorSlot>>;

/// Transactions of a Budget that a sync found changed in YNAB: their reconcilers look again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorChange {
    pub namespace: String,
    pub budget: String,
    pub transaction_ids: Vec<String>,
}

/// What a Budget's last sync paired: the token it read, the Secret key it read it from, and the
/// allowed URL it sent it to. Writes reuse the pair only while the Budget still names both.
#[derive(Clone)]
pub struct Credentials {
    pub url: AllowedApiUrl,
    pub secret: SecretKeyRef,
    pub token: Token,
}

/// The process-wide registry.
pub struct Registry {
    changes: broadcast::Sender<MirrorChange>,
    /// By API base URL and token: YNAB counts per token, and a test may run several YNABs.
    windows: Mutex<HashMap<(String, Token), SharedWindow>>,
    mirrors: Mutex<HashMap<(String, String), SharedMirror>>,
    /// What each Budget's last successful pairing was: writes use it without reading the Secret
    /// again.
    credentials: Mutex<HashMap<(String, String), Credentials>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            changes: broadcast::channel(1024).0,
            windows: Mutex::default(),
            mirrors: Mutex::default(),
            credentials: Mutex::default(),
        }
    }
}

impl Registry {
    /// Tells whoever listens that these transactions changed in YNAB.
    pub fn announce(&self, change: MirrorChange) {
        if !change.transaction_ids.is_empty() {
            // Nobody listening is fine: no controller cares yet.
            let _ = self.changes.send(change);
        }
    }

    /// Listens to [`Registry::announce`].
    pub fn subscribe(&self) -> broadcast::Receiver<MirrorChange> {
        self.changes.subscribe()
    }

    /// The request window of `token` at `api_url`, shared by every Budget that uses it, set to
    /// `limit`.
    pub fn window(&self, api_url: &AllowedApiUrl, token: &Token, limit: u32) -> SharedWindow {
        let window = self
            .windows
            .lock()
            .expect("registry lock")
            .entry((api_url.as_str().to_owned(), token.clone()))
            .or_insert_with(|| Arc::new(Mutex::new(RequestWindow::new(limit))))
            .clone();
        window.lock().expect("window lock").set_limit(limit);
        window
    }

    /// The mirror of the Budget `namespace/name`.
    pub fn mirror(&self, namespace: &str, name: &str) -> SharedMirror {
        self.mirrors
            .lock()
            .expect("registry lock")
            .entry((namespace.into(), name.into()))
            .or_default()
            .clone()
    }

    /// Remembers what the Budget `namespace/name` synced with.
    pub fn set_credentials(&self, namespace: &str, name: &str, credentials: Credentials) {
        self.credentials
            .lock()
            .expect("registry lock")
            .insert((namespace.into(), name.into()), credentials);
    }

    /// What the Budget `namespace/name` last synced with, if it synced and was not refused since.
    pub fn credentials(&self, namespace: &str, name: &str) -> Option<Credentials> {
        self.credentials
            .lock()
            .expect("registry lock")
            .get(&(namespace.into(), name.into()))
            .cloned()
    }

    /// The token the Budget `namespace/name` last synced with, if it was read from `secret` and
    /// sent to `url`: a Budget that since names another Secret or URL writes nothing until a sync
    /// has checked them.
    pub fn token_for(
        &self,
        namespace: &str,
        name: &str,
        url: &AllowedApiUrl,
        secret: &SecretKeyRef,
    ) -> Option<Token> {
        self.credentials(namespace, name)
            .filter(|c| &c.url == url && &c.secret == secret)
            .map(|c| c.token)
    }

    /// Forgets the token of a Budget whose URL or Secret was refused: nothing writes with it.
    pub fn forget_credentials(&self, namespace: &str, name: &str) {
        self.credentials
            .lock()
            .expect("registry lock")
            .remove(&(namespace.into(), name.into()));
    }

    /// Forgets the mirror and token of a Budget that no longer exists.
    pub fn forget(&self, namespace: &str, name: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        self.mirrors.lock().expect("registry lock").remove(&key);
        self.credentials.lock().expect("registry lock").remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::api_url::ApiUrlAllowlist;

    fn secret(name: &str) -> SecretKeyRef {
        SecretKeyRef {
            name: name.into(),
            key: "token".into(),
        }
    }

    #[test]
    fn a_token_is_reused_only_for_the_url_and_secret_it_was_checked_with() {
        let allowlist = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"]).unwrap();
        let (here, there) = (
            allowlist.check("http://127.0.0.1:1000/v1").unwrap(),
            allowlist.check("http://127.0.0.1:2000/v1").unwrap(),
        );
        let registry = Registry::default();
        registry.set_credentials(
            "ns",
            "home",
            Credentials {
                url: here.clone(),
                secret: secret("ynab"),
                token: Token::new("t"),
            },
        );
        let cases = [
            ("ns", "home", &here, "ynab", true),
            ("ns", "home", &there, "ynab", false),
            ("ns", "home", &here, "db-creds", false),
            ("ns", "other", &here, "ynab", false),
            ("other", "home", &here, "ynab", false),
        ];
        for (ns, name, url, from, reused) in cases {
            let token = registry.token_for(ns, name, url, &secret(from));
            assert_eq!(token.is_some(), reused, "{ns}/{name} {url} {from}");
        }
        registry.forget_credentials("ns", "home");
        assert!(
            registry
                .token_for("ns", "home", &here, &secret("ynab"))
                .is_none()
        );
    }
}
