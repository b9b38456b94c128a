//! The lineage of an object, gathered from the shared caches: its own `ledgerops.dev/proposed-by`,
//! the people behind every ConfigRepo it names or that applied it, and the Kubernetes users its
//! Gitea logins map to (see `logic::approval::lineage`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;

use super::Context;
use crate::api::budget::Budget;
use crate::logic::approval::lineage::{self, Known};

/// Everyone who shaped `meta` (an object of namespace `namespace` that `budget` governs), or why
/// that cannot be told.
pub fn gathered(
    ctx: &Context,
    meta: &ObjectMeta,
    budget: Option<&Budget>,
) -> Result<Vec<String>, String> {
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    let uid = meta.uid.as_deref().unwrap_or_default();
    let mut known = Known {
        gitea_users: budget
            .map(|b| b.spec.approval.gitea_user_map())
            .unwrap_or_default(),
        ..Known::default()
    };
    for repo in ctx.repos.state() {
        if repo.namespace().as_deref() != Some(namespace) {
            continue;
        }
        let name = repo.name_any();
        let holds = repo.status.as_ref().is_some_and(|s| {
            s.inventory
                .iter()
                .any(|e| !uid.is_empty() && e.uid.as_deref() == Some(uid))
        });
        if holds {
            known.applied_by.push(name.clone());
        }
        known
            .repos
            .insert(name, lineage::of(repo.metadata.annotations.as_ref()));
    }
    lineage::gather(&lineage::of(meta.annotations.as_ref()), &known)
}
