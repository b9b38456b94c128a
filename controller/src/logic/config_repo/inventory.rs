//! A sync's inventory bookkeeping: what the repository owns after the revision (what stayed,
//! what was applied, what a prune put off), what it keeps when the apply is interrupted, and the
//! note that says what the sync did.

use std::collections::BTreeMap;

use super::decide::Changes;
use super::documents::{Document, Refusal};
use super::{Live, PRUNE};
use crate::api::config_repo::InventoryEntry;

/// The inventory being built by one sync, by kind and name.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Inventory(BTreeMap<(String, String), InventoryEntry>);

impl Inventory {
    /// What the revision keeps as it is: the unchanged documents and the objects whose write is
    /// still in flight.
    pub fn kept(changes: &Changes<'_>) -> Self {
        let mut out = Self::default();
        for e in changes.unchanged.iter().chain(&changes.waiting) {
            out.insert(e.clone());
        }
        out
    }

    /// `d` was applied at `generation` (uid `uid`) from `commit`.
    pub fn applied(
        &mut self,
        d: &Document,
        generation: Option<i64>,
        uid: Option<String>,
        commit: &str,
    ) {
        self.insert(InventoryEntry {
            kind: d.kind.as_str().to_owned(),
            name: d.name.clone(),
            digest: d.digest.clone(),
            generation,
            commit: Some(commit.to_owned()),
            uid,
        });
    }

    /// The prune of `object` was put off (it changed since it was read): tracked without a
    /// digest, so the next sync looks at it again.
    pub fn put_off(&mut self, object: &Live) {
        self.insert(InventoryEntry {
            kind: object.kind.as_str().to_owned(),
            name: object.name.clone(),
            digest: String::new(),
            generation: object.generation,
            commit: None,
            uid: Some(object.uid.clone()),
        });
    }

    /// The inventory after an interrupted apply: everything the repository applied before stays
    /// tracked with what this sync applied, so a later prune finds it.
    pub fn interrupted(self, previous: &[InventoryEntry]) -> Vec<InventoryEntry> {
        let mut kept = Self::default();
        for e in previous {
            kept.insert(e.clone());
        }
        kept.0.extend(self.0);
        kept.entries()
    }

    pub fn entries(self) -> Vec<InventoryEntry> {
        self.0.into_values().collect()
    }

    fn insert(&mut self, e: InventoryEntry) {
        self.0.insert((e.kind.clone(), e.name.clone()), e);
    }
}

/// Why applying `d` failed, naming its file and line.
pub fn apply_failed(d: &Document, error: &impl std::fmt::Display) -> String {
    format!(
        "{}:{}: {}/{}: {error}",
        d.file,
        d.line,
        d.kind.as_str(),
        d.name
    )
}

/// Whether an API server's answer `code` to a dry run refuses the document itself (invalid,
/// forbidden, conflicting: a person fixes it) rather than failing the sync (retried).
pub fn refuses_document(code: u16) -> bool {
    (400..500).contains(&code) && code != 429
}

/// The refusal of `d` by the API server's dry run, with its file and line.
pub fn dry_run_refusal(d: &Document, message: &str) -> Refusal {
    Refusal {
        file: d.file.clone(),
        line: d.line,
        message: format!(
            "{}/{}: the API server refused it: {message}",
            d.kind.as_str(),
            d.name
        ),
    }
}

/// What a sync of `revision` did, when it did anything or keeps something for its write: without
/// it nothing tells why an object the repository no longer declares is still there.
pub fn note(revision: &str, changes: &Changes<'_>, pruned: usize) -> Option<String> {
    if changes.apply.is_empty() && pruned == 0 && changes.waiting.is_empty() {
        return None;
    }
    let waiting: Vec<String> = changes
        .waiting
        .iter()
        .map(|e| format!("{}/{}", e.kind, e.name))
        .collect();
    Some(format!(
        "revision {revision}: applied {}, pruned {pruned}, left in place {} (prune off or {PRUNE}: disabled), kept until their write ends {} [{}]",
        changes.apply.len(),
        changes.left.len(),
        changes.waiting.len(),
        waiting.join(", ")
    ))
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
mod tests;
