//! The tail every reconciler shares, after Flux's summarize-and-patch: once a reconcile has
//! concluded, the status is written only when it changed, and the Event that announces the
//! change is published after the write, never before it (an Event about a status the API
//! server refused would tell a story nobody can read back).

use std::fmt::Debug;

use kube::Resource;
use kube::core::NamespaceResourceScope;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Context, Error};
use crate::k8s::status;
use crate::logic::status::announce::Announcement;

/// How the status is written.
pub enum StatusWrite<'v> {
    /// Server-side apply of the reconciler's fields.
    Apply,
    /// Only if the object is still at `resourceVersion` `.0`: a conclusion drawn from a copy that
    /// is behind is refused, not written.
    IfUnchanged(&'v str),
}

/// Writes `next` as `object`'s status when `changed`, then publishes `announcement` (its
/// `action` names the reconciler's step). Returns whether it wrote.
pub async fn summarize_and_patch<K, S>(
    ctx: &Context,
    object: &K,
    changed: bool,
    next: &S,
    write: StatusWrite<'_>,
    announcement: Option<Announcement>,
    action: &str,
) -> Result<bool, Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
    S: Serialize,
{
    if !changed {
        return Ok(false);
    }
    match write {
        StatusWrite::Apply => status::apply(&ctx.client, object, next).await?,
        StatusWrite::IfUnchanged(version) => {
            status::apply_if_unchanged(&ctx.client, object, next, version).await?;
        }
    }
    if let Some(a) = announcement {
        ctx.events.publish_after(object, next, a, action).await;
    }
    Ok(true)
}
