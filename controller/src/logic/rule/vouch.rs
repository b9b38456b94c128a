//! Whether ledgerops vouches for a proposal's branch: its own commits (those not on the base)
//! form one line with no merge (what a merge brings in has no one commit to be compared with),
//! from their start to their newest only the rule's file changes, and that file is a regular
//! file holding the manifest ledgerops wrote. Anyone who can push to the repository can push to
//! the branch, before its pull request is opened and after, so this is asked both times. Trees
//! are compared rather than the files each commit lists, as those lists leave out a file turned
//! into a symlink or a submodule.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;

use crate::logic::job::report::cell_code;
use crate::logic::values::outside_text::{MAX_CHARS, sanitize};

/// Begins the comment ledgerops leaves on a pull request it closes, so it is left once.
pub const WITHDRAWN: &str = "<!-- ledgerops:withdrawn -->";

/// The most findings named in a comment or status (a branch may hold thousands of files).
const MAX_FOUND: usize = 20;

/// The mode of a regular, non-executable file, as ledgerops writes the rule's.
const REGULAR: &str = "100644";

/// A commit on a branch and not on its base, as Gitea's compare lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchCommit {
    pub sha: String,
    pub parents: Vec<String>,
}

/// A file, symlink or submodule of a commit's tree (directories are not entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: String,
    pub mode: String,
    pub sha: String,
}

/// Where a branch's own commits start (the base's commit they were made on) and end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub from: String,
    pub head: String,
}

/// Something on a proposal's branch that ledgerops did not write.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Foreign {
    /// A path other than the rule's file, added, removed or changed.
    File(String),
    /// The rule's file, not a regular file holding the manifest ledgerops wrote (or not there).
    Content(String),
    /// A commit with other than one parent.
    Merge(String),
}

/// The span of a branch's own `commits`; `Ok(None)` when it has none, the merges when it has
/// any.
pub fn span(commits: &[BranchCommit]) -> Result<Option<Span>, Vec<Foreign>> {
    let merges: Vec<Foreign> = commits
        .iter()
        .filter(|c| c.parents.len() != 1)
        .map(|c| Foreign::Merge(c.sha.clone()))
        .collect();
    if !merges.is_empty() {
        return Err(merges);
    }
    let shas: HashSet<&str> = commits.iter().map(|c| c.sha.as_str()).collect();
    let parents: HashSet<&str> = commits.iter().map(|c| c.parents[0].as_str()).collect();
    // One line: the newest is nobody's parent, and the start is the one parent not on the line.
    let head = shas.iter().find(|s| !parents.contains(*s));
    let from = parents.iter().find(|p| !shas.contains(*p));
    Ok(head.zip(from).map(|(head, from)| Span {
        from: (*from).to_owned(),
        head: (*head).to_owned(),
    }))
}

/// What a branch changes that ledgerops did not write, between the trees its span starts from
/// (`from`) and ends at (`head`); `on_branch` is the rule's `file` there. Empty when the branch
/// holds only the manifest.
pub fn foreign(
    from: &[TreeEntry],
    head: &[TreeEntry],
    file: &str,
    on_branch: Option<&str>,
    manifest: &str,
) -> Vec<Foreign> {
    let (before, after) = (by_path(from), by_path(head));
    let paths: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    let mut found: Vec<Foreign> = paths
        .into_iter()
        .filter(|p| *p != file && before.get(p) != after.get(p))
        .map(|p| Foreign::File(p.to_owned()))
        .collect();
    let regular = after.get(file).is_some_and(|(mode, _)| *mode == REGULAR);
    if !regular || on_branch != Some(manifest) {
        found.push(Foreign::Content(file.to_owned()));
    }
    found
}

fn by_path(tree: &[TreeEntry]) -> BTreeMap<&str, (&str, &str)> {
    tree.iter()
        .map(|e| (e.path.as_str(), (e.mode.as_str(), e.sha.as_str())))
        .collect()
}

impl Foreign {
    fn parts(&self) -> (&str, &'static str, &'static str) {
        match self {
            Foreign::File(f) => (f, "", ""),
            Foreign::Content(f) => (f, "", " (not the manifest ledgerops wrote)"),
            Foreign::Merge(sha) => (sha.get(..12).unwrap_or(sha), "merge commit ", ""),
        }
    }
}

/// As a status names it: plain, without control characters.
impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, before, after) = self.parts();
        write!(f, "{before}{}{after}", sanitize(name, MAX_CHARS))
    }
}

/// The findings as a status records them: the first few, by name.
pub fn named(found: &[Foreign]) -> Vec<String> {
    found
        .iter()
        .take(MAX_FOUND)
        .map(ToString::to_string)
        .collect()
}

/// The comment on the pull request ledgerops closes: what it found, by name (a name is the
/// pusher's text: each goes in a code span), and how to have the rule proposed again.
pub fn withdrawal_comment(rule: &str, branch: &str, found: &[Foreign]) -> String {
    let mut list = String::new();
    for item in found.iter().take(MAX_FOUND) {
        let (name, before, after) = item.parts();
        list.push_str(&format!("- {before}{}{after}\n", cell_code(name)));
    }
    if found.len() > MAX_FOUND {
        list.push_str(&format!("- and {} more\n", found.len() - MAX_FOUND));
    }
    format!(
        "{WITHDRAWN}\nledgerops closed this pull request: its branch {} now holds what ledgerops did not write.\n\n{list}\nledgerops does not vouch for content it did not write, so CategorizationRule {} no longer counts as proposed. To have it proposed again, delete branch {}: ledgerops then opens a new pull request that adds only the rule's file.",
        cell_code(branch),
        cell_code(rule),
        cell_code(branch),
    )
}

#[cfg(test)]
#[path = "vouch_tests.rs"]
mod tests;
