//! Categories as people name them: the list a Budget's status publishes (every category a
//! change may use), and the lookup of a name a person typed (`--set tx=Groceries`,
//! `/agent approve X except tx=Groceries`) to the id a decision records.

use crate::api::budget::NamedCategory;
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::validate::category_problem;

/// How many categories a Budget's status lists; a plan has far fewer in practice.
pub const LISTED: usize = 1000;

/// The categories a transaction may be put in (not hidden, internal, deleted or a credit card
/// payment), by group and then name.
pub fn assignable(mirror: &Mirror) -> Vec<NamedCategory> {
    let mut out: Vec<NamedCategory> = mirror
        .categories
        .values()
        .filter(|c| category_problem(&c.id, mirror).is_none())
        .map(|c| NamedCategory {
            id: c.id.clone(),
            name: c.name.clone(),
            group: mirror
                .category_groups
                .get(&c.category_group_id)
                .map(|g| g.name.clone())
                .or_else(|| c.category_group_name.clone()),
        })
        .collect();
    out.sort_by(|a, b| (&a.group, &a.name, &a.id).cmp(&(&b.group, &b.name, &b.id)));
    out.truncate(LISTED);
    out
}

/// Why a typed category names no single category.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error(
        "no category is named {0:?}: write its name as YNAB shows it, Group/Name, or its id (kubectl get budget -o jsonpath='{{.status.categories}}' lists them)"
    )]
    Unknown(String),
    #[error("{typed:?} names {} categories ({}): write it as Group/Name, or use the id", .matches.len(), .matches.join(", "))]
    Ambiguous { typed: String, matches: Vec<String> },
}

/// The id of the category `typed` names among `known`: its id, its name (case and surrounding
/// spaces ignored), or `Group/Name` when two groups hold the same name.
pub fn resolve(typed: &str, known: &[NamedCategory]) -> Result<String, NameError> {
    let typed = typed.trim();
    if let Some(c) = known.iter().find(|c| c.id == typed) {
        return Ok(c.id.clone());
    }
    let same = |a: &str, b: &str| a.trim().to_lowercase() == b.trim().to_lowercase();
    let qualified = |c: &NamedCategory| format!("{}/{}", c.group.as_deref().unwrap_or(""), c.name);
    let by_name: Vec<&NamedCategory> = known.iter().filter(|c| same(&c.name, typed)).collect();
    let found: Vec<&NamedCategory> = if by_name.is_empty() {
        known
            .iter()
            .filter(|c| same(&qualified(c), typed))
            .collect()
    } else {
        by_name
    };
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(NameError::Unknown(typed.to_owned())),
        many => Err(NameError::Ambiguous {
            typed: typed.to_owned(),
            matches: many.iter().map(|c| qualified(c)).collect(),
        }),
    }
}

/// The name of category `id` among `known`, or the id when it is not listed.
pub fn name_of(id: &str, known: &[NamedCategory]) -> String {
    known
        .iter()
        .find(|c| c.id == id)
        .map_or_else(|| id.to_owned(), |c| c.name.clone())
}

#[cfg(test)]
#[path = "category_name_tests.rs"]
mod tests;
