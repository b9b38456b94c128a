//! The rest of a write a restart cut off. An approved write waits for its turn in the token's
//! hour, sometimes for minutes; a restart then leaves it without a recorded outcome. When
//! someone moved some of its transactions meanwhile, its preview no longer holds, and the whole
//! approval used to be given up. The lines nobody touched since the write was decided are still
//! exactly what the person approved, and YNAB shows that none of them landed: they go on under
//! the same approval, and the moved ones are left alone, as a write that was never cut off
//! leaves a line edited between its read and its bulk update.

use std::collections::BTreeSet;

use super::AppliedChange;
use super::operation::Conclusion;
use crate::api::common::Edits;
use crate::logic::budget::mirror::Mirror;

/// The transactions a cut-off write leaves alone while the rest of it goes on, or `None` when it
/// is settled as [`super::operation::interrupted`] says. It goes on only when someone moved some
/// of its transactions elsewhere since it was decided at `knowledge` (`elsewhere`), no later
/// operation moved on from it (`moved_since`: it had landed), and every other line is one YNAB
/// has not changed since that knowledge: provably not written, still at its approved "before".
pub fn rest_of(
    changes: &[AppliedChange],
    mirror: &Mirror,
    knowledge: Option<i64>,
    moved_since: &BTreeSet<String>,
    elsewhere: &BTreeSet<String>,
) -> Option<BTreeSet<String>> {
    let knowledge = knowledge?;
    if elsewhere.is_empty() || !moved_since.is_empty() {
        return None;
    }
    let mut rest = changes
        .iter()
        .filter(|c| !elsewhere.contains(&c.transaction_id))
        .peekable();
    rest.peek()?;
    rest.all(|c| mirror.changed_since(&c.transaction_id, knowledge) == Some(false))
        .then(|| elsewhere.clone())
}

/// What the rest is written with: the approver's own edits, and the lines left alone dropped
/// (a category the approver set for one of them is not written either).
pub fn edits(approver: Option<&Edits>, left_alone: &BTreeSet<String>) -> Edits {
    let mut edits = approver.cloned().unwrap_or_default();
    edits
        .set
        .retain(|s| !left_alone.contains(&s.transaction_id));
    edits.drop.extend(
        left_alone
            .iter()
            .filter(|id| !edits.drop.contains(id))
            .cloned()
            .collect::<Vec<_>>(),
    );
    edits
}

/// Whether `rest`, previewed again now, is exactly the cut-off write's `changes` without the
/// lines left alone: nothing else may be written under its approval.
pub fn holds(
    rest: &[AppliedChange],
    changes: &[AppliedChange],
    left_alone: &BTreeSet<String>,
) -> bool {
    let mut want: Vec<&AppliedChange> = changes
        .iter()
        .filter(|c| !left_alone.contains(&c.transaction_id))
        .collect();
    let mut got: Vec<&AppliedChange> = rest.iter().collect();
    want.sort_by(|a, b| a.transaction_id.cmp(&b.transaction_id));
    got.sort_by(|a, b| a.transaction_id.cmp(&b.transaction_id));
    want == got
}

/// How the operation ended once its rest was written: what left the moved lines alone is said
/// with the rest's own conclusion, so a rest written in full is partly applied.
pub fn conclude(rest: Conclusion, left_alone: &BTreeSet<String>) -> Conclusion {
    let ids: Vec<&str> = left_alone.iter().map(String::as_str).collect();
    let said = format!(
        "a restart cut the write off, and YNAB changed {} since it was decided (someone's edit, left alone): the rest was written under the same approval. Change the plan's spec to ask for those again",
        ids.join(", ")
    );
    match rest {
        Conclusion::Applied => Conclusion::PartiallyApplied(said),
        Conclusion::PartiallyApplied(why) => {
            Conclusion::PartiallyApplied(format!("{why} Also, {said}"))
        }
        other => other,
    }
}

#[cfg(test)]
#[path = "rest_tests.rs"]
mod tests;
