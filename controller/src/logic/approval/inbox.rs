//! The inbox: every ApprovalRequest that waits for a person is one Gitea issue, in the repository
//! its Budget names, assigned to the people who may decide it; the issue follows the request
//! (and the requests that replace it after a change) to its end. This module decides where the
//! issue lives, which one it is, which request speaks for it and whom it is assigned to; the
//! text is [`super::inbox_body`]'s. The issue is its own record: its hidden marker, the whole
//! first line of the bot's issue, names the subject it follows, so that a restart or a new
//! leader finds it instead of opening another.

use kube::ResourceExt;

use crate::api::approval::{ApprovalPhase, ApprovalRequest};
use crate::api::budget::Budget;
use crate::api::config_repo::ConfigRepo;
use crate::logic::config_repo::RepoKind;
use crate::logic::config_repo::feedback::gitea_repository;
use crate::logic::job::trust::Allowlist;

/// The hidden first line of the issue that follows the requests of subject `subject_uid`.
pub fn marker(subject_uid: &str) -> String {
    format!("<!-- ledgerops:inbox subject={subject_uid} -->")
}

/// The subject an issue body follows, when its first line is an inbox marker.
pub fn subject_of(body: &str) -> Option<&str> {
    body.lines()
        .next()?
        .strip_prefix("<!-- ledgerops:inbox subject=")?
        .strip_suffix(" -->")
        .filter(|uid| !uid.is_empty() && !uid.contains(' '))
}

/// The number of the issue that follows `subject_uid` among `issues` (number, author, body):
/// the oldest the bot opened with its marker. Issues of anyone else never count, whatever they
/// contain.
pub fn find<'a>(
    issues: impl IntoIterator<Item = (i64, &'a str, &'a str)>,
    bot: &str,
    subject_uid: &str,
) -> Option<i64> {
    issues
        .into_iter()
        .filter(|(_, author, body)| *author == bot && subject_of(body) == Some(subject_uid))
        .map(|(number, _, _)| number)
        .min()
}

/// The uid of the object `r` asks about, as the controller recorded it when it issued `r`; None
/// for a request the controller did not issue (it is never shown).
pub fn subject_uid(r: &ApprovalRequest) -> Option<&str> {
    r.status
        .as_ref()?
        .issued_for
        .as_ref()
        .map(|i| i.subject_uid.as_str())
}

/// The request that speaks for the issue of `subject`: of those the controller issued for it,
/// one not replaced (Stale) before one that was, then the newest by issuance time, then name. A
/// change of the plan or of YNAB replaces a request with a newer one, often within the same
/// second (the resolution of a Kubernetes time), whose issue is then the same, edited in place.
pub fn newest<'a>(
    requests: impl IntoIterator<Item = &'a ApprovalRequest>,
    subject: &str,
) -> Option<&'a ApprovalRequest> {
    requests
        .into_iter()
        .filter(|r| subject_uid(r) == Some(subject))
        .max_by_key(|r| {
            let status = r.status.as_ref();
            let replaced = status.and_then(|s| s.phase) == Some(ApprovalPhase::Stale);
            let at = status.and_then(|s| s.issued_for.as_ref());
            (!replaced, at.map(|i| i.at.0), r.name_any())
        })
}

/// The inbox repository of Budget `budget_name` of `namespace` (`budget` when the cache holds
/// it), on the Gitea at `gitea_url`, among those `allowed`: the one the Budget names; by default
/// the ConfigRepo of its namespace that declares the Budget, else the first such ConfigRepo by
/// name. None when the Budget turned its inbox off or names a repository the bot may not speak
/// in, or when its namespace follows no repository there.
pub fn repository(
    (namespace, budget_name): (&str, &str),
    budget: Option<&Budget>,
    repos: &[&ConfigRepo],
    gitea_url: &str,
    allowed: &Allowlist,
) -> Option<String> {
    let inbox = budget.map(|b| &b.spec.approval.inbox);
    if inbox.is_some_and(|i| !i.enabled) {
        return None;
    }
    if let Some(named) = inbox.and_then(|i| i.repository.as_deref()) {
        return allowed.allows(named).then(|| named.to_owned());
    }
    let mut followed: Vec<(&ConfigRepo, String)> = repos
        .iter()
        .filter(|c| c.namespace().as_deref() == Some(namespace))
        .filter_map(|c| {
            let repo = gitea_repository(&c.spec.url, gitea_url).filter(|g| allowed.allows(g))?;
            Some((*c, repo))
        })
        .collect();
    followed.sort_by_key(|(c, _)| c.name_any());
    let declares_budget = |c: &ConfigRepo| {
        c.status.as_ref().is_some_and(|s| {
            s.inventory
                .iter()
                .any(|e| e.kind == RepoKind::Budget.as_str() && e.name == budget_name)
        })
    };
    followed
        .iter()
        .find(|(c, _)| declares_budget(c))
        .or(followed.first())
        .map(|(_, repo)| repo.clone())
}

/// The Gitea logins to ask about `r`, before the authorizer is asked whether each one's user
/// holds `approve`: every login `gitea_users` (login → user) maps, except, with four eyes, those
/// whose user shaped the change (its lineage, as a user name or as `gitea:<login>`). Sorted.
pub fn candidates(
    r: &ApprovalRequest,
    gitea_users: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let lineage = &r.spec.proposed_by;
    gitea_users
        .iter()
        .filter(|(login, user)| {
            !r.spec.four_eyes
                || !lineage
                    .iter()
                    .any(|p| p == *user || *p == format!("gitea:{login}"))
        })
        .map(|(login, user)| (login.clone(), user.clone()))
        .collect()
}

#[cfg(test)]
#[path = "inbox_tests.rs"]
pub(super) mod tests;
