//! The lineage of an object, gathered from the shared caches: its own `ledgerops.dev/proposed-by`,
//! the people behind every ConfigRepo it names or that applied it, and the Kubernetes users its
//! Gitea logins map to (see `logic::approval::lineage`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;

use super::Context;
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::logic::approval::lineage::{self, Known};
use crate::logic::runtime::request_priority::{self, Priority, WriteDecision, WriteSource};

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
        if holds(&repo, uid) {
            known.applied_by.push(name.clone());
        }
        known
            .repos
            .insert(name, lineage::of(repo.metadata.annotations.as_ref()));
    }
    lineage::gather(&lineage::of(meta.annotations.as_ref()), &known)
}

/// The priority of the YNAB requests writing `meta`'s object, let out by `decision`.
pub fn write_priority(ctx: &Context, decision: WriteDecision, meta: &ObjectMeta) -> Priority {
    request_priority::of_write(decision, source(ctx, meta))
}

/// Where `meta`'s object came from, as the ConfigRepos' inventories say: it orders requests
/// (see `logic::runtime::request_priority`), and grants nothing.
fn source(ctx: &Context, meta: &ObjectMeta) -> WriteSource {
    let uid = meta.uid.as_deref().unwrap_or_default();
    let applied =
        ctx.repos.state().iter().any(|repo| {
            repo.namespace().as_deref() == meta.namespace.as_deref() && holds(repo, uid)
        });
    if applied {
        WriteSource::ConfigRepo
    } else {
        WriteSource::Applied
    }
}

/// Whether `repo`'s inventory holds the object `uid`.
fn holds(repo: &ConfigRepo, uid: &str) -> bool {
    repo.status.as_ref().is_some_and(|s| {
        s.inventory
            .iter()
            .any(|e| !uid.is_empty() && e.uid.as_deref() == Some(uid))
    })
}
