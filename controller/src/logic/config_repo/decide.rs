//! What a revision changes: the documents to apply (new, changed, or changed or deleted by someone
//! since), the objects to prune, and whether the revision must wait for a person: it names an
//! object that is not this repository's, or it prunes too much.

use std::collections::{BTreeMap, BTreeSet};

use super::documents::{Document, Refusal};
use super::ownership::{self, Claim, Owner};
use super::{Live, RepoKind};
use crate::api::config_repo::InventoryEntry;

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
    /// `status.pruneBaseline`: the inventory a person last confirmed (none: the current one).
    pub baseline: Option<usize>,
    /// `status.prunedSinceBaseline`.
    pub pruned_since: usize,
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
    /// The prune guard after this revision: (baseline, pruned since).
    pub baseline: (usize, usize),
}

/// Why a revision is not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Documents name objects that are not this repository's: never adopted.
    Conflicts(Vec<Refusal>),
    /// The revision would delete too much: held until a person confirms.
    Guard(Guard),
}

/// The revisions since the baseline would delete too much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub would_prune: Vec<String>,
    /// The inventory a person last confirmed.
    pub baseline: usize,
    /// Pruned since by earlier revisions.
    pub pruned_before: usize,
    pub max_percent: u8,
}

/// What the inventory owns, and what lives in the cluster, by kind and name.
type Owned<'a> = BTreeMap<(RepoKind, &'a str), &'a InventoryEntry>;
type Living<'a> = BTreeMap<(RepoKind, &'a str), &'a Live>;

/// Decides what `documents` change against the `inventory` of the last applied revision and the
/// `live` objects; `repository` is this ConfigRepo's Gitea repository, if it has one.
pub fn decide<'a>(
    documents: &'a [Document],
    inventory: &[InventoryEntry],
    live: &[Live],
    policy: &PrunePolicy,
    owner: &Owner,
) -> Result<Changes<'a>, Stop> {
    let live: Living<'_> = live
        .iter()
        .map(|l| ((l.kind, l.name.as_str()), l))
        .collect();
    let owned: Owned<'_> = inventory
        .iter()
        .filter_map(|e| Some(((RepoKind::parse(&e.kind)?, e.name.as_str()), e)))
        .collect();
    let mut changes = Changes {
        apply: Vec::new(),
        unchanged: Vec::new(),
        prune: Vec::new(),
        left: Vec::new(),
        waiting: Vec::new(),
        baseline: (0, 0),
    };
    let conflicts = declared(documents, &owned, &live, owner, &mut changes);
    if !conflicts.is_empty() {
        return Err(Stop::Conflicts(conflicts));
    }
    let ours = undeclared(documents, &owned, &live, policy, &mut changes);
    if let Some(guard) = guard(&changes, policy, ours) {
        return Err(Stop::Guard(guard));
    }
    // What stays in force after the revision: a person's confirmation (or the first revision
    // under the guard) makes it the new baseline. Objects waiting for their write are counted
    // when they are pruned, not each time they wait.
    let after = documents.len() + changes.left.len() + changes.waiting.len();
    changes.baseline = match (policy.confirmed, policy.baseline) {
        (true, _) | (false, None) => (after, 0),
        (false, Some(b)) => (b, policy.pruned_since + changes.prune.len()),
    };
    Ok(changes)
}

/// Sorts each declared document into `changes` (applied, or unchanged), or refuses it when its
/// object is someone else's.
fn declared<'a>(
    documents: &'a [Document],
    owned: &Owned<'_>,
    live: &Living<'_>,
    owner: &Owner,
    changes: &mut Changes<'a>,
) -> Vec<Refusal> {
    let mut conflicts = Vec::new();
    for d in documents {
        let key = (d.kind, d.name.as_str());
        let (entry, object) = (owned.get(&key).copied(), live.get(&key).copied());
        match ownership::claim(entry, object, owner) {
            Claim::Foreign(why) => conflicts.push(Refusal {
                file: d.file.clone(),
                line: d.line,
                message: format!(
                    "{}/{} exists and is not this repository's ({why}): a ConfigRepo never takes over an object it did not create; rename it in the repository, or delete the object if it should be the repository's",
                    d.kind.as_str(),
                    d.name
                ),
            }),
            Claim::Ours | Claim::Free => match (entry, object) {
                (Some(e), Some(o)) if e.digest == d.digest && e.generation == o.generation => {
                    changes.unchanged.push(with_uid(e, o))
                }
                // A rule demoted as it stands is left as it is (Demoted, its status saying why)
                // while the repository declares the same rule.
                (Some(e), Some(o))
                    if o.demoted.is_some()
                        && o.demoted == d.rule_key
                        && e.generation == o.generation =>
                {
                    changes.unchanged.push(with_uid(e, o))
                }
                _ => changes.apply.push(d),
            },
        }
    }
    conflicts
}

/// Sorts each owned object no document declares any more into `changes` (pruned, left, or
/// waiting for its write); returns how many owned objects still live.
fn undeclared(
    documents: &[Document],
    owned: &Owned<'_>,
    live: &Living<'_>,
    policy: &PrunePolicy,
    changes: &mut Changes<'_>,
) -> usize {
    let declared: BTreeSet<(RepoKind, &str)> = documents
        .iter()
        .map(|d| (d.kind, d.name.as_str()))
        .collect();
    let mut ours = 0;
    for (key, entry) in owned {
        // Gone already, or replaced by someone else's object: nothing to prune, nothing to track.
        let Some(object) = live.get(key) else {
            continue;
        };
        // Only what the inventory names with its uid is deleted.
        if ownership::claim(Some(entry), Some(object), &Owner::default()) != Claim::Ours {
            continue;
        }
        ours += 1;
        if declared.contains(key) {
            continue;
        }
        if !policy.enabled || object.opted_out {
            changes.left.push(with_uid(entry, object));
        } else if object.applying {
            changes.waiting.push(with_uid(entry, object));
        } else {
            changes.prune.push((*object).clone());
        }
    }
    ours
}

/// The guard that holds `changes` back when they would prune too much of the `ours` owned
/// objects, unless a person confirmed.
fn guard(changes: &Changes<'_>, policy: &PrunePolicy, ours: usize) -> Option<Guard> {
    let pruning = changes.prune.len() + changes.waiting.len();
    let baseline = policy.baseline.unwrap_or(ours);
    let too_many = pruning > 0
        && ((policy.pruned_since + pruning) * 100 > usize::from(policy.max_percent) * baseline
            || pruning == ours);
    if !too_many || policy.confirmed {
        return None;
    }
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
    Some(Guard {
        would_prune,
        baseline,
        pruned_before: policy.pruned_since,
        max_percent: policy.max_percent,
    })
}

/// The entry, with the uid of the object it stands for.
fn with_uid(entry: &InventoryEntry, object: &Live) -> InventoryEntry {
    InventoryEntry {
        uid: Some(object.uid.clone()),
        ..entry.clone()
    }
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
