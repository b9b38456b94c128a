//! Whether a Secret in another namespace than the object that names it lets that object use it:
//! like Gateway API's ReferenceGrant, the Secret's side must name the namespace. Tokens can then
//! live where no proposer reads Secrets, while a Budget cannot borrow any Secret it can name.

/// The annotation on a Secret listing, comma-separated and by exact name, the namespaces whose
/// Budgets and ConfigRepos may use it from elsewhere. No wildcard: each namespace is named.
pub const ALLOWED_NAMESPACES: &str = "ledgerops.dev/allowed-namespaces";

/// Why a Secret of another namespace may not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotGranted {
    /// The Secret has no annotation, or its list does not name the namespace.
    Unnamed {
        /// The annotation's names, in order (empty without one).
        listed: Vec<String>,
    },
    /// The annotation lists `*`, which is not honoured.
    Wildcard { listed: Vec<String> },
}

impl NotGranted {
    /// The value to set the annotation to so that it names `namespace` too (a `*` dropped).
    pub fn fixed_value(&self, namespace: &str) -> String {
        let (NotGranted::Unnamed { listed } | NotGranted::Wildcard { listed }) = self;
        let mut names: Vec<&str> = listed
            .iter()
            .map(String::as_str)
            .filter(|n| *n != "*")
            .collect();
        names.push(namespace);
        names.join(",")
    }
}

/// Whether an object of namespace `user` may use a Secret of namespace `secret` that carries
/// `annotation` (the value of [`ALLOWED_NAMESPACES`]). A Secret of the object's own namespace
/// always may: that is how references worked before namespaces could be named.
pub fn check(secret: &str, user: &str, annotation: Option<&str>) -> Result<(), NotGranted> {
    if secret == user {
        return Ok(());
    }
    let listed: Vec<String> = annotation
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    if listed.iter().any(|n| n == user) {
        Ok(())
    } else if listed.iter().any(|n| n == "*") {
        Err(NotGranted::Wildcard { listed })
    } else {
        Err(NotGranted::Unnamed { listed })
    }
}

/// What to tell a person when Secret `name` of namespace `secret_ns` does not grant `user_ns`.
pub fn message(name: &str, secret_ns: &str, user_ns: &str, why: &NotGranted) -> String {
    let found = match why {
        NotGranted::Unnamed { listed } if listed.is_empty() => {
            format!("has no annotation {ALLOWED_NAMESPACES}")
        }
        NotGranted::Unnamed { listed } => {
            format!(
                "names only {} in its annotation {ALLOWED_NAMESPACES}",
                listed.join(",")
            )
        }
        NotGranted::Wildcard { .. } => format!(
            "lists \"*\" in its annotation {ALLOWED_NAMESPACES}, which is not honoured (each namespace must be named)"
        ),
    };
    format!(
        "Secret {name} in namespace {secret_ns} {found}, so it is not used for namespace {user_ns} and nothing was sent: if namespace {user_ns} may use it, `kubectl annotate secret {name} -n {secret_ns} --overwrite {ALLOWED_NAMESPACES}={}`",
        why.fixed_value(user_ns)
    )
}

#[cfg(test)]
#[path = "token_grant_tests.rs"]
mod tests;
