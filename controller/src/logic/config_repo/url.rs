//! Which repository URLs a ConfigRepo may fetch, and where its credentials may go.
//!
//! A remote is fetched when it is on the operator's list (`--config-repo-url-allow`, URL
//! prefixes as for `--ynab-api-url-allow`), or when it is `https://` and its host resolves only
//! to public addresses (the adapter checks those before connecting): no cluster Service, no
//! loopback, no cloud metadata endpoint unless the operator says so. `file://` only under the
//! directory the operator named (`--config-repo-file-root`); never credentials in the URL.
//! A Secret serves only the URL prefixes its annotation names.

use std::path::PathBuf;

use url::Url;

use crate::logic::values::url_prefix::{Prefixes, Shape, canonical};

/// The flag that lists the Git URLs allowed besides public `https://` hosts.
pub const FLAG: &str = "--config-repo-url-allow";
/// The annotation of a Git credentials Secret naming the URL prefixes it serves.
pub const SERVES: &str = "ledgerops.dev/git-url-prefixes";

/// Where to fetch from, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An `http://` or `https://` remote; `public_only`: fetched only if its host resolves to
    /// public addresses alone (it is not on the operator's list).
    Remote { url: String, public_only: bool },
    /// A repository on the controller's disk.
    Local(PathBuf),
}

/// Why a URL is not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("spec.url {0} is not a URL: write it as https://host/owner/repo.git")]
    Malformed(String),
    #[error("spec.url {url} is not in canonical form: write it as {canonical}")]
    NotCanonical { url: String, canonical: String },
    #[error(
        "spec.url carries credentials: remove them from the URL and put them in a Secret named by spec.secretRef"
    )]
    UserInfo,
    #[error(
        "spec.url {0}: ssh remotes are not supported; use the repository's https:// URL with a token in spec.secretRef"
    )]
    Ssh(String),
    #[error(
        "spec.url {url}: http:// sends everything in the clear and is fetched only from servers the operator allows ({allowed}); use the repository's https:// URL, or have the operator add it with `ledgerops run {FLAG} <URL prefix>`"
    )]
    PlainHttp { url: String, allowed: String },
    #[error(
        "spec.url {url}: file:// repositories are not enabled on this controller; use the repository's https:// URL (an operator can allow a directory with --config-repo-file-root)"
    )]
    FileNotEnabled { url: String },
    #[error(
        "spec.url {url}: file:// repositories must be under {root} (--config-repo-file-root); move the repository there or use its https:// URL"
    )]
    FileOutsideRoot { url: String, root: String },
}

impl UrlError {
    /// The `Ready` reason.
    pub fn reason(&self) -> &'static str {
        "UrlNotAllowed"
    }
}

/// Why a Secret's credentials are not sent to a URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error(
        "it does not say which servers it is for: annotate it with {SERVES}=<URL prefix>, e.g. https://git.example/household/"
    )]
    Unscoped,
    #[error("its annotation {SERVES} has an entry {entry:?} that is refused ({shape})")]
    BadEntry { entry: String, shape: Shape },
    #[error(
        "it serves {serves} ({SERVES}), not {url}: add the repository's URL prefix to the annotation if this Secret is meant for it"
    )]
    Elsewhere { url: String, serves: String },
}

/// The operator's rules for Git URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPolicy {
    allowed: Prefixes,
    file_root: Option<PathBuf>,
}

impl UrlPolicy {
    /// The policy of the operator's `allowed` prefixes (beyond public https hosts) and file root.
    pub fn new(allowed: Prefixes, file_root: Option<PathBuf>) -> UrlPolicy {
        UrlPolicy { allowed, file_root }
    }

    /// Checks `url`.
    pub fn check(&self, url: &str) -> Result<Source, UrlError> {
        let parsed = Url::parse(url).map_err(|_| UrlError::Malformed(url.to_owned()))?;
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(UrlError::UserInfo);
        }
        match parsed.scheme() {
            "http" | "https" if parsed.host().is_some() => self.remote(url),
            "ssh" => Err(UrlError::Ssh(url.to_owned())),
            "file" => self.local(url, &parsed),
            _ => Err(UrlError::Malformed(url.to_owned())),
        }
    }

    fn remote(&self, url: &str) -> Result<Source, UrlError> {
        // What libgit2 sends must be what was checked: no spelling two parsers could read apart.
        let parsed = canonical(url).map_err(|shape| match shape {
            Shape::NotCanonical(canonical) => UrlError::NotCanonical {
                url: url.to_owned(),
                canonical,
            },
            _ => UrlError::Malformed(url.to_owned()),
        })?;
        let public_only = !self.allowed.allows(&parsed);
        if public_only && parsed.scheme() != "https" {
            return Err(UrlError::PlainHttp {
                url: url.to_owned(),
                allowed: self.allowed.describe(),
            });
        }
        Ok(Source::Remote {
            url: url.to_owned(),
            public_only,
        })
    }

    fn local(&self, url: &str, parsed: &Url) -> Result<Source, UrlError> {
        let Some(root) = self.file_root.as_deref() else {
            return Err(UrlError::FileNotEnabled {
                url: url.to_owned(),
            });
        };
        // The parser has already resolved `.` and `..`: this path is where git would look.
        let path = parsed
            .to_file_path()
            .map_err(|()| UrlError::Malformed(url.to_owned()))?;
        if path.starts_with(root) && path != root {
            Ok(Source::Local(path))
        } else {
            Err(UrlError::FileOutsideRoot {
                url: url.to_owned(),
                root: root.display().to_string(),
            })
        }
    }
}

/// The URL prefixes a Secret serves, from its [`SERVES`] annotation (entries separated by
/// commas or white space), checked to include `url`.
pub fn scope(annotation: Option<&str>, url: &str) -> Result<Prefixes, ScopeError> {
    let entries: Vec<&str> = annotation
        .unwrap_or_default()
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|e| !e.is_empty())
        .collect();
    if entries.is_empty() {
        return Err(ScopeError::Unscoped);
    }
    let serves =
        Prefixes::parse(entries).map_err(|(entry, shape)| ScopeError::BadEntry { entry, shape })?;
    let within = Url::parse(url).is_ok_and(|u| serves.allows(&u));
    if !within {
        return Err(ScopeError::Elsewhere {
            url: url.to_owned(),
            serves: serves.describe(),
        });
    }
    Ok(serves)
}

#[cfg(test)]
#[path = "url_tests.rs"]
mod tests;
