//! Which objects a ConfigRepo may change or delete: the ones it created (its inventory, which only
//! the controller writes, names them with their uid), and a learned rule the controller proposed
//! to its repository (the merge is that proposal coming back). Anything else of the same name is
//! someone else's and is never adopted, as Argo CD refuses to adopt what another application
//! tracks.

use super::RepoKind;
use super::decide::Live;
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
mod tests {
    use super::*;

    fn live(kind: RepoKind, uid: &str, proposed_to: Option<&str>) -> Live {
        Live {
            kind,
            name: "x".into(),
            uid: uid.into(),
            resource_version: "1".into(),
            generation: Some(1),
            opted_out: false,
            applying: false,
            demoted: None,
            proposed_to: proposed_to.map(Into::into),
        }
    }

    fn entry(uid: Option<&str>) -> InventoryEntry {
        InventoryEntry {
            kind: "Transaction".into(),
            name: "x".into(),
            digest: "d".into(),
            generation: Some(1),
            commit: None,
            uid: uid.map(Into::into),
        }
    }

    #[test]
    fn table() {
        use RepoKind::{CategorizationRule as Rule, Transaction as Tx};
        let home = Some("household/config");
        let foreign = |c: &Claim| matches!(c, Claim::Foreign(_));
        // (what, inventory entry, live object, this ConfigRepo's repository, foreign)
        type Case<'a> = (
            &'a str,
            Option<InventoryEntry>,
            Option<Live>,
            Option<&'a str>,
            bool,
        );
        let cases: Vec<Case> = vec![
            ("nothing there", None, None, home, false),
            (
                "our uid",
                Some(entry(Some("u1"))),
                Some(live(Tx, "u1", None)),
                home,
                false,
            ),
            (
                "legacy entry",
                Some(entry(None)),
                Some(live(Tx, "u1", None)),
                home,
                false,
            ),
            (
                "re-made by someone",
                Some(entry(Some("u1"))),
                Some(live(Tx, "u2", None)),
                home,
                true,
            ),
            ("never ours", None, Some(live(Tx, "u1", None)), home, true),
            (
                "a rule proposed here",
                None,
                Some(live(Rule, "u1", home)),
                home,
                false,
            ),
            (
                "a rule proposed elsewhere",
                None,
                Some(live(Rule, "u1", Some("other/config"))),
                home,
                true,
            ),
            (
                "a rule, no Gitea repository",
                None,
                Some(live(Rule, "u1", None)),
                None,
                true,
            ),
            (
                "a Transaction claiming a proposal",
                None,
                Some(live(Tx, "u1", home)),
                home,
                true,
            ),
        ];
        for (what, e, l, repository, want_foreign) in cases {
            let got = claim(e.as_ref(), l.as_ref(), repository);
            assert_eq!(foreign(&got), want_foreign, "{what}: {got:?}");
            if l.is_none() {
                assert_eq!(got, Claim::Free, "{what}");
            }
        }
    }
}
