//! The start-up guard: ledgerops follows an approval only while the admission policies of
//! `crds/` are in force and name its own user. It checks at start-up, whenever a policy, binding
//! or the parameter ConfigMap changes, and every 30 s; it logs the verdict at start-up and on
//! every change. The decision itself is [`crate::logic::approval::admission::verdict`].

use std::time::Duration;

use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};
use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;

use crate::api::admission::{self, PARAMS_NAME, PARAMS_NAMESPACE};
use crate::logic::approval::admission::{Compared, Found, verdict};

/// How often the guard checks even when no watch event arrives.
const PERIOD: Duration = Duration::from_secs(30);

/// Whether the admission policies are in force, as of the latest check.
pub struct AdmissionGuard {
    state: watch::Sender<Result<(), String>>,
    /// Name and spec of every policy, then of every binding, as this version ships them.
    policies: Vec<(String, Value)>,
    bindings: Vec<(String, Value)>,
}

impl Default for AdmissionGuard {
    fn default() -> Self {
        let (state, _) = watch::channel(Err(
            "ledgerops has not checked its admission policies yet; it applies no approval until it has".to_owned(),
        ));
        let (policies, bindings) = admission::shipped_specs();
        Self {
            state,
            policies,
            bindings,
        }
    }
}

impl AdmissionGuard {
    /// `Ok` while the policies are in force; otherwise what is wrong and what to do.
    pub fn verified(&self) -> Result<(), String> {
        self.state.borrow().clone()
    }

    /// Yields each time the guard becomes verified, so that waiting objects are looked at again.
    pub fn verified_again(&self) -> impl Stream<Item = ()> + Send + 'static {
        WatchStream::from_changes(self.state.subscribe())
            .filter_map(|state| std::future::ready(state.is_ok().then_some(())))
    }

    /// Reads what the API server holds, decides, and logs the verdict when it changed.
    pub async fn check(&self, client: &kube::Client) {
        let found = self.read(client).await;
        let next = verdict(&found);
        self.state.send_if_modified(|current| {
            if *current == next {
                return false;
            }
            match &next {
                Ok(()) => tracing::info!(
                    user = found.me.as_deref().unwrap_or_default(),
                    "admission policies in force: ledgerops follows approvals"
                ),
                Err(message) => tracing::error!(
                    "admission policies NOT in force, ledgerops applies no approval: {message}"
                ),
            }
            *current = next;
            true
        });
    }

    /// Checks whenever a policy, binding or the parameter ConfigMap changes, and every 30 s,
    /// until the task is aborted.
    pub async fn run(&self, client: kube::Client) {
        let mut changes = futures::stream::select_all([
            changes(Api::<DynamicObject>::all_with(
                client.clone(),
                &ApiResource::erase::<ValidatingAdmissionPolicy>(&()),
            )),
            changes(Api::<DynamicObject>::all_with(
                client.clone(),
                &ApiResource::erase::<ValidatingAdmissionPolicyBinding>(&()),
            )),
            changes_of(
                Api::<DynamicObject>::namespaced_with(
                    client.clone(),
                    PARAMS_NAMESPACE,
                    &ApiResource::erase::<ConfigMap>(&()),
                ),
                watcher::Config::default().fields(&format!("metadata.name={PARAMS_NAME}")),
            ),
        ]);
        // The start-up check has just run: the first tick is one period away.
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + PERIOD, PERIOD);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                Some(()) = changes.next() => {
                    // A burst of events (a whole `kubectl apply`) makes one check.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    while let Some(Some(())) = changes.next().now_or_never() {}
                }
            }
            self.check(&client).await;
        }
    }

    async fn read(&self, client: &kube::Client) -> Found {
        let policies = Api::<DynamicObject>::all_with(
            client.clone(),
            &ApiResource::erase::<ValidatingAdmissionPolicy>(&()),
        );
        let bindings = Api::<DynamicObject>::all_with(
            client.clone(),
            &ApiResource::erase::<ValidatingAdmissionPolicyBinding>(&()),
        );
        let mut found = Found {
            me: whoami(client).await,
            policies: Vec::new(),
            bindings: Vec::new(),
            params: Api::<ConfigMap>::namespaced(client.clone(), PARAMS_NAMESPACE)
                .get_opt(PARAMS_NAME)
                .await
                .map(|cm| cm.map(|cm| cm.data.unwrap_or_default()))
                .map_err(|e| e.to_string()),
        };
        for (name, expected) in &self.policies {
            found
                .policies
                .push(compared(&policies, name, expected).await);
        }
        for (name, expected) in &self.bindings {
            found
                .bindings
                .push(compared(&bindings, name, expected).await);
        }
        found
    }
}

/// One `()` per watch event of `api`; errors are retried with backoff (the 30 s tick covers them).
fn changes(api: Api<DynamicObject>) -> BoxStream<'static, ()> {
    changes_of(api, watcher::Config::default())
}

fn changes_of(api: Api<DynamicObject>, config: watcher::Config) -> BoxStream<'static, ()> {
    watcher(api, config)
        .default_backoff()
        .filter_map(|event| std::future::ready(event.ok().map(|_| ())))
        .boxed()
}

/// The live `spec` of object `name` beside the `expected` one (also what `kubectl ledgerops
/// check` compares).
pub async fn compared(api: &Api<DynamicObject>, name: &str, expected: &Value) -> Compared {
    Compared {
        name: name.to_owned(),
        expected: expected.clone(),
        live: api
            .get_opt(name)
            .await
            .map(|o| o.map(|o| o.data.get("spec").cloned().unwrap_or(Value::Null)))
            .map_err(|e| e.to_string()),
    }
}

/// The user this client is authenticated as.
pub async fn whoami(client: &kube::Client) -> Result<String, String> {
    let review = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .map_err(|e| e.to_string())?;
    review
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| "the API server's answer named no user".to_owned())
}
