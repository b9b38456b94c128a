//! Which objects a ConfigRepo may change or delete: the ones it created (its inventory, which only
//! the controller writes, names them with their uid), and a learned rule the controller proposed
//! to its repository (the merge is that proposal coming back). Anything else of the same name is
//! someone else's and is never adopted, as Argo CD refuses to adopt what another application
//! tracks.

use super::{Live, RepoKind};
use crate::api::config_repo::InventoryEntry;

/// Whose an object a repository declares is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// Nothing of that name exists: the repository creates it.
    Free,
    /// The repository's own.
    Ours,
    /// Someone else's, and why.
    Foreign(&'static str),
}

/// Whose the object `live` is for the repository with inventory entry `entry`; `repository` is
/// the Gitea repository (`owner/name`) the ConfigRepo follows, if any.
pub fn claim(
    entry: Option<&InventoryEntry>,
    live: Option<&Live>,
    repository: Option<&str>,
) -> Claim {
    let Some(object) = live else {
        return Claim::Free;
    };
    match entry {
        // An entry written before uids were recorded vouches by name, once: the next status
        // records the uid.
        Some(e) if e.uid.as_deref().is_none_or(|uid| uid == object.uid) => Claim::Ours,
        Some(_) => Claim::Foreign("it was deleted and made again by someone else"),
        None if object.kind == RepoKind::CategorizationRule
            && repository.is_some()
            && object.proposed_to.as_deref() == repository =>
        {
            Claim::Ours
        }
        None => Claim::Foreign("it is not in this repository's inventory"),
    }
}

#[cfg(test)]
#[path = "ownership_tests.rs"]
mod tests;
