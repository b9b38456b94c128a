//! A ConfigRepo's status after a sync, and the Event worth publishing about it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::decide::Guard;
use super::documents::Refusal;
use crate::api::config_repo::{ConfigRepoStatus, DemotedRule, InventoryEntry, RepoPhase};
use crate::logic::status::conditions::{self, Observed, READY};
use crate::logic::status::kstatus;
use crate::logic::values::outside_text;

/// The longest message a ConfigRepo's status carries.
const MAX_MESSAGE: usize = 2000;
/// How many refused documents a message lists.
const MAX_LISTED: usize = 10;

/// How a sync ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Suspended,
    /// The remote could not be read (or not with these credentials); nothing changed.
    FetchFailed {
        reason: &'static str,
        message: String,
    },
    /// Documents of `revision` were refused, by ledgerops (parse) or by the API server (dry-run);
    /// nothing of it was applied.
    Refused {
        revision: String,
        reason: &'static str,
        refusals: Vec<Refusal>,
    },
    /// The revision would prune too much; nothing of it was applied.
    Held {
        revision: String,
        guard: Guard,
    },
    /// The revision does not descend from the applied one (the branch was rewritten); nothing
    /// of it was applied.
    Rewritten {
        revision: String,
        applied: String,
    },
    /// An apply failed after the dry-run passed: what did get applied is in the inventory.
    Interrupted {
        revision: String,
        message: String,
        inventory: Vec<InventoryEntry>,
    },
    /// Every document of `revision` is in force.
    Applied {
        revision: String,
        inventory: Vec<InventoryEntry>,
        /// Why the repository proposes only (`None`: it governs).
        proposes_only: Option<String>,
        /// The prune guard's baseline and the objects pruned since.
        baseline: (usize, usize),
        /// The repository's rules that stay demoted.
        demoted: Vec<DemotedRule>,
    },
}

/// The status to write after a sync.
pub fn next(
    previous: &ConfigRepoStatus,
    outcome: &Outcome,
    generation: Option<i64>,
    now: Timestamp,
) -> ConfigRepoStatus {
    let mut next = ConfigRepoStatus {
        observed_generation: generation,
        last_fetch_time: Some(Time(now)),
        ..previous.clone()
    };
    let (phase, ready) = match outcome {
        Outcome::Suspended => (
            RepoPhase::Suspended,
            Observed::new(
                READY,
                false,
                "Suspended",
                "spec.suspend is true: nothing is fetched or applied; set it to false to resume",
            ),
        ),
        Outcome::FetchFailed { reason, message } => (
            RepoPhase::FetchFailed,
            Observed::new(READY, false, *reason, kept(previous, message)),
        ),
        Outcome::Refused {
            revision,
            reason,
            refusals,
        } => {
            next.last_attempted_revision = Some(revision.clone());
            let texts: Vec<String> = refusals.iter().map(ToString::to_string).collect();
            let message = format!(
                "revision {revision}: nothing applied, {} document(s) refused: {}",
                refusals.len(),
                listed(&texts, "; ")
            );
            (
                RepoPhase::ApplyFailed,
                Observed::new(READY, false, *reason, kept(previous, &message)),
            )
        }
        Outcome::Held { revision, guard } => {
            next.last_attempted_revision = Some(revision.clone());
            let message = format!(
                "revision {revision} would delete {} object(s) ({}), {} were deleted by earlier revisions: more than spec.maxPrunePercent {}% of the {} objects in force when a person last confirmed (status.pruneBaseline), or all of them. Nothing of it is applied. If that is intended: kubectl annotate configrepo <name> --overwrite {}={revision}",
                guard.would_prune.len(),
                listed(&guard.would_prune, ", "),
                guard.pruned_before,
                guard.max_percent,
                guard.baseline,
                super::CONFIRM_PRUNE,
            );
            (
                RepoPhase::PruneHeld,
                Observed::new(READY, false, "PruneGuard", kept(previous, &message)),
            )
        }
        Outcome::Rewritten { revision, applied } => {
            next.last_attempted_revision = Some(revision.clone());
            let message = format!(
                "revision {revision} does not descend from the applied revision {applied}: the branch was rewritten (a force-push, or a reset to an older commit), which could roll back what the repository declares. Nothing of it is applied. If that is intended: kubectl annotate configrepo <name> --overwrite {}={revision}",
                super::CONFIRM_REWRITE,
            );
            (
                RepoPhase::RewriteHeld,
                Observed::new(READY, false, "HistoryRewritten", kept(previous, &message)),
            )
        }
        Outcome::Interrupted {
            revision,
            message,
            inventory,
        } => {
            next.last_attempted_revision = Some(revision.clone());
            next.inventory = inventory.clone();
            let message = format!("revision {revision} was only partly applied: {message}");
            (
                RepoPhase::ApplyFailed,
                Observed::new(
                    READY,
                    false,
                    "ApplyFailed",
                    outside_text::sanitize(&message, MAX_MESSAGE),
                ),
            )
        }
        Outcome::Applied {
            revision,
            inventory,
            proposes_only,
            baseline,
            demoted,
        } => {
            let authority = proposes_only.as_deref();
            applied(
                &mut next, revision, inventory, authority, *baseline, demoted,
            )
        }
    };
    let health = kstatus::config_repo(phase, &ready.reason);
    next.phase = Some(phase);
    let c = conditions::set(&previous.conditions, ready, generation, now);
    next.conditions = kstatus::summarize(&c, "ConfigRepo", health, generation, now);
    next
}

/// Records in `next` the `revision` an [`Outcome::Applied`] applied (its fields are the others),
/// and returns its phase and `Ready` condition.
fn applied(
    next: &mut ConfigRepoStatus,
    revision: &str,
    inventory: &[InventoryEntry],
    proposes_only: Option<&str>,
    baseline: (usize, usize),
    demoted: &[DemotedRule],
) -> (RepoPhase, Observed) {
    next.last_attempted_revision = Some(revision.to_owned());
    next.last_applied_revision = Some(revision.to_owned());
    next.inventory = inventory.to_vec();
    next.prune_baseline = Some(u32::try_from(baseline.0).unwrap_or(u32::MAX));
    next.pruned_since_baseline = u32::try_from(baseline.1).unwrap_or(u32::MAX);
    next.demoted = demoted.to_vec();
    let authority = match proposes_only {
        Some(why) => format!("; it proposes only: {why}"),
        None => "; it governs (declares Budgets, blesses merged rules)".into(),
    };
    let still = if demoted.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = demoted.iter().map(|d| d.name.clone()).collect();
        format!(
            "; demoted by a person's override, applied without the merge's blessing until a changed rule is merged (or an approver blesses it): {}",
            listed(&names, ", ")
        )
    };
    let message = format!(
        "revision {revision} is applied: {} object(s) from the repository{authority}{still}",
        inventory.len()
    );
    (
        RepoPhase::Ready,
        Observed::new(READY, true, "Applied", message),
    )
}

/// What a deleted ConfigRepo `name` leaves behind: its objects stay, and are nobody's to change.
pub fn left_behind(name: &str, inventory: &[InventoryEntry]) -> String {
    let names: Vec<String> = inventory
        .iter()
        .map(|e| format!("{}/{}", e.kind, e.name))
        .collect();
    format!(
        "ConfigRepo {name} was deleted; the {} object(s) it applied stay in place, and no other ConfigRepo takes them over: {}. Delete the ones no longer wanted; a repository that should manage one again creates it after it is deleted.",
        names.len(),
        listed(&names, ", ")
    )
}

/// At most [`MAX_LISTED`] names, and how many more.
fn listed(names: &[String], separator: &str) -> String {
    let more = names.len().saturating_sub(MAX_LISTED);
    let mut text = names
        .iter()
        .take(MAX_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(separator);
    if more > 0 {
        text.push_str(&format!(" (and {more} more)"));
    }
    text
}

/// The previous revision's state stays in force, and says so.
fn kept(previous: &ConfigRepoStatus, message: &str) -> String {
    let text = match &previous.last_applied_revision {
        Some(r) => format!("{message}. Revision {r} stays applied."),
        None => format!("{message}."),
    };
    outside_text::sanitize(&text, MAX_MESSAGE)
}

/// Whether `next` says something `previous` does not: the fetch time alone is not worth a write
/// (an unchanged revision costs no API write).
pub fn changed(previous: &ConfigRepoStatus, next: &ConfigRepoStatus) -> bool {
    let strip = |s: &ConfigRepoStatus| ConfigRepoStatus {
        last_fetch_time: None,
        ..s.clone()
    };
    strip(previous) != strip(next)
}

pub use crate::logic::status::announce::Announcement;

/// The Event for a change of `Ready` (or a new applied revision); `None` when nothing changed.
pub fn announcement(previous: &ConfigRepoStatus, next: &ConfigRepoStatus) -> Option<Announcement> {
    let before = conditions::get(&previous.conditions, READY);
    let after = conditions::get(&next.conditions, READY)?;
    let same = before.is_some_and(|b| b.reason == after.reason && b.message == after.message);
    (!same).then(|| Announcement {
        warning: after.status != "True",
        reason: after.reason.clone(),
        note: after.message.clone(),
    })
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
