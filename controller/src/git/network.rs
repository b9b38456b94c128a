//! What goes over the network: the fetch (no off-site redirect, a bounded download), the
//! credentials (offered once, only where they may go), and which hosts a ConfigRepo may reach.

use std::cell::Cell;
use std::net::{IpAddr, ToSocketAddrs};

use git2::{
    AutotagOption, Cred, CredentialType, FetchOptions, Oid, RemoteCallbacks, RemoteRedirect,
    Repository,
};

use super::{Credentials, FETCHED, FetchRequest, GitError, summary};
use crate::logic::config_repo::address;

/// Fetches the request's branch into `repo` and returns its commit, read from the remote's
/// listing (which stays available after the fetch disconnects).
pub(super) fn fetch_branch(repo: &Repository, request: &FetchRequest<'_>) -> Result<Oid, GitError> {
    let url = request.url;
    let unreachable = |e: git2::Error| classify(&e, url);
    let limit = request.limits.repo_bytes;
    let tries = Cell::new(0);
    let over = Cell::new(false);
    let mut callbacks = RemoteCallbacks::new();
    callbacks.credentials(|url, _user, allowed| offer(request.credentials, &tries, url, allowed));
    // Stops the download as soon as it passes the limit, before it is all on disk.
    callbacks.transfer_progress(|progress| {
        over.set(progress.received_bytes() as u64 > limit);
        !over.get()
    });
    let mut options = FetchOptions::new();
    options
        .remote_callbacks(callbacks)
        // A public host must not be able to send us (and the credentials) to an internal one.
        .follow_redirects(RemoteRedirect::None)
        .download_tags(AutotagOption::None)
        .update_fetchhead(false);
    let wanted = format!("refs/heads/{}", request.branch);
    let refspec = format!("+{wanted}:{FETCHED}");
    let mut remote = repo.remote_anonymous(url).map_err(unreachable)?;
    let fetched = remote.fetch(&[refspec.as_str()], Some(&mut options), None);
    if over.get() {
        return Err(GitError::TooLarge {
            what: format!(
                "fetching branch {} of {url} downloads more than {limit} bytes",
                request.branch
            ),
            limit: format!("{limit} bytes a ConfigRepo, --config-repo-max-bytes"),
            remedy: "follow a repository with a smaller history, or ask the operator to raise --config-repo-max-bytes",
        });
    }
    fetched.map_err(unreachable)?;
    let head = remote
        .list()
        .map_err(unreachable)?
        .iter()
        .find(|h| h.name() == wanted)
        .map(|h| h.oid());
    head.ok_or_else(|| GitError::BranchNotFound {
        url: url.to_owned(),
        branch: request.branch.to_owned(),
    })
}

/// The credentials for `url`, if they serve it, on libgit2's first asking only: it asks again
/// after a refusal, and would loop.
pub(super) fn offer(
    credentials: Option<&Credentials>,
    tries: &Cell<u32>,
    url: &str,
    allowed: CredentialType,
) -> Result<Cred, git2::Error> {
    tries.set(tries.get() + 1);
    match credentials {
        Some(c)
            if tries.get() == 1
                && allowed.contains(CredentialType::USER_PASS_PLAINTEXT)
                && (c.serves)(url) =>
        {
            Cred::userpass_plaintext(&c.username, &c.password)
        }
        _ => Err(git2::Error::from_str("authentication required")),
    }
}

/// Refuses a URL whose host is, or resolves to, any address that is not public. A URL without
/// a host (`file://`) is left to `--config-repo-file-root`. libgit2 resolves the name again when
/// it connects: a name that changes its answer in between is not caught here.
pub(super) fn check_public(url: &str) -> Result<(), GitError> {
    let unreachable = |message: String| GitError::Unreachable {
        url: url.to_owned(),
        message,
    };
    let parsed = url::Url::parse(url).map_err(|e| unreachable(e.to_string()))?;
    let port = parsed.port_or_known_default().unwrap_or(0);
    let (host, addresses): (String, Vec<IpAddr>) = match parsed.host() {
        None => return Ok(()),
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), vec![ip.into()]),
        Some(url::Host::Ipv6(ip)) => (ip.to_string(), vec![ip.into()]),
        Some(url::Host::Domain(name)) => {
            let resolved = (name, port)
                .to_socket_addrs()
                .map_err(|e| unreachable(format!("cannot resolve {name}: {e}")))?;
            (name.to_owned(), resolved.map(|a| a.ip()).collect())
        }
    };
    if addresses.is_empty() {
        return Err(unreachable(format!("{host} resolves to no address")));
    }
    match addresses.into_iter().find(|ip| !address::is_public(*ip)) {
        Some(address) => Err(GitError::NotPublic {
            url: url.to_owned(),
            host,
            address,
        }),
        None => Ok(()),
    }
}

fn classify(e: &git2::Error, url: &str) -> GitError {
    if e.class() == git2::ErrorClass::Http && e.code() == git2::ErrorCode::Auth
        || e.message().contains("authentication required")
        || e.message().contains("status code: 401")
    {
        return GitError::Auth {
            url: url.to_owned(),
        };
    }
    GitError::Unreachable {
        url: url.to_owned(),
        message: summary(e),
    }
}

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;
