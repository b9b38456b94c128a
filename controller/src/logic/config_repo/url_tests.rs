//! Unit tests of `logic/config_repo/url.rs`.

use super::*;

fn policy(allowed: &[&str], root: Option<&str>) -> UrlPolicy {
    UrlPolicy::new(Prefixes::parse(allowed).unwrap(), root.map(PathBuf::from))
}

fn remote(url: &str, public_only: bool) -> Result<Source, &'static str> {
    Ok(Source::Remote {
        url: url.into(),
        public_only,
    })
}

#[test]
fn table() {
    let default = policy(&[], None);
    let local = policy(&["http://127.0.0.1:*/"], Some("/srv/repos"));
    let cases: &[(&UrlPolicy, &str, Result<Source, &str>)] = &[
        (
            &default,
            "https://git.example/h/c.git",
            remote("https://git.example/h/c.git", true),
        ),
        // Any https host, checked for public addresses when fetched.
        (
            &default,
            "https://10.0.0.7/h/c.git",
            remote("https://10.0.0.7/h/c.git", true),
        ),
        (&default, "http://git.example/h/c.git", Err("PlainHttp")),
        (&default, "http://169.254.169.254/latest", Err("PlainHttp")),
        (&default, "http://127.0.0.1:3000/h/c.git", Err("PlainHttp")),
        (
            &local,
            "http://127.0.0.1:3000/h/c.git",
            remote("http://127.0.0.1:3000/h/c.git", false),
        ),
        (&local, "http://127.0.0.2:3000/h/c.git", Err("PlainHttp")),
        (
            &local,
            "https://git.example/c.git",
            remote("https://git.example/c.git", true),
        ),
        (&default, "https://GIT.example/c.git", Err("NotCanonical")),
        (
            &default,
            "https://git.example:443/c.git",
            Err("NotCanonical"),
        ),
        (
            &default,
            "https://git.example/a/../c.git",
            Err("NotCanonical"),
        ),
        (&default, "https://git.example/c.git?x=1", Err("Malformed")),
        (
            &default,
            "https://me:secret@git.example/c.git",
            Err("UserInfo"),
        ),
        (&default, "https://tok@git.example/c.git", Err("UserInfo")),
        (&default, "ssh://git@git.example/c.git", Err("UserInfo")),
        (&default, "ssh://git.example/c.git", Err("Ssh")),
        (&default, "file:///srv/repos/c", Err("FileNotEnabled")),
        (
            &local,
            "file:///srv/repos/c",
            Ok(Source::Local("/srv/repos/c".into())),
        ),
        (&local, "file:///srv/repos", Err("FileOutsideRoot")),
        (&local, "file:///srv/repos-other/c", Err("FileOutsideRoot")),
        (
            &local,
            "file:///srv/repos/../cache/x",
            Err("FileOutsideRoot"),
        ),
        (&local, "file:///etc", Err("FileOutsideRoot")),
        (&default, "https://", Err("Malformed")),
        (&default, "not a url", Err("Malformed")),
        (&default, "ftp://git.example/c", Err("Malformed")),
    ];
    for (policy, url, want) in cases {
        let got = policy.check(url);
        match (want, &got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{url}"),
            (Err(w), Err(e)) => assert!(format!("{e:?}").starts_with(w), "{url}: {e:?}"),
            _ => panic!("{url}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn messages_say_what_to_do_and_never_repeat_credentials() {
    let e = policy(&[], None)
        .check("https://me:hunter2@git.example/c.git")
        .unwrap_err();
    assert!(!e.to_string().contains("hunter2"));
    assert!(e.to_string().contains("spec.secretRef"));
    let e = policy(&[], None)
        .check("http://10.96.0.1/c.git")
        .unwrap_err();
    assert!(e.to_string().contains(FLAG), "{e}");
}

#[test]
fn a_secret_serves_only_the_prefixes_it_names() {
    let home = "https://git.example/household/";
    let cases: &[(Option<&str>, &str, Result<(), &str>)] = &[
        (
            None,
            "https://git.example/household/config.git",
            Err("Unscoped"),
        ),
        (
            Some(" , "),
            "https://git.example/household/config.git",
            Err("Unscoped"),
        ),
        (
            Some(home),
            "https://git.example/household/config.git",
            Ok(()),
        ),
        (Some(home), "https://git.example/household", Ok(())),
        (
            Some(home),
            "https://git.example/householder/x.git",
            Err("Elsewhere"),
        ),
        (
            Some(home),
            "https://evil.example/household/config.git",
            Err("Elsewhere"),
        ),
        (
            Some(home),
            "http://git.example/household/config.git",
            Err("Elsewhere"),
        ),
        (
            Some(home),
            "https://git.example:8443/household/c.git",
            Err("Elsewhere"),
        ),
        (
            Some("https://a.example/x, http://127.0.0.1:*/h"),
            "http://127.0.0.1:3000/h/c.git",
            Ok(()),
        ),
        (
            Some("https://A.example/"),
            "https://a.example/c.git",
            Err("BadEntry"),
        ),
        (
            Some("git.example"),
            "https://git.example/c.git",
            Err("BadEntry"),
        ),
    ];
    for (annotation, url, want) in cases {
        let got = scope(*annotation, url).map(|_| ());
        match (want, &got) {
            (Ok(()), Ok(())) => {}
            (Err(w), Err(e)) => assert!(format!("{e:?}").starts_with(w), "{url}: {e:?}"),
            _ => panic!("{annotation:?} {url}: got {got:?}, want {want:?}"),
        }
    }
}
