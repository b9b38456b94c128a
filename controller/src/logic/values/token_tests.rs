use super::*;

#[test]
fn never_prints_the_secret() {
    let token = Token::new("s3cr3t-personal-access-token\n");
    assert_eq!(token.expose(), "s3cr3t-personal-access-token");
    for shown in [
        format!("{token:?}"),
        format!("{token}"),
        format!("{:#?}", Some(&token)),
        token.fingerprint(),
    ] {
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
    assert_eq!(
        token.fingerprint(),
        Token::new("s3cr3t-personal-access-token").fingerprint()
    );
    assert_ne!(token.fingerprint(), Token::new("another").fingerprint());
}

#[test]
fn only_printable_ascii_is_a_token() {
    let cases = [
        ("abc123-_.~", true),
        ("  padded\n", true),
        ("", false),
        ("   \n\t", false),
        ("two words", false),
        ("line\nbreak", false),
        ("caf\u{e9}", false),
        ("nul\0", false),
    ];
    for (text, ok) in cases {
        assert_eq!(Token::new(text).is_well_formed(), ok, "{text:?}");
    }
}
