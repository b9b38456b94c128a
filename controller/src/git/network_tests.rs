//! The network side against a local server and a repository on disk: credentials offered only
//! where they serve, no off-site redirect, public hosts only when asked.

use super::*;
use crate::git::tests::{commit, request, scratch, url};
use crate::git::{Limits, fetch};

#[test]
fn credentials_never_show_in_debug_output() {
    let c = Credentials {
        username: "household".into(),
        password: "s3cret-token".into(),
        serves: std::sync::Arc::new(|_| true),
    };
    assert!(!format!("{c:?}").contains("s3cret"));
}

#[test]
fn credentials_are_offered_once_and_only_to_the_urls_they_serve() {
    let c = Credentials {
        username: "household".into(),
        password: "s3cret-token".into(),
        serves: std::sync::Arc::new(|url| url.starts_with("https://git.example/")),
    };
    let plain = git2::CredentialType::USER_PASS_PLAINTEXT;
    let refused = Cell::new(0);
    assert!(offer(Some(&c), &refused, "https://evil.example/c.git", plain).is_err());
    let served = Cell::new(0);
    assert!(offer(Some(&c), &served, "https://git.example/h/c.git", plain).is_ok());
    assert!(
        offer(Some(&c), &served, "https://git.example/h/c.git", plain).is_err(),
        "offered once"
    );
    let ssh = git2::CredentialType::SSH_KEY;
    assert!(offer(Some(&c), &Cell::new(0), "https://git.example/c", ssh).is_err());
    assert!(offer(None, &Cell::new(0), "https://git.example/c", plain).is_err());
}

/// A server that answers the first request with a redirect to another host, and whether that
/// host was ever asked.
#[test]
fn a_redirect_to_another_host_is_not_followed() {
    use std::io::{Read, Write};
    let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let (port, other_port) = (
        first.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    std::thread::spawn(move || {
        let (mut stream, _) = first.accept().unwrap();
        let mut request = Vec::new();
        let mut buf = [0; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let answer = format!(
            "HTTP/1.1 302 Found\r\nLocation: http://localhost:{other_port}/c.git/info/refs?service=git-upload-pack\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let _ = stream.write_all(answer.as_bytes());
    });
    let base = scratch("redirect");
    let (cache, limits) = (base.join("cache"), Limits::default());
    let url = format!("http://127.0.0.1:{port}/c.git");
    let e = fetch(&request(&cache, &url, &limits)).unwrap_err();
    assert_eq!(e.reason(), "Unreachable", "{e}");
    assert!(e.to_string().contains("cannot redirect"), "{e}");
    assert!(other.accept().is_err(), "the other host was asked");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_config_repo_that_may_reach_public_hosts_only_is_refused_any_other() {
    let base = scratch("public-only");
    let (cache, limits) = (base.join("cache"), Limits::default());
    let cases = [
        ("http://127.0.0.1:9/h/c.git", "127.0.0.1", "127.0.0.1"),
        ("http://localhost:9/h/c.git", "localhost", ""),
        ("https://[::1]/h/c.git", "::1", "::1"),
        (
            "http://[::ffff:127.0.0.2]:9/c.git",
            "::ffff:127.0.0.2",
            "::ffff:127.0.0.2",
        ),
    ];
    for (url, host, address) in cases {
        let e = fetch(&FetchRequest {
            public_only: true,
            ..request(&cache, url, &limits)
        })
        .unwrap_err();
        assert_eq!(e.reason(), "UrlNotAllowed", "{url}: {e}");
        let message = e.to_string();
        assert!(
            message.contains(&format!("host {host} resolves to {address}")),
            "{message}"
        );
        assert!(
            message.ends_with(
                "use a public host (an operator can allow this one with --config-repo-url-allow)"
            ),
            "{message}"
        );
    }
    // A repository on disk has no host: --config-repo-file-root governs it.
    let origin = base.join("origin");
    commit(&origin, "main", &[("a.yaml", "a: 1\n")], false);
    let local = url(&origin);
    fetch(&FetchRequest {
        public_only: true,
        ..request(&cache, &local, &limits)
    })
    .unwrap();
    let _ = std::fs::remove_dir_all(&base);
}
