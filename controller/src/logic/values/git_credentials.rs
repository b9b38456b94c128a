//! HTTP basic-auth credentials for a ConfigRepo's remote: read from its Secret by the Kubernetes
//! adapter, handed to the Git adapter as they are. They never print.

use std::sync::Arc;

/// HTTP basic-auth credentials from the ConfigRepo's Secret.
#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    pub password: String,
    /// Whether the credentials may be sent to a URL: asked of each URL libgit2 authenticates to.
    pub serves: Arc<dyn Fn(&str) -> bool + Send + Sync>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<redacted>)")
    }
}
