use super::*;

#[test]
fn only_a_secret_that_names_the_namespace_is_granted() {
    let cases: &[(&str, &str, Option<&str>, bool)] = &[
        // The object's own namespace needs no grant (as before namespaces could be named).
        ("household", "household", None, true),
        ("household", "household", Some("other"), true),
        ("tokens", "household", None, false),
        ("tokens", "household", Some(""), false),
        ("tokens", "household", Some("household"), true),
        ("tokens", "household", Some("other, household"), true),
        ("tokens", "household", Some("other,household ,"), true),
        // Exact names only: no prefix, no case folding, no wildcard.
        ("tokens", "household", Some("house"), false),
        ("tokens", "household", Some("households"), false),
        ("tokens", "household", Some("Household"), false),
        ("tokens", "household", Some("*"), false),
        ("tokens", "household", Some("household*"), false),
    ];
    for (secret, user, annotation, granted) in cases {
        assert_eq!(
            check(secret, user, *annotation).is_ok(),
            *granted,
            "{secret} {user} {annotation:?}"
        );
    }
}

#[test]
fn a_wildcard_is_told_apart_and_dropped_from_the_fix() {
    let why = check("tokens", "household", Some("*,other")).unwrap_err();
    assert_eq!(
        why,
        NotGranted::Wildcard {
            listed: vec!["*".into(), "other".into()]
        }
    );
    assert_eq!(why.fixed_value("household"), "other,household");
    let text = message("ynab", "tokens", "household", &why);
    assert!(text.contains("not honoured"), "{text}");
}

#[test]
fn the_message_names_the_secret_both_namespaces_and_the_command() {
    let cases = [
        (
            None,
            "has no annotation ledgerops.dev/allowed-namespaces",
            "household",
        ),
        (Some("other"), "names only other", "other,household"),
    ];
    for (annotation, found, value) in cases {
        let why = check("ledgerops-tokens", "household", annotation).unwrap_err();
        let text = message("ynab", "ledgerops-tokens", "household", &why);
        for needle in [
            "Secret ynab in namespace ledgerops-tokens",
            found,
            "not used for namespace household",
            "nothing was sent",
            &format!(
                "`kubectl annotate secret ynab -n ledgerops-tokens --overwrite ledgerops.dev/allowed-namespaces={value}`"
            ),
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }
}
