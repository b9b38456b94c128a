//! Reading and writing ledgerops objects other than statuses: ApprovalRequests, annotations.

use crate::api::approval::SUBJECT_UID;
use std::fmt::Debug;

use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::api::approval::ApprovalRequest;

/// The ApprovalRequests that ask about the object with `uid`.
pub async fn approval_requests_for(
    client: &kube::Client,
    namespace: &str,
    uid: &str,
) -> Result<Vec<ApprovalRequest>, kube::Error> {
    let api = Api::<ApprovalRequest>::namespaced(client.clone(), namespace);
    Ok(api
        .list(&ListParams::default().labels(&format!("{SUBJECT_UID}={uid}")))
        .await?
        .items)
}

/// The ApprovalRequest `name`, read from the API server (not a cache).
pub async fn approval_request(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<ApprovalRequest>, kube::Error> {
    Api::<ApprovalRequest>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
}

/// Creates `request`; `None` when the name is taken. An object already there under that name is
/// never adopted: whoever made it, it is judged like any other request, by its binding.
pub async fn create_approval_request(
    client: &kube::Client,
    namespace: &str,
    request: &ApprovalRequest,
) -> Result<Option<ApprovalRequest>, kube::Error> {
    let api = Api::<ApprovalRequest>::namespaced(client.clone(), namespace);
    match api.create(&PostParams::default(), request).await {
        Err(e) if crate::k8s::is_conflict(&e) => Ok(None),
        other => other.map(Some),
    }
}

/// A namespaced kind these helpers read and write.
pub trait Namespaced:
    Resource<DynamicType = (), Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug
{
}

impl<K> Namespaced for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
{
}

/// The API of `object`'s kind in its namespace.
fn api_of<K: Namespaced>(client: &kube::Client, object: &K) -> Api<K> {
    Api::namespaced(client.clone(), &object.namespace().unwrap_or_default())
}

/// `object` as the API server holds it now (not as a watch cache last saw it); `None` once it
/// is gone.
pub async fn latest<K: Namespaced>(
    client: &kube::Client,
    object: &K,
) -> Result<Option<K>, kube::Error> {
    api_of(client, object).get_opt(&object.name_any()).await
}

/// Removes one annotation, once its request has been handled.
pub async fn remove_annotation<K: Namespaced>(
    client: &kube::Client,
    object: &K,
    key: &str,
) -> Result<(), kube::Error> {
    let api = api_of(client, object);
    let patch = serde_json::json!({"metadata": {"annotations": {key: null}}});
    api.patch(
        &object.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await?;
    Ok(())
}
