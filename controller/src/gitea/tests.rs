use super::*;

#[test]
fn repository_names_are_checked_before_use_in_a_path() {
    assert_eq!(
        split_repo("household/ledger-config").unwrap(),
        ("household", "ledger-config")
    );
    for bad in ["household", "a/b/c", "../x", "a/..", "a/b?x", "/b", "a/"] {
        assert!(split_repo(bad).is_err(), "{bad}");
    }
}

#[test]
fn only_hopeless_errors_are_definite() {
    let status = |code: u16| GiteaError::Status {
        call: "GET /x".into(),
        status: StatusCode::from_u16(code).unwrap(),
    };
    let cases = [
        (GiteaError::BadRepository("x".into()), Failure::Definite),
        (status(400), Failure::Definite),
        (status(422), Failure::Definite),
        (status(401), Failure::Transient),
        (status(403), Failure::Transient),
        (status(429), Failure::Transient),
        (status(500), Failure::Transient),
        (status(503), Failure::Transient),
        (
            GiteaError::Decode {
                call: "GET /x".into(),
                detail: "eof".into(),
            },
            Failure::Transient,
        ),
    ];
    for (e, want) in cases {
        assert_eq!(e.failure(), want, "{e}");
    }
}

#[test]
fn the_token_is_never_printed() {
    let t = GiteaToken::new("secret-token\n");
    assert!(!format!("{t:?}").contains("secret"));
    let c = GiteaClient::new("http://127.0.0.1:1/", t).unwrap();
    assert!(!format!("{c:?}").contains("secret-token"));
}
