//! State shared by the reconcilers of one process: each token's request budget and each
//! Budget's mirror. Kubernetes holds everything durable; this is only what is cheaper to keep
//! in memory than to ask YNAB again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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

/// The process-wide registry.
#[derive(Default)]
pub struct Registry {
    /// By API base URL and token: YNAB counts per token, and a test may run several YNABs.
    windows: Mutex<HashMap<(String, Token), SharedWindow>>,
    mirrors: Mutex<HashMap<(String, String), SharedMirror>>,
}

impl Registry {
    /// The request window of `token` at `api_url`, shared by every Budget that uses it, set to
    /// `limit`.
    pub fn window(&self, api_url: &str, token: &Token, limit: u32) -> SharedWindow {
        let window = self
            .windows
            .lock()
            .expect("registry lock")
            .entry((api_url.to_owned(), token.clone()))
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

    /// Forgets the mirror of a Budget that no longer exists.
    pub fn forget_mirror(&self, namespace: &str, name: &str) {
        self.mirrors
            .lock()
            .expect("registry lock")
            .remove(&(namespace.into(), name.into()));
    }
}
