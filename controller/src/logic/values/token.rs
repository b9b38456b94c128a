//! The YNAB access token: it never appears in logs, events, status or errors.

use std::fmt;

/// A YNAB personal access token. `Debug` and `Display` print `<redacted>`; only
/// [`Token::expose`] gives the secret, for the Authorization header.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Token(String);

impl Token {
    /// Wraps a token read from a Secret, trimming the newline `kubectl create secret --from-file`
    /// often leaves.
    pub fn new(secret: impl AsRef<str>) -> Self {
        Self(secret.as_ref().trim().to_owned())
    }

    /// The secret itself. Call it only to build the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether it could be a token at all: printable ASCII without spaces, as YNAB's are. Anything
    /// else would not fit in an Authorization header (or was pasted by mistake).
    pub fn is_well_formed(&self) -> bool {
        !self.0.is_empty() && self.0.bytes().all(|b| b.is_ascii_graphic())
    }

    /// A short, stable, non-reversible label for metrics and logs: 8 hex digits of a hash.
    pub fn fingerprint(&self) -> String {
        // FNV-1a: enough to tell tokens apart in a label, far too short to recover one.
        let hash = self.0.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{:08x}", hash >> 32)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
#[path = "token_tests.rs"]
mod tests;
