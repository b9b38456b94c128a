//! Where a YNAB token may be sent: the operator's allowlist of API base URLs and the decision
//! whether a Budget's `spec.apiUrl` is on it.
//!
//! An entry is `scheme://host[:port]/path-prefix` in canonical form, with `*` as the port
//! meaning any port (for a local simulator on a random port: `http://127.0.0.1:*/v1`). A URL is
//! allowed when it is in canonical form (as the HTTP client will send it: no `..`, no default
//! port spelled out, lower-case host), has no user info, query or fragment, and has exactly an
//! entry's scheme, host and port (any port for `*`; the scheme's default when none is given)
//! and a path equal to the entry's path or below it on a segment boundary (`/v1` allows `/v1`
//! and `/v1/x`, never `/v10`). A client can only be built for an [`AllowedApiUrl`], which only
//! [`ApiUrlAllowlist::check`] makes.

use std::fmt;

use url::Url;

pub use crate::logic::values::url_prefix::Shape;
use crate::logic::values::url_prefix::{Prefixes, canonical};

/// The flag that sets the allowlist, for messages.
pub const FLAG: &str = "--ynab-api-url-allow";
/// The real YNAB API: the only entry unless the operator says otherwise.
pub const YNAB_API: &str = "https://api.ynab.com/v1";

/// Why an allowlist entry or a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiUrlError {
    #[error("{FLAG} {entry:?}: {shape}")]
    BadEntry { entry: String, shape: Shape },
    #[error(
        "spec.apiUrl {url:?} is refused ({shape}), so no token was sent: point spec.apiUrl at an API base URL on the operator's allowlist ({allowed}; `ledgerops run {FLAG} <base URL>`)"
    )]
    Malformed {
        url: String,
        shape: Shape,
        allowed: String,
    },
    #[error(
        "spec.apiUrl {url:?} is not on the operator's allowlist ({allowed}), so no token was sent: point spec.apiUrl at the real YNAB API, or have the operator add it with `ledgerops run {FLAG} <base URL>`"
    )]
    NotAllowed { url: String, allowed: String },
}

/// A URL a token may be sent to, with its trailing slash dropped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowedApiUrl(Url);

impl AllowedApiUrl {
    /// The base URL, as checked.
    pub fn as_str(&self) -> &str {
        self.0.as_str().trim_end_matches('/')
    }

    /// The URL of an endpoint below the base: each segment is percent-encoded (`/`, `%`, `?`,
    /// `#` included) and `.`/`..` are dropped, so no segment can leave the allowed path.
    pub fn endpoint(&self, segments: &[&str]) -> Url {
        let mut url = self.0.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }
}

impl fmt::Display for AllowedApiUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operator's allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiUrlAllowlist(Prefixes);

impl Default for ApiUrlAllowlist {
    /// Only the real YNAB API.
    fn default() -> Self {
        Self::parse([YNAB_API]).expect("the YNAB API URL is a valid entry")
    }
}

impl ApiUrlAllowlist {
    /// The allowlist of `entries`; an empty list allows nothing.
    pub fn parse<S: AsRef<str>>(
        entries: impl IntoIterator<Item = S>,
    ) -> Result<ApiUrlAllowlist, ApiUrlError> {
        Prefixes::parse(entries)
            .map(ApiUrlAllowlist)
            .map_err(|(entry, shape)| ApiUrlError::BadEntry { entry, shape })
    }

    /// `url` as a URL a token may be sent to, or why not.
    pub fn check(&self, url: &str) -> Result<AllowedApiUrl, ApiUrlError> {
        let parsed = canonical(url).map_err(|shape| ApiUrlError::Malformed {
            url: url.to_owned(),
            shape,
            allowed: self.describe(),
        })?;
        if self.0.allows(&parsed) {
            let trimmed = parsed.as_str().trim_end_matches('/');
            let base = Url::parse(trimmed).unwrap_or(parsed);
            return Ok(AllowedApiUrl(base));
        }
        Err(ApiUrlError::NotAllowed {
            url: url.to_owned(),
            allowed: self.describe(),
        })
    }

    /// The entries as given, for messages and the start-up log.
    pub fn describe(&self) -> String {
        self.0.describe()
    }
}

#[cfg(test)]
#[path = "api_url_tests.rs"]
mod tests;
