//! Reading the YNAB token from a Secret that opted in to being one.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::api::common::SecretKeyRef;
use crate::logic::budget::token_grant::{self, ALLOWED_NAMESPACES, NotGranted};
use crate::logic::values::token::Token;

/// The label a Secret must carry, with the value `"true"`, before ledgerops reads it as a YNAB
/// token: a Budget cannot send just any Secret of its namespace somewhere.
pub const TOKEN_LABEL: &str = "ledgerops.dev/ynab-token";

/// Why the token could not be read. Never carries the Secret's data.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error(
        "Secret {name} does not exist in namespace {namespace}: create it with `kubectl create secret generic {name} -n {namespace} --from-literal={key}=<YNAB personal access token>` and `kubectl label secret {name} -n {namespace} {TOKEN_LABEL}=true`"
    )]
    Missing {
        namespace: String,
        name: String,
        key: String,
    },
    #[error(
        "Secret {name} in namespace {namespace} is not labelled {TOKEN_LABEL}=true, so it is not read as a YNAB token and nothing was sent: if it holds one, `kubectl label secret {name} -n {namespace} {TOKEN_LABEL}=true`"
    )]
    NotOptedIn { namespace: String, name: String },
    #[error(
        "Secret {name} in namespace {namespace} has no non-empty key {key}: add the YNAB personal access token under that key"
    )]
    NoKey {
        namespace: String,
        name: String,
        key: String,
    },
    #[error(
        "key {key} of Secret {name} in namespace {namespace} is not a token (it holds spaces or control characters inside): put only the YNAB personal access token there"
    )]
    Malformed {
        namespace: String,
        name: String,
        key: String,
    },
    #[error(
        "namespace {namespace} is not one ledgerops reads token Secrets in (--token-namespace: {allowed}), so Secret {name} was not read: move the Secret into one of those and name it in spec.tokenSecretRef.namespace, or add {namespace} to the chart's tokenNamespaces"
    )]
    OutsideNamespaces {
        namespace: String,
        name: String,
        allowed: String,
    },
    #[error("{}", token_grant::message(name, namespace, budget_namespace, why))]
    NotGranted {
        namespace: String,
        name: String,
        budget_namespace: String,
        why: NotGranted,
    },
    #[error("reading Secret {name}: {source}")]
    Kube { name: String, source: kube::Error },
}

impl SecretError {
    /// The Budget's `Ready` reason for this error.
    pub fn reason(&self) -> &'static str {
        match self {
            SecretError::NotOptedIn { .. } => "TokenNotOptedIn",
            SecretError::OutsideNamespaces { .. } => "TokenNamespaceNotAllowed",
            SecretError::NotGranted { .. } => "TokenNotGranted",
            _ => "TokenMissing",
        }
    }
}

/// A Secret that ledgerops uses only when it carries an opt-in label.
pub enum OptedIn {
    Found(Box<Secret>),
    Missing,
    NotOptedIn,
    /// The Secret lies in another namespace than the object that names it and does not name
    /// that object's namespace in [`ALLOWED_NAMESPACES`].
    NotGranted(NotGranted),
    /// `namespace` is not one Secrets may be read in: nothing was asked (with namespaced RBAC
    /// the API server would only say Forbidden).
    OutsideNamespaces,
}

/// Secret `name` of `namespace` for an object of namespace `user`, if `namespace` is one of
/// `allowed` (empty: every namespace), the Secret carries `label` with the value `"true"`, and
/// it is in `user` or names `user` in [`ALLOWED_NAMESPACES`].
pub async fn read_opted_in(
    client: &kube::Client,
    allowed: &[String],
    (namespace, user): (&str, &str),
    name: &str,
    label: &str,
) -> Result<OptedIn, kube::Error> {
    if !allowed.is_empty() && !allowed.iter().any(|a| a == namespace) {
        return Ok(OptedIn::OutsideNamespaces);
    }
    let Some(secret) = Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await?
    else {
        return Ok(OptedIn::Missing);
    };
    let opted_in = secret
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(label))
        .is_some_and(|v| v == "true");
    if !opted_in {
        return Ok(OptedIn::NotOptedIn);
    }
    let grant = secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ALLOWED_NAMESPACES))
        .map(String::as_str);
    Ok(match token_grant::check(namespace, user, grant) {
        Ok(()) => OptedIn::Found(Box::new(secret)),
        Err(why) => OptedIn::NotGranted(why),
    })
}

/// The token stored under `reference` for a Budget of `budget_namespace`, if the Secret carries
/// [`TOKEN_LABEL`], its namespace is one of `allowed` (empty: every namespace), and it lies in
/// the Budget's namespace or grants it.
pub async fn read_token(
    client: &kube::Client,
    allowed: &[String],
    budget_namespace: &str,
    reference: &SecretKeyRef,
) -> Result<Token, SecretError> {
    let (name, key) = (reference.name.clone(), reference.key.clone());
    let namespace = reference.namespace_or(budget_namespace);
    let found = read_opted_in(
        client,
        allowed,
        (namespace, budget_namespace),
        &name,
        TOKEN_LABEL,
    )
    .await
    .map_err(|source| SecretError::Kube {
        name: name.clone(),
        source,
    })?;
    let secret = match found {
        OptedIn::Found(secret) => secret,
        OptedIn::Missing => {
            return Err(SecretError::Missing {
                namespace: namespace.into(),
                name,
                key,
            });
        }
        OptedIn::NotOptedIn => {
            return Err(SecretError::NotOptedIn {
                namespace: namespace.into(),
                name,
            });
        }
        OptedIn::NotGranted(why) => {
            return Err(SecretError::NotGranted {
                namespace: namespace.into(),
                name,
                budget_namespace: budget_namespace.into(),
                why,
            });
        }
        OptedIn::OutsideNamespaces => {
            return Err(SecretError::OutsideNamespaces {
                namespace: namespace.into(),
                name,
                allowed: allowed.join(", "),
            });
        }
    };
    let value = secret
        .data
        .as_ref()
        .and_then(|d| d.get(&key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned());
    match value.map(Token::new) {
        Some(token) if token.expose().is_empty() => Err(SecretError::NoKey {
            namespace: namespace.into(),
            name,
            key,
        }),
        Some(token) if token.is_well_formed() => Ok(token),
        Some(_) => Err(SecretError::Malformed {
            namespace: namespace.into(),
            name,
            key,
        }),
        None => Err(SecretError::NoKey {
            namespace: namespace.into(),
            name,
            key,
        }),
    }
}
