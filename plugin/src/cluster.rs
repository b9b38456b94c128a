//! The plugin's only contact with Kubernetes: the client from the kubeconfig, who you are, and
//! the reads and writes the commands make.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::NamespaceResourceScope;
use kube::{Client, Config, Resource};
use ledgerops::api::approval::ApprovalRequest;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::cli::Global;
use crate::error::PluginError;

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(500);

/// A client and the namespace the command works in.
pub struct Cluster {
    client: Client,
    namespace: String,
    all_namespaces: bool,
}

impl Cluster {
    /// Connects as kubectl would with the same flags.
    pub async fn connect(flags: &Global) -> Result<Self, PluginError> {
        let options = KubeConfigOptions {
            context: flags.context.clone(),
            ..Default::default()
        };
        let bad = |e: kube::config::KubeconfigError| PluginError::Kubeconfig(e.to_string());
        let mut config = match &flags.kubeconfig {
            Some(path) => {
                let file = Kubeconfig::read_from(path).map_err(bad)?;
                Config::from_custom_kubeconfig(file, &options).await
            }
            None => Config::from_kubeconfig(&options).await,
        }
        .map_err(bad)?;
        if let Some(user) = &flags.as_user {
            config.auth_info.impersonate = Some(user.clone());
        }
        let namespace = flags
            .namespace
            .clone()
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config)
            .map_err(|e| PluginError::Kubeconfig(format!("cannot make a client: {e}")))?;
        Ok(Self {
            client,
            namespace,
            all_namespaces: flags.all_namespaces,
        })
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The client, for the reads of `cluster_check`.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The user the API server knows you as (what `kubectl auth whoami` prints).
    pub async fn whoami(&self) -> Result<String, PluginError> {
        Ok(self.identity().await?.0)
    }

    /// Your user name and groups, as the API server authenticated you: a decision records both,
    /// so roles bound to one of your groups count.
    pub async fn identity(&self) -> Result<(String, Vec<String>), PluginError> {
        let review = Api::<SelfSubjectReview>::all(self.client.clone())
            .create(&PostParams::default(), &SelfSubjectReview::default())
            .await
            .map_err(PluginError::kube("learn who you are (SelfSubjectReview)"))?;
        let user = review.status.and_then(|s| s.user_info).unwrap_or_default();
        let name = user.username.filter(|u| !u.is_empty()).ok_or_else(|| {
            PluginError::Failed(
                "the API server did not say who you are (SelfSubjectReview has no user name), so no decision can be recorded in your name".into(),
            )
        })?;
        Ok((name, user.groups.unwrap_or_default()))
    }

    /// Every object of a kind in the namespace, or in all namespaces with `-A`.
    pub async fn list<K>(&self, what: &str) -> Result<Vec<K>, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        let (api, place) = if self.all_namespaces {
            (Api::all(self.client.clone()), "all namespaces".to_owned())
        } else {
            (self.api(), format!("namespace {}", self.namespace))
        };
        Ok(api
            .list(&ListParams::default())
            .await
            .map_err(PluginError::kube(format!("list {what} in {place}")))?
            .items)
    }

    /// A cache of the ApprovalRequests here (or everywhere with `-A`) and a stream that yields
    /// once per change of it once the first listing is complete (not for each object of a
    /// listing); the stream retries a failed watch with backoff.
    pub fn watch_requests(
        &self,
    ) -> (
        kube::runtime::reflector::Store<ApprovalRequest>,
        futures::stream::BoxStream<'static, ()>,
    ) {
        use futures::StreamExt;
        use kube::runtime::{WatchStreamExt, reflector, watcher};
        let api: Api<ApprovalRequest> = if self.all_namespaces {
            Api::all(self.client.clone())
        } else {
            self.api()
        };
        let (reader, writer) = reflector::store();
        let changes = reflector(writer, watcher(api, watcher::Config::default()))
            .default_backoff()
            .filter_map(|event| {
                let changed = matches!(
                    event,
                    Ok(watcher::Event::InitDone
                        | watcher::Event::Apply(_)
                        | watcher::Event::Delete(_))
                );
                std::future::ready(changed.then_some(()))
            })
            .boxed();
        (reader, changes)
    }

    /// The names of the namespaces you may list.
    pub async fn namespaces(&self) -> Result<Vec<String>, PluginError> {
        let list = Api::<Namespace>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(PluginError::kube("list namespaces"))?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect())
    }

    /// One object, or `None` when it does not exist.
    pub async fn get<K>(&self, kind: &str, name: &str) -> Result<Option<K>, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        self.api::<K>()
            .get_opt(name)
            .await
            .map_err(PluginError::kube(format!(
                "read {kind} {name} in namespace {}",
                self.namespace
            )))
    }

    /// Like [`Cluster::get`], naming the missing object as an error.
    pub async fn must_get<K>(&self, kind: &str, name: &str) -> Result<K, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        self.get(kind, name).await?.ok_or_else(|| PluginError::Api {
            action: format!("find {kind} {name} in namespace {}", self.namespace),
            code: 404,
            message: String::new(),
        })
    }

    /// A JSON merge patch of `name`, which must still be at `resource_version` when given.
    pub async fn merge<K>(
        &self,
        action: String,
        name: &str,
        resource_version: Option<String>,
        mut patch: serde_json::Value,
    ) -> Result<K, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        if let Some(rv) = resource_version {
            patch["metadata"]["resourceVersion"] = json!(rv);
        }
        self.api::<K>()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(PluginError::kube(action))
    }

    /// Server-side applies a proposal as `kubectl-ledgerops`, taking over fields another manager
    /// set (as `kubectl apply --server-side --force-conflicts` does).
    pub async fn apply_dynamic(
        &self,
        p: &crate::logic::propose::Proposal,
    ) -> Result<serde_json::Value, PluginError> {
        let api = self.dynamic(p);
        let params = PatchParams::apply("kubectl-ledgerops").force();
        let applied = api
            .patch(&p.name, &params, &Patch::Apply(&p.body))
            .await
            .map_err(PluginError::kube(format!(
                "apply {} {} in namespace {}",
                p.kind, p.name, p.namespace
            )))?;
        serde_json::to_value(applied).map_err(|e| PluginError::Output(e.to_string()))
    }

    /// The annotation `key` of the object `p` would apply to, if it exists and has one.
    pub async fn live_annotation(
        &self,
        p: &crate::logic::propose::Proposal,
        key: &str,
    ) -> Result<Option<String>, PluginError> {
        let live = self
            .dynamic(p)
            .get_opt(&p.name)
            .await
            .map_err(PluginError::kube(format!(
                "read {} {} in namespace {}",
                p.kind, p.name, p.namespace
            )))?;
        Ok(live.and_then(|o| o.metadata.annotations?.remove(key)))
    }

    fn dynamic(&self, p: &crate::logic::propose::Proposal) -> Api<kube::api::DynamicObject> {
        let gvk = kube::api::GroupVersionKind::gvk(
            ledgerops::api::common::GROUP,
            ledgerops::api::common::VERSION,
            &p.kind,
        );
        let resource = kube::api::ApiResource::from_gvk(&gvk);
        Api::namespaced_with(self.client.clone(), &p.namespace, &resource)
    }

    /// Creates `object` in the namespace.
    pub async fn create<K>(&self, action: String, object: &K) -> Result<K, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Serialize
            + Debug,
    {
        self.api::<K>()
            .create(&PostParams::default(), object)
            .await
            .map_err(PluginError::kube(action))
    }

    /// Reads `name` until `done` says what it ended in, for at most `limit`; `None` when it did
    /// not end in time.
    pub async fn wait_for<K, T>(
        &self,
        kind: &str,
        name: &str,
        limit: Duration,
        mut done: impl FnMut(&K) -> Option<T>,
    ) -> Result<Option<T>, PluginError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        poll(limit, async || {
            let object: K = self.must_get(kind, name).await?;
            Ok(done(&object))
        })
        .await
    }
}

/// Runs `step` until it returns something, for at most `limit` (at least once); `None` when
/// nothing came in time.
pub async fn poll<T>(
    limit: Duration,
    mut step: impl AsyncFnMut() -> Result<Option<T>, PluginError>,
) -> Result<Option<T>, PluginError> {
    let start = Instant::now();
    loop {
        if let Some(end) = step().await? {
            return Ok(Some(end));
        }
        if start.elapsed() >= limit {
            return Ok(None);
        }
        tokio::time::sleep(POLL).await;
    }
}
