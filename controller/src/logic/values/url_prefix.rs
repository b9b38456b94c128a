//! URL prefixes an operator or a Secret names: `scheme://host[:port]/path-prefix` in canonical
//! form, with `*` as the port meaning any port (for a local server on a random port:
//! `http://127.0.0.1:*/v1`). A URL is within an entry when it has exactly the entry's scheme,
//! host and port (any port for `*`; the scheme's default when none is given) and a path equal to
//! the entry's path or below it on a segment boundary (`/v1` allows `/v1` and `/v1/x`, never
//! `/v10`).

use url::Url;

/// What is wrong with the shape of a URL, whatever list it is checked against.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Shape {
    #[error("not a URL: {0}")]
    Unparsable(String),
    #[error("scheme {0:?}: only http and https are allowed")]
    Scheme(String),
    #[error("it carries a user name or password: remove everything before the @")]
    UserInfo,
    #[error("it has a query or fragment: a base URL ends with its path")]
    QueryOrFragment,
    #[error("it is not in canonical form: write it as {0:?}")]
    NotCanonical(String),
    #[error("`*` stands only for the port")]
    Wildcard,
}

/// Which ports an entry allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    Exactly(u16),
    Any,
}

/// One allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    scheme: String,
    host: String,
    port: Port,
    /// Without a trailing slash: `""` allows every path.
    path: String,
    /// As the operator wrote it, for messages.
    text: String,
}

impl Entry {
    fn parse(text: &str) -> Result<Entry, (String, Shape)> {
        let bad = |shape| (text.to_owned(), shape);
        let (without_star, any_port) = strip_any_port(text);
        let url = canonical(&without_star).map_err(bad)?;
        if url.host_str().unwrap_or_default().contains('*') {
            return Err(bad(Shape::Wildcard));
        }
        let port = match (any_port, url.port_or_known_default()) {
            (true, _) => Port::Any,
            (false, Some(p)) => Port::Exactly(p),
            (false, None) => unreachable!("http and https have default ports"),
        };
        Ok(Entry {
            scheme: url.scheme().to_owned(),
            host: url.host_str().unwrap_or_default().to_owned(),
            port,
            path: url.path().trim_end_matches('/').to_owned(),
            text: text.to_owned(),
        })
    }

    fn allows(&self, url: &Url) -> bool {
        let port_ok = match self.port {
            Port::Any => true,
            Port::Exactly(p) => url.port_or_known_default() == Some(p),
        };
        let path = url.path().trim_end_matches('/');
        let path_ok = path == self.path
            || path
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        url.scheme() == self.scheme
            && url.host_str() == Some(self.host.as_str())
            && port_ok
            && path_ok
    }
}

/// `http://127.0.0.1:*/v1` → (`http://127.0.0.1/v1`, true): `*` as the port means any port.
fn strip_any_port(text: &str) -> (String, bool) {
    let Some((scheme, rest)) = text.split_once("://") else {
        return (text.to_owned(), false);
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].strip_suffix(":*") {
        Some(host) => (format!("{scheme}://{host}{}", &rest[end..]), true),
        None => (text.to_owned(), false),
    }
}

/// Parses `text` and insists that it is already what the HTTP client would send.
pub fn canonical(text: &str) -> Result<Url, Shape> {
    let url = Url::parse(text).map_err(|e| Shape::Unparsable(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Shape::Scheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Shape::UserInfo);
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Shape::QueryOrFragment);
    }
    let written = text.trim_end_matches('/');
    let normal = url.as_str().trim_end_matches('/');
    if written != normal || text.len() > written.len() + 1 {
        return Err(Shape::NotCanonical(normal.to_owned()));
    }
    Ok(url)
}

/// A list of prefixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefixes(Vec<Entry>);

impl Prefixes {
    /// The prefixes of `entries`, or the first entry refused and why; an empty list allows
    /// nothing.
    pub fn parse<S: AsRef<str>>(
        entries: impl IntoIterator<Item = S>,
    ) -> Result<Prefixes, (String, Shape)> {
        entries
            .into_iter()
            .map(|e| Entry::parse(e.as_ref()))
            .collect::<Result<_, _>>()
            .map(Prefixes)
    }

    /// Whether `url` is within one of the prefixes.
    pub fn allows(&self, url: &Url) -> bool {
        self.0.iter().any(|e| e.allows(url))
    }

    /// The entries as given, for messages.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "nothing".to_owned();
        }
        self.0
            .iter()
            .map(|e| e.text.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
