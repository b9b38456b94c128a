//! `suspend` and `resume` of a Budget or ConfigRepo: `spec.suspend`, in your name.

use ledgerops::api::budget::Budget;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::config_repo::ConfigRepo;
use serde::de::DeserializeOwned;

use crate::cli::Suspendable;
use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::api_error::{self, Refused};
use crate::logic::propose;
use crate::output::{self, Printer};

pub async fn set(
    cluster: &Cluster,
    out: &Printer,
    kind: Suspendable,
    name: &str,
    suspend: bool,
) -> Result<u8, PluginError> {
    match kind {
        Suspendable::Budget => {
            let live: Budget = cluster.must_get("Budget", name).await?;
            let now = live.spec.suspend;
            change::<Budget>(cluster, out, "Budget", live.metadata, now, name, suspend).await
        }
        Suspendable::ConfigRepo => {
            let live: ConfigRepo = cluster.must_get("ConfigRepo", name).await?;
            let now = live.spec.suspend;
            change::<ConfigRepo>(
                cluster,
                out,
                "ConfigRepo",
                live.metadata,
                now,
                name,
                suspend,
            )
            .await
        }
    }
}

async fn change<K>(
    cluster: &Cluster,
    out: &Printer,
    kind: &str,
    meta: kube::api::ObjectMeta,
    now: bool,
    name: &str,
    suspend: bool,
) -> Result<u8, PluginError>
where
    K: kube::Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let verb = if suspend { "suspend" } else { "resume" };
    let object = output::object_name(kind, name);
    if now == suspend {
        out.text(&format!(
            "{object} is already {}: nothing to do\n",
            if suspend { "suspended" } else { "running" }
        ));
        return Ok(0);
    }
    let user = cluster.whoami().await?;
    let lineage = meta.annotations.as_ref().and_then(|a| a.get(PROPOSED_BY));
    let patch = propose::suspension(
        lineage.map(String::as_str),
        &user,
        suspend,
        meta.resource_version.as_deref().unwrap_or_default(),
    );
    let action = format!("{verb} {kind} {name} in namespace {}", cluster.namespace());
    match cluster.merge::<K>(action.clone(), name, None, patch).await {
        Ok(_) => {
            out.text(&format!(
                "{object} {} in namespace {}\n",
                if suspend { "suspended" } else { "resumed" },
                cluster.namespace()
            ));
            out.names(kind, [name]);
            Ok(0)
        }
        // RBAC's refusal names the verb it lacked; say which role grants it.
        Err(PluginError::Api { code, message, .. })
            if api_error::classify(code, &message) == Refused::Permission =>
        {
            Err(PluginError::Refused(format!(
                "cannot {action}: you are not allowed to ({message}). Suspending and resuming is governing: a Budget, and a ConfigRepo with authority Govern, need the ledgerops-owner role in that namespace; another ConfigRepo needs ledgerops-edit. Ask an owner."
            )))
        }
        Err(e) => Err(e),
    }
}
