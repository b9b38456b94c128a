//! What a revision changes: the documents to apply (new, changed, or changed or deleted by someone
//! since), the objects to prune, and whether the prune is too large to go ahead without a person.

use std::collections::{BTreeMap, BTreeSet};

use super::RepoKind;
use super::documents::Document;
use crate::api::config_repo::InventoryEntry;

/// What the API server holds of one object of a repository kind in the namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    pub kind: RepoKind,
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    pub generation: Option<i64>,
    /// It carries `ledgerops.dev/prune: disabled`.
    pub opted_out: bool,
    /// Its write is in flight (see [`write_in_flight`]).
    pub applying: bool,
}

/// Whether an object of `kind` in status phase `phase` has a YNAB write in flight: a plan
/// `Applying`, a Transaction `Writing`. Such an object is pruned only once its write ended, so
/// the write's outcome is recorded where a person looks for it.
pub fn write_in_flight(kind: RepoKind, phase: Option<&str>) -> bool {
    matches!(
        (kind, phase),
        (RepoKind::CategorizationPlan, Some("Applying")) | (RepoKind::Transaction, Some("Writing"))
    )
}

/// How a ConfigRepo prunes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrunePolicy {
    /// `spec.prune`.
    pub enabled: bool,
    /// `spec.maxPrunePercent`.
    pub max_percent: u8,
    /// The person confirmed this revision's prune (the confirm annotation names it).
    pub confirmed: bool,
}

/// What to do with a revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes<'a> {
    /// Documents to dry-run, then apply.
    pub apply: Vec<&'a Document>,
    /// Declared documents already in force: their inventory entries stay as they are.
    pub unchanged: Vec<InventoryEntry>,
    /// Objects to delete (each with the uid and resourceVersion it was read at, so a delete never
    /// hits an object that changed since).
    pub prune: Vec<Live>,
    /// No longer declared and left in place: opted out, or prune is off.
    pub left: Vec<InventoryEntry>,
    /// Objects no longer declared whose write is in flight: kept in the inventory and pruned by
    /// a later sync once they are done.
    pub waiting: Vec<InventoryEntry>,
}

/// The revision would delete too much: held until a person confirms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub would_prune: Vec<String>,
    pub inventory: usize,
    pub max_percent: u8,
}

/// Decides what `documents` change against the `inventory` of the last applied revision and the
/// `live` objects.
pub fn decide<'a>(
    documents: &'a [Document],
    inventory: &[InventoryEntry],
    live: &[Live],
    policy: &PrunePolicy,
) -> Result<Changes<'a>, Guard> {
    let live: BTreeMap<(RepoKind, &str), &Live> = live
        .iter()
        .map(|l| ((l.kind, l.name.as_str()), l))
        .collect();
    let owned: BTreeMap<(RepoKind, &str), &InventoryEntry> = inventory
        .iter()
        .filter_map(|e| Some(((RepoKind::parse(&e.kind)?, e.name.as_str()), e)))
        .collect();
    let declared: BTreeSet<(RepoKind, &str)> = documents
        .iter()
        .map(|d| (d.kind, d.name.as_str()))
        .collect();
    let mut changes = Changes {
        apply: Vec::new(),
        unchanged: Vec::new(),
        prune: Vec::new(),
        left: Vec::new(),
        waiting: Vec::new(),
    };
    for d in documents {
        let key = (d.kind, d.name.as_str());
        match (owned.get(&key), live.get(&key)) {
            (Some(entry), Some(object))
                if entry.digest == d.digest && entry.generation == object.generation =>
            {
                changes.unchanged.push((*entry).clone())
            }
            _ => changes.apply.push(d),
        }
    }
    for (key, entry) in &owned {
        if declared.contains(key) {
            continue;
        }
        // Gone already: nothing to prune, nothing to track.
        let Some(object) = live.get(key) else {
            continue;
        };
        if !policy.enabled || object.opted_out {
            changes.left.push((*entry).clone());
        } else if object.applying {
            changes.waiting.push((*entry).clone());
        } else {
            changes.prune.push((*object).clone());
        }
    }
    let pruning = changes.prune.len() + changes.waiting.len();
    let too_many = pruning * 100 > usize::from(policy.max_percent) * owned.len()
        || (pruning > 0 && pruning == owned.len());
    if too_many && !policy.confirmed {
        let would_prune = changes
            .prune
            .iter()
            .map(|l| format!("{}/{}", l.kind.as_str(), l.name))
            .chain(
                changes
                    .waiting
                    .iter()
                    .map(|e| format!("{}/{}", e.kind, e.name)),
            )
            .collect();
        return Err(Guard {
            would_prune,
            inventory: owned.len(),
            max_percent: policy.max_percent,
        });
    }
    Ok(changes)
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
