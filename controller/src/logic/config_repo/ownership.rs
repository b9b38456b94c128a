//! Which objects a ConfigRepo may change or delete: the ones it created (its inventory, which only
//! the controller writes, names them with their uid), and a learned rule this very ConfigRepo
//! proposed to its repository and branch, while nobody blessed it (the merge is that proposal
//! coming back; a rule a person blessed is theirs to change). Anything else of the same name is
//! someone else's and is never adopted, as Argo CD refuses to adopt what another application
//! tracks.

use k8s_openapi::jiff::Timestamp;

use super::{Live, RepoKind};
use crate::api::config_repo::InventoryEntry;
use crate::logic::approval::lineage;

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

/// Who a ConfigRepo is, for telling its objects from someone else's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owner<'a> {
    /// The Gitea repository (`owner/name`) the ConfigRepo follows, if any.
    pub repository: Option<&'a str>,
    /// The ConfigRepo's name and the branch it follows: a learned rule is taken over only by
    /// the ConfigRepo that proposed it, for that branch.
    pub name: &'a str,
    pub branch: &'a str,
    /// How an object it made is known when its inventory does not name it, if that can be
    /// trusted now.
    pub maker: Option<Maker<'a>>,
}

/// What only this ConfigRepo's applies leave on an object: `ledgerops.dev/proposed-by` naming
/// it first (admission lets nobody but the controller write another user's name there, so this holds
/// only while admission is verified), on an object made since the ConfigRepo was (not one of a
/// deleted namesake's). A sync cut off between applying and recording its inventory (a crash, a
/// refused status write) leaves such objects; without this they would read as foreign for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Maker<'a> {
    pub proposer: &'a str,
    pub since: Timestamp,
}

/// Whose the object `live` is for the repository `owner` with inventory entry `entry`.
pub fn claim(entry: Option<&InventoryEntry>, live: Option<&Live>, owner: &Owner) -> Claim {
    let Some(object) = live else {
        return Claim::Free;
    };
    let made_here = owner.maker.as_ref().is_some_and(|m| {
        object.made.as_ref().is_some_and(|(names, created)| {
            lineage::parse(names).first().map(String::as_str) == Some(m.proposer)
                && *created >= m.since
        })
    });
    match entry {
        // An entry written before uids were recorded vouches by name, once: the next status
        // records the uid.
        Some(e) if e.uid.as_deref().is_none_or(|uid| uid == object.uid) => Claim::Ours,
        _ if made_here => Claim::Ours,
        Some(_) => Claim::Foreign("it was deleted and made again by someone else"),
        None if object.kind == RepoKind::CategorizationRule
            && object.proposed_to.as_ref().is_some_and(|p| {
                owner.repository == Some(p.repository.as_str())
                    && p.config_repo == owner.name
                    && p.branch == owner.branch
            }) =>
        {
            Claim::Ours
        }
        None => Claim::Foreign("it is not in this repository's inventory"),
    }
}

#[cfg(test)]
#[path = "ownership_tests.rs"]
mod tests;
