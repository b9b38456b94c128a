//! Who wrote what a revision changes: the Gitea users behind the commits a sync applies, named
//! on the documents those commits changed, so that nobody who pushed or opened the pull request
//! for a change can approve it under four eyes.
//!
//! Gitea vouches for a pull request's author (they were signed in when they opened it); a
//! commit's author is the Gitea user whose e-mail the commit carries, which whoever made the
//! commit chose. So the author of a merged pull request is what holds against someone who means
//! harm (branch protection that requires pull requests makes every change come through one);
//! commit authors name the honest.

use std::collections::BTreeMap;

use super::documents::Document;
use crate::api::common::PROPOSED_BY;
use crate::api::config_repo::InventoryEntry;
use crate::logic::approval::lineage;
use crate::logic::job::decision;

/// A commit of the range a sync applies, as Gitea knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeCommit {
    /// How many parents it has: two or more for a merge.
    pub parents: usize,
    /// The Gitea user whose e-mail its author carries; `None` when no user has it.
    pub author: Option<String>,
    /// The paths it changed, against its first parent (for a merge: all the merge brought).
    pub files: Vec<String>,
    /// The author of the pull request merged as this commit, if one was.
    pub pull_author: Option<String>,
}

/// The most commits a sync attributes: a range longer than this stops the sync, since what its
/// older commits changed, and who changed it, would go unnamed.
pub const MAX_COMMITS: usize = 500;

/// The lineage names of everyone behind each file `commits` changed. A merge commit's own
/// author is whoever pressed merge, not someone who wrote the change: the pull request's author
/// stands for it instead.
pub fn by_file(commits: &[RangeCommit]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in commits {
        let merged_by_gitea = c.parents >= 2 && c.pull_author.is_some();
        let committed = c.author.as_deref().filter(|_| !merged_by_gitea);
        let names: Vec<String> = committed
            .into_iter()
            .chain(c.pull_author.as_deref())
            .map(decision::by)
            .collect();
        for file in &c.files {
            lineage::extend(out.entry(file.clone()).or_default(), names.clone());
        }
    }
    out
}

/// Adds, to each document the revision changes (one the inventory does not hold with this
/// digest), the names behind its file. The digest stays: who wrote a document is not its
/// content.
pub fn attribute(
    documents: &mut [Document],
    inventory: &[InventoryEntry],
    authors: &BTreeMap<String, Vec<String>>,
) {
    for d in documents.iter_mut() {
        let unchanged = inventory
            .iter()
            .any(|e| e.kind == d.kind.as_str() && e.name == d.name && e.digest == d.digest);
        let Some(names) = authors.get(&d.file).filter(|_| !unchanged) else {
            continue;
        };
        let annotation = &mut d.body["metadata"]["annotations"][PROPOSED_BY];
        let mut lineage = lineage::parse(annotation.as_str().unwrap_or_default());
        lineage::extend(&mut lineage, names.iter().cloned());
        *annotation = serde_json::Value::String(lineage::render(&lineage));
    }
}

/// Where the commits a sync attributes begin: after the commit last applied when the branch moved
/// on from it; otherwise (a first sync, or a rewritten branch whose applied commit may be gone)
/// the revision's whole history.
pub fn since(applied: Option<&str>, fast_forward: bool) -> Option<&str> {
    applied.filter(|_| fast_forward)
}

/// Whether a sync of `commit` has commits to attribute: not when it is the one last applied
/// (an unchanged revision asks Gitea nothing).
pub fn brings_commits(commit: &str, since: Option<&str>) -> bool {
    since != Some(commit)
}

/// Why a revision is not applied while Gitea cannot say who wrote it.
pub fn unknown(revision: &str, repository: &str, why: &str) -> String {
    format!(
        "revision {revision} is not applied: ledgerops names who wrote each change it applies (four eyes), and Gitea did not say who wrote the commits of {repository} ({why}); it is tried again at the next interval. Check that the ledgerops bot can read {repository}."
    )
}

/// Why a revision with more commits than can be attributed is not applied.
pub fn too_long(revision: &str, first: bool) -> String {
    let range = if first {
        format!("its history has more than {MAX_COMMITS} commits")
    } else {
        format!("it brings more than {MAX_COMMITS} commits since the revision last applied")
    };
    format!(
        "revision {revision} is not applied: {range}, and ledgerops names who wrote each change it applies (four eyes). Push fewer commits at a time, or point spec.branch at a branch with a shorter history."
    )
}

#[cfg(test)]
#[path = "authorship_tests.rs"]
mod tests;
