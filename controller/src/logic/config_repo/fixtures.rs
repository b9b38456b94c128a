//! Builders for the ConfigRepo logic's tests: a document, an inventory entry and a live object,
//! each named after the object it stands for.

use serde_json::json;

use super::documents::Document;
use super::{Live, RepoKind};
use crate::api::config_repo::InventoryEntry;

/// Document `name` of `kind` in `<name>.yaml`, line 1, with body digest `digest`.
pub fn doc(kind: RepoKind, name: &str, digest: &str) -> Document {
    Document {
        file: format!("{name}.yaml"),
        line: 1,
        kind,
        name: name.into(),
        body: json!({}),
        digest: digest.into(),
        rule_key: None,
    }
}

/// The inventory entry of `name` at `generation`, uid `uid-<name>`.
pub fn entry(kind: RepoKind, name: &str, digest: &str, generation: i64) -> InventoryEntry {
    InventoryEntry {
        kind: kind.as_str().into(),
        name: name.into(),
        digest: digest.into(),
        generation: Some(generation),
        commit: None,
        uid: Some(format!("uid-{name}")),
    }
}

/// Live object `name` at `generation`, uid `uid-<name>`, resourceVersion 7.
pub fn live(kind: RepoKind, name: &str, generation: i64) -> Live {
    Live {
        kind,
        name: name.into(),
        uid: format!("uid-{name}"),
        resource_version: "7".into(),
        generation: Some(generation),
        opted_out: false,
        applying: false,
        demoted: None,
        proposed_to: None,
        made: None,
    }
}
