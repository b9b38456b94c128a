//! Bounded waits on resource status.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use kube::Api;
use kube::core::NamespaceResourceScope;
use serde::de::DeserializeOwned;

/// Polls `name` until `done` holds, failing after `limit` with the last state seen.
pub async fn until<K, F>(api: &Api<K>, name: &str, limit: Duration, mut done: F) -> K
where
    K: kube::Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
    F: FnMut(&K) -> bool,
{
    let start = Instant::now();
    let mut last = None;
    while start.elapsed() < limit {
        if let Ok(obj) = api.get(name).await {
            if done(&obj) {
                return obj;
            }
            last = Some(obj);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not reach the expected state within {limit:?}; last seen: {last:#?}");
}

/// Polls until `name` no longer exists, failing after a minute.
pub async fn gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug,
{
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if let Ok(None) = api.get_opt(name).await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} still exists after a minute");
}

/// Polls `check` until it holds, failing after `limit` with `what`.
pub async fn eventually(what: &str, limit: Duration, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
