//! A change's lineage: everyone who shaped it. Four eyes means the decider is outside it.
//!
//! An object's `ledgerops.dev/proposed-by` lists the people who created it or changed what it
//! proposes (admission keeps that list truthful and never lets it shrink). Some names stand for
//! more people: `configrepo:<name>` for everyone who made or changed that ConfigRepo, a Gitea
//! login for the Kubernetes user an owner mapped it to. [`gather`] follows them, so a person
//! who routes a change through a repository of their own, or through Gitea, is still its
//! proposer.

use std::collections::BTreeMap;

use super::powers::{Actor, actor};
use crate::api::common::PROPOSED_BY;

/// The most names a gathered lineage holds: an object's annotation is small, and a lineage
/// longer than this is refused rather than cut (see [`gather`]).
pub const MAX: usize = 64;

/// The names `value` lists, in order, each once.
pub fn parse(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// The lineage an object's annotations name.
pub fn of(annotations: Option<&BTreeMap<String, String>>) -> Vec<String> {
    annotations
        .and_then(|a| a.get(PROPOSED_BY))
        .map(|v| parse(v))
        .unwrap_or_default()
}

/// `names` as the annotation's value.
pub fn render(names: &[String]) -> String {
    names.join(",")
}

/// `lineage` with each of `more` added once, after what it had.
pub fn extend(lineage: &mut Vec<String>, more: impl IntoIterator<Item = String>) {
    for name in more {
        if !name.trim().is_empty() && !lineage.contains(&name) {
            lineage.push(name);
        }
    }
}

/// What the names of a lineage stand for, as the controller knows it.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Each ConfigRepo of the namespace, by name: its own lineage.
    pub repos: BTreeMap<String, Vec<String>>,
    /// The ConfigRepos whose inventory holds the object: they applied it, whatever name its
    /// annotation carries (a ConfigRepo applying as a ServiceAccount writes that account's).
    pub applied_by: Vec<String>,
    /// Gitea logins an owner mapped to Kubernetes users (the Budget's `approval.giteaUsers`).
    pub gitea_users: BTreeMap<String, String>,
}

/// Everyone behind `lineage`: each name, then, for a ConfigRepo it names or that applied the
/// object, everyone who shaped that ConfigRepo, and for a Gitea login the user it maps to.
/// `Err` when that comes to more than [`MAX`] names: four eyes cannot be judged on a cut list.
pub fn gather(lineage: &[String], known: &Known) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut queue: Vec<String> = lineage.to_vec();
    queue.extend(known.applied_by.iter().map(|r| format!("configrepo:{r}")));
    let mut next = 0;
    while next < queue.len() {
        let name = queue[next].clone();
        next += 1;
        if out.contains(&name) {
            continue;
        }
        match actor(&name) {
            Actor::ConfigRepo(repo) => {
                queue.extend(known.repos.get(&repo).into_iter().flatten().cloned());
            }
            Actor::Gitea(login) => queue.extend(known.gitea_users.get(&login).cloned()),
            Actor::Person(_) | Actor::Controller(_) => {}
        }
        out.push(name);
        if out.len() > MAX {
            return Err(format!(
                "its lineage names more than {MAX} people and repositories, too many to judge four eyes on: ask again with a smaller change"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "lineage_tests.rs"]
mod tests;
