//! Writing a resource's status through the status subresource with server-side apply.

use std::fmt::Debug;

use kube::api::{Patch, PatchParams};
use kube::core::NamespaceResourceScope;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The field manager ledgerops writes with.
pub const FIELD_MANAGER: &str = "ledgerops";

/// The field manager of what the approval gate records on an ApprovalRequest (its issuance and
/// its use): a separate owner, so that a status written from an older cached copy by the
/// ApprovalRequest reconciler can never drop them.
pub const GATE_FIELD_MANAGER: &str = "ledgerops-approval-gate";

/// The field manager of what rule learning records on a CategorizationRule (`learning`,
/// `demotion`): counted from fresh decisions, never dropped by the rule reconciler's writes.
pub const LEARNING_FIELD_MANAGER: &str = "ledgerops-rule-learning";

/// The field manager of the pull request that proposed a rule (`proposal` on a
/// CategorizationRule).
pub const PROPOSAL_FIELD_MANAGER: &str = "ledgerops-rule-proposals";

/// The field manager of what the autopilot counts on a Budget (`autopilot`): never dropped by
/// the Budget reconciler's writes.
pub const AUTOPILOT_FIELD_MANAGER: &str = "ledgerops-autopilot";

/// Applies `status` as the whole status ledgerops owns on `object`.
pub async fn apply<K, S>(client: &kube::Client, object: &K, status: &S) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug,
    S: Serialize,
{
    apply_as(client, object, status, FIELD_MANAGER, false).await
}

/// Applies `status` as the part of the status that `manager` owns on `object`; with
/// `if_unchanged`, only if `object` is still at its resourceVersion (409 Conflict otherwise:
/// a write decided on a cached copy that is behind is refused).
pub async fn apply_as<K, S>(
    client: &kube::Client,
    object: &K,
    status: &S,
    manager: &str,
    if_unchanged: bool,
) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug,
    S: Serialize,
{
    let version = if_unchanged.then(|| object.resource_version().unwrap_or_default());
    write(client, object, status, manager, version.as_deref())
        .await
        .map(drop)
}

/// Like [`apply`], but only if `object` is still at `resource_version`: a status computed from a
/// cached copy that is behind (an earlier write of ledgerops' own not seen yet) is refused with
/// 409 Conflict instead of overwriting what it did not see. Returns the new resourceVersion.
pub async fn apply_if_unchanged<K, S>(
    client: &kube::Client,
    object: &K,
    status: &S,
    resource_version: &str,
) -> Result<String, kube::Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug,
    S: Serialize,
{
    write(
        client,
        object,
        status,
        FIELD_MANAGER,
        Some(resource_version),
    )
    .await
}

async fn write<K, S>(
    client: &kube::Client,
    object: &K,
    status: &S,
    manager: &str,
    resource_version: Option<&str>,
) -> Result<String, kube::Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug,
    S: Serialize,
{
    let api: Api<K> = Api::namespaced(client.clone(), &object.namespace().unwrap_or_default());
    // Serialized straight into the request body, never built as a `serde_json::Value` tree
    // (several times its size): thousands of these may wait for the API server at once.
    let patch = StatusPatch {
        api_version: K::api_version(&()),
        kind: K::kind(&()),
        metadata: resource_version.map(|resource_version| Version { resource_version }),
        status,
    };
    let written = api
        .patch_status(
            &object.name_any(),
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&patch),
        )
        .await?;
    Ok(written.resource_version().unwrap_or_default())
}

/// A server-side apply of the status, with the resourceVersion precondition when given.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusPatch<'a, S> {
    api_version: std::borrow::Cow<'a, str>,
    kind: std::borrow::Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Version<'a>>,
    status: &'a S,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Version<'a> {
    resource_version: &'a str,
}

/// kube asks patches for `Debug`; the status itself is left out.
impl<S> Debug for StatusPatch<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusPatch")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
