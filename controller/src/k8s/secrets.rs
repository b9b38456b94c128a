//! Reading the YNAB token from a Secret.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::api::common::SecretKeyRef;
use crate::ynab::token::Token;

/// Why the token could not be read. Never carries the Secret's data.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error(
        "Secret {name} does not exist in namespace {namespace}: create it with `kubectl create secret generic {name} -n {namespace} --from-literal={key}=<YNAB personal access token>`"
    )]
    Missing {
        namespace: String,
        name: String,
        key: String,
    },
    #[error(
        "Secret {name} in namespace {namespace} has no non-empty key {key}: add the YNAB personal access token under that key"
    )]
    NoKey {
        namespace: String,
        name: String,
        key: String,
    },
    #[error("reading Secret {name}: {source}")]
    Kube { name: String, source: kube::Error },
}

/// The token stored under `reference` in `namespace`.
pub async fn read_token(
    client: &kube::Client,
    namespace: &str,
    reference: &SecretKeyRef,
) -> Result<Token, SecretError> {
    let (name, key) = (reference.name.clone(), reference.key.clone());
    let secret = Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(&name)
        .await
        .map_err(|source| SecretError::Kube {
            name: name.clone(),
            source,
        })?
        .ok_or_else(|| SecretError::Missing {
            namespace: namespace.into(),
            name: name.clone(),
            key: key.clone(),
        })?;
    let value = secret
        .data
        .as_ref()
        .and_then(|d| d.get(&key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned());
    match value.map(Token::new) {
        Some(token) if !token.expose().is_empty() => Ok(token),
        _ => Err(SecretError::NoKey {
            namespace: namespace.into(),
            name,
            key,
        }),
    }
}
