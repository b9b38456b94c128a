//! Reading a ConfigRepo's Git credentials from a Secret that opted in to being them.

use kube::ResourceExt;

use super::secrets::{OptedIn, read_opted_in};
use crate::logic::budget::token_grant::{self, NotGranted};
use crate::logic::config_repo::url::{self, ScopeError};
use crate::logic::values::git_credentials::Credentials;

/// The label a Secret must carry, with the value `"true"`, before a ConfigRepo sends it to a Git
/// server: without it, anyone who can create a ConfigRepo could send any Secret of the namespace
/// (a YNAB token) to a server of theirs.
pub const GIT_CREDENTIALS_LABEL: &str = "ledgerops.dev/git-credentials";

/// Why the credentials could not be read. Never carries the Secret's data.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(
        "Secret {name} (spec.secretRef) does not exist in namespace {namespace}: create it with keys username and password (or token), labelled {GIT_CREDENTIALS_LABEL}=true"
    )]
    Missing { namespace: String, name: String },
    #[error(
        "Secret {name} in namespace {namespace} is not labelled {GIT_CREDENTIALS_LABEL}=true, so it was not sent to the Git server: if it holds this repository's credentials, `kubectl label secret {name} -n {namespace} {GIT_CREDENTIALS_LABEL}=true`"
    )]
    NotOptedIn { namespace: String, name: String },
    #[error(
        "Secret {name} in namespace {namespace} has neither a password nor a token key: add the Git password or access token under one of them"
    )]
    NoPassword { namespace: String, name: String },
    #[error(
        "namespace {namespace} is not one ledgerops reads Secrets in (--token-namespace: {allowed}), so Secret {name} was not read: move the Secret into one of those and name it in spec.secretRef.namespace"
    )]
    OutsideNamespaces {
        namespace: String,
        name: String,
        allowed: String,
    },
    #[error("{}", token_grant::message(name, namespace, repo_namespace, why))]
    NotGranted {
        namespace: String,
        name: String,
        repo_namespace: String,
        why: NotGranted,
    },
    #[error("Secret {name} in namespace {namespace} was not sent to the Git server: {why}")]
    NotForUrl {
        namespace: String,
        name: String,
        why: ScopeError,
    },
    #[error("reading Secret {name}: {source}")]
    Kube { name: String, source: kube::Error },
}

impl CredentialsError {
    /// The `Ready` reason.
    pub fn reason(&self) -> &'static str {
        match self {
            CredentialsError::NotOptedIn { .. } => "CredentialsNotOptedIn",
            CredentialsError::NotForUrl { .. } => "CredentialsNotForUrl",
            CredentialsError::NotGranted { .. } => "CredentialsNotGranted",
            _ => "CredentialsMissing",
        }
    }
}

/// The credentials in Secret `name` of `namespace` for the repository at `repo_url` of a
/// ConfigRepo of `repo_namespace`: `username` (default `git`) and `password` or `token`, if the
/// Secret serves that URL and lies in the ConfigRepo's namespace or grants it.
pub async fn read(
    client: &kube::Client,
    allowed: &[String],
    (namespace, repo_namespace): (&str, &str),
    name: &str,
    repo_url: &str,
) -> Result<Credentials, CredentialsError> {
    let (ns, n) = (namespace.to_owned(), name.to_owned());
    let found = read_opted_in(
        client,
        allowed,
        (namespace, repo_namespace),
        name,
        GIT_CREDENTIALS_LABEL,
    )
    .await
    .map_err(|source| CredentialsError::Kube {
        name: n.clone(),
        source,
    })?;
    let secret = match found {
        OptedIn::Found(secret) => secret,
        OptedIn::Missing => {
            return Err(CredentialsError::Missing {
                namespace: ns,
                name: n,
            });
        }
        OptedIn::NotOptedIn => {
            return Err(CredentialsError::NotOptedIn {
                namespace: ns,
                name: n,
            });
        }
        OptedIn::NotGranted(why) => {
            return Err(CredentialsError::NotGranted {
                namespace: ns,
                name: n,
                repo_namespace: repo_namespace.to_owned(),
                why,
            });
        }
        OptedIn::OutsideNamespaces => {
            return Err(CredentialsError::OutsideNamespaces {
                namespace: ns,
                name: n,
                allowed: allowed.join(", "),
            });
        }
    };
    let scope = url::scope(
        secret.annotations().get(url::SERVES).map(String::as_str),
        repo_url,
    )
    .map_err(|why| CredentialsError::NotForUrl {
        namespace: ns.clone(),
        name: n.clone(),
        why,
    })?;
    let key = |k: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(k))
            .map(|b| String::from_utf8_lossy(&b.0).trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let password =
        key("password")
            .or_else(|| key("token"))
            .ok_or(CredentialsError::NoPassword {
                namespace: ns,
                name: n,
            })?;
    Ok(Credentials {
        username: key("username").unwrap_or_else(|| "git".into()),
        password,
        // libgit2 asks for credentials with the URL it is talking to: only within the scope.
        serves: std::sync::Arc::new(move |u| ::url::Url::parse(u).is_ok_and(|u| scope.allows(&u))),
    })
}
