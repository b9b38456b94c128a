//! The objects a ConfigRepo applies: listed, dry-run, applied with server-side apply as
//! `ledgerops-configrepo`, and pruned. Only the repository kinds, only in the ConfigRepo's own
//! namespace: the logic refused everything else before anything gets here.

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions,
};
use kube::{Resource, ResourceExt};

use crate::api::budget::Budget;
use crate::api::common::PROPOSED_BY;
use crate::api::plan::CategorizationPlan;
use crate::api::rule::{CategorizationRule, CategorizationRuleSpec};
use crate::api::transaction::Transaction;
use crate::logic::config_repo::decide::write_in_flight;
use crate::logic::config_repo::documents::Document;
use crate::logic::config_repo::{Live, Proposed};
use crate::logic::config_repo::{PRUNE, RepoKind};
use crate::logic::rule::proposal;

/// The field manager of everything a ConfigRepo applies.
pub const FIELD_MANAGER: &str = "ledgerops-configrepo";

fn resource(kind: RepoKind) -> ApiResource {
    match kind {
        RepoKind::Budget => ApiResource::erase::<Budget>(&()),
        RepoKind::Transaction => ApiResource::erase::<Transaction>(&()),
        RepoKind::CategorizationPlan => ApiResource::erase::<CategorizationPlan>(&()),
        RepoKind::CategorizationRule => ApiResource::erase::<CategorizationRule>(&()),
    }
}

fn api(client: &kube::Client, namespace: &str, kind: RepoKind) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &resource(kind))
}

/// Every object of the repository kinds in `namespace`.
pub async fn live(client: &kube::Client, namespace: &str) -> Result<Vec<Live>, kube::Error> {
    let mut out = Vec::new();
    for kind in RepoKind::ALL {
        let list = api(client, namespace, kind)
            .list(&ListParams::default())
            .await?;
        out.extend(list.items.into_iter().map(|o| {
            Live {
                kind,
                name: o.name_any(),
                uid: o.uid().unwrap_or_default(),
                resource_version: o.resource_version().unwrap_or_default(),
                generation: o.meta().generation,
                opted_out: o.annotations().get(PRUNE).is_some_and(|v| v == "disabled"),
                applying: write_in_flight(kind, o.data["status"]["phase"].as_str()),
                demoted: demoted_key(&o),
                proposed_to: proposed(&o),
                made: o
                    .annotations()
                    .get(PROPOSED_BY)
                    .cloned()
                    .zip(o.meta().creation_timestamp.as_ref().map(|t| t.0)),
            }
        }));
    }
    Ok(out)
}

/// Where a learned rule was proposed, while the proposal stands (not withdrawn) and nobody has
/// blessed it.
fn proposed(object: &DynamicObject) -> Option<Proposed> {
    let proposal = &object.data["status"]["proposal"];
    if !proposal["withdrawn"].is_null() || !object.data["spec"]["blessing"].is_null() {
        return None;
    }
    let text = |field: &str| proposal[field].as_str().map(str::to_owned);
    Some(Proposed {
        repository: text("repository")?,
        config_repo: text("configRepo")?,
        branch: text("branch")?,
    })
}

/// A rule's content key while the demotion its status records holds at its generation.
fn demoted_key(object: &DynamicObject) -> Option<String> {
    let demoted_at = object.data["status"]["demotion"]["generation"].as_i64()?;
    if Some(demoted_at) != object.meta().generation {
        return None;
    }
    let spec: CategorizationRuleSpec = serde_json::from_value(object.data["spec"].clone()).ok()?;
    Some(proposal::key(&spec))
}

/// Server-side applies `document`; with `dry_run`, only asks the API server whether it would.
/// Returns the object's generation and uid after the apply.
pub async fn apply(
    client: &kube::Client,
    namespace: &str,
    document: &Document,
    dry_run: bool,
) -> Result<(Option<i64>, Option<String>), kube::Error> {
    let mut params = PatchParams::apply(FIELD_MANAGER).force();
    params.dry_run = dry_run;
    let applied = api(client, namespace, document.kind)
        .patch(&document.name, &params, &Patch::Apply(&document.body))
        .await?;
    Ok((applied.meta().generation, applied.uid()))
}

/// Deletes `object` only if it is still the one read (same uid and resourceVersion): a plan that
/// started applying since, or an object someone replaced or opted out, is left for the next sync.
/// `Ok(false)` when it changed.
pub async fn delete(
    client: &kube::Client,
    namespace: &str,
    object: &Live,
) -> Result<bool, kube::Error> {
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some(object.uid.clone()),
            resource_version: Some(object.resource_version.clone()),
        }),
        ..DeleteParams::default()
    };
    match api(client, namespace, object.kind)
        .delete(&object.name, &params)
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if crate::k8s::is_not_found(&e) => Ok(true),
        Err(e) if crate::k8s::is_conflict(&e) => Ok(false),
        Err(e) => Err(e),
    }
}
