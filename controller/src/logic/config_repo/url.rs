//! Which repository URLs a ConfigRepo may fetch: HTTP(S) anywhere, `file://` only under the
//! directory the operator named (`--config-repo-file-root`), never credentials in the URL.

use std::path::{Path, PathBuf};

/// Where to fetch from, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An `http://` or `https://` remote.
    Remote(String),
    /// A repository on the controller's disk.
    Local(PathBuf),
}

/// Why a URL is not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("spec.url {0} is not a URL: write it as https://host/owner/repo.git")]
    Malformed(String),
    #[error(
        "spec.url carries credentials: remove them from the URL and put them in a Secret named by spec.secretRef"
    )]
    UserInfo,
    #[error(
        "spec.url {0}: ssh remotes are not supported; use the repository's https:// URL with a token in spec.secretRef"
    )]
    Ssh(String),
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

/// Checks `url` against the allowed `file_root` (none: `file://` is refused).
pub fn check(url: &str, file_root: Option<&Path>) -> Result<Source, UrlError> {
    let parsed = url::Url::parse(url).map_err(|_| UrlError::Malformed(url.to_owned()))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UrlError::UserInfo);
    }
    match parsed.scheme() {
        "http" | "https" if parsed.host().is_some() => Ok(Source::Remote(url.to_owned())),
        "ssh" => Err(UrlError::Ssh(url.to_owned())),
        "file" => {
            let Some(root) = file_root else {
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
        _ => Err(UrlError::Malformed(url.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let root = Path::new("/srv/repos");
        let cases: &[(&str, Option<&Path>, Result<Source, &str>)] = &[
            (
                "https://git.example/h/c.git",
                None,
                Ok(Source::Remote("https://git.example/h/c.git".into())),
            ),
            (
                "http://127.0.0.1:3000/h/c.git",
                Some(root),
                Ok(Source::Remote("http://127.0.0.1:3000/h/c.git".into())),
            ),
            ("https://me:secret@git.example/c.git", None, Err("UserInfo")),
            ("https://tok@git.example/c.git", None, Err("UserInfo")),
            ("ssh://git@git.example/c.git", None, Err("UserInfo")),
            ("ssh://git.example/c.git", None, Err("Ssh")),
            ("file:///srv/repos/c", None, Err("FileNotEnabled")),
            (
                "file:///srv/repos/c",
                Some(root),
                Ok(Source::Local("/srv/repos/c".into())),
            ),
            ("file:///srv/repos", Some(root), Err("FileOutsideRoot")),
            (
                "file:///srv/repos-other/c",
                Some(root),
                Err("FileOutsideRoot"),
            ),
            (
                "file:///srv/repos/../cache/x",
                Some(root),
                Err("FileOutsideRoot"),
            ),
            ("file:///etc", Some(root), Err("FileOutsideRoot")),
            ("https://", None, Err("Malformed")),
            ("not a url", None, Err("Malformed")),
            ("ftp://git.example/c", None, Err("Malformed")),
        ];
        for (url, root, want) in cases {
            let got = check(url, *root);
            match (want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(w, g, "{url}"),
                (Err(w), Err(e)) => assert!(format!("{e:?}").starts_with(w), "{url}: {e:?}"),
                _ => panic!("{url}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn messages_say_what_to_do_and_never_repeat_credentials() {
        let e = check("https://me:hunter2@git.example/c.git", None).unwrap_err();
        assert!(!e.to_string().contains("hunter2"));
        assert!(e.to_string().contains("spec.secretRef"));
    }
}
