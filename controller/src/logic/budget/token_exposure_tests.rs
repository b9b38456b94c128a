use k8s_openapi::jiff::Timestamp;

use super::*;

fn sa(namespace: &str, name: &str) -> Subject {
    Subject::ServiceAccount {
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn user(name: &str) -> Subject {
    Subject::User(name.into())
}

const PLACE: Place<'static> = Place {
    secret: "ynab",
    secret_namespace: "household",
    budget_namespace: "household",
};

fn answer(subject: Subject, reads: bool, governs: bool) -> Answer {
    Answer {
        subject,
        reads,
        governs,
    }
}

#[test]
fn a_binding_subject_is_read_as_rbac_reads_it() {
    let cases = [
        (("User", "alice", None, Some("ns")), Some(user("alice"))),
        (
            ("Group", "devs", None, None),
            Some(Subject::Group("devs".into())),
        ),
        // A ServiceAccount without a namespace is one of the RoleBinding's.
        (
            ("ServiceAccount", "bot", None, Some("ns")),
            Some(sa("ns", "bot")),
        ),
        (
            ("ServiceAccount", "bot", Some("other"), Some("ns")),
            Some(sa("other", "bot")),
        ),
        (("ServiceAccount", "bot", None, None), None),
        (("Robot", "r2", None, Some("ns")), None),
    ];
    for ((kind, name, ns, binding_ns), want) in cases {
        assert_eq!(
            Subject::of_binding(kind, name, ns, binding_ns),
            want,
            "{kind} {name}"
        );
    }
}

#[test]
fn each_subject_is_asked_about_as_the_api_server_would_authenticate_it() {
    assert_eq!(
        sa("household", "automation").identity(),
        (
            Some("system:serviceaccount:household:automation".into()),
            vec![
                "system:serviceaccounts".into(),
                "system:serviceaccounts:household".into(),
                "system:authenticated".into()
            ]
        )
    );
    assert_eq!(
        user("alice").identity(),
        (Some("alice".into()), vec!["system:authenticated".into()])
    );
    assert_eq!(
        Subject::Group("system:masters".into()).identity(),
        (None, vec!["system:masters".into()])
    );
}

#[test]
fn the_controller_and_the_clusters_own_components_are_not_asked_about() {
    let controller = "system:serviceaccount:ledgerops-system:ledgerops";
    let found = vec![
        sa("ledgerops-system", "ledgerops"),
        user(controller),
        sa("kube-system", "namespace-controller"),
        user("system:serviceaccount:kube-system:generic-garbage-collector"),
        user("system:kube-controller-manager"),
        // Asked about: superusers are reported as what they are (they govern).
        Subject::Group("system:masters".into()),
        // Groups are never skipped: a grant to every authenticated user is the worst case.
        Subject::Group("system:authenticated".into()),
        user("alice"),
        sa("household", "automation"),
        user("alice"),
        sa("household", "automation"),
    ];
    assert_eq!(
        to_ask(found, controller),
        vec![
            user("alice"),
            Subject::Group("system:authenticated".into()),
            Subject::Group("system:masters".into()),
            sa("household", "automation"),
        ]
    );
}

/// Answers, and the condition's status, reason, words said and words not said.
type Case<'a> = (&'a [Answer], Status, &'a str, &'a [&'a str], &'a [&'a str]);

#[test]
fn a_reader_who_does_not_govern_is_named() {
    let cases: &[Case<'_>] = &[
        (&[], Status::True, "OnlyOwnersRead", &["0 subject(s)"], &[]),
        (
            &[
                answer(Subject::Group("system:masters".into()), true, true),
                answer(user("alice"), true, true),
                answer(user("bob"), false, false),
                answer(user("carol"), false, true),
            ],
            Status::True,
            "OnlyOwnersRead",
            &["2 subject(s)", "cluster administrators"],
            &["bob", "carol"],
        ),
        (
            &[
                answer(user("alice"), true, true),
                answer(sa("household", "automation"), true, false),
                answer(user("bob"), false, false),
            ],
            Status::False,
            READABLE_BY_OTHERS,
            &[
                "Secret ynab in namespace household",
                "may be read by 1 who do not govern Budgets in namespace household: ServiceAccount household/automation;",
                "ledgerops-tokens",
                "ledgerops.dev/allowed-namespaces=household",
                "spec.tokenSecretRef.namespace",
            ],
            &["alice", "bob"],
        ),
    ];
    for (answers, status, reason, said, unsaid) in cases {
        let observed = verdict(&PLACE, answers);
        assert_eq!(observed.type_, TOKEN_PROTECTED);
        assert_eq!(observed.status, *status, "{}", observed.message);
        assert_eq!(observed.reason, *reason);
        for needle in *said {
            assert!(
                observed.message.contains(needle),
                "{needle}: {}",
                observed.message
            );
        }
        for needle in *unsaid {
            assert!(
                !observed.message.contains(needle),
                "{needle}: {}",
                observed.message
            );
        }
    }
}

#[test]
fn at_most_five_are_named_and_the_rest_counted() {
    let answers: Vec<Answer> = (0..8)
        .map(|i| answer(user(&format!("user{i}")), true, false))
        .collect();
    let observed = verdict(&PLACE, &answers);
    assert!(
        observed.message.contains("may be read by 8 who"),
        "{}",
        observed.message
    );
    assert!(
        observed.message.contains("User user4, and 3 more"),
        "{}",
        observed.message
    );
    assert!(!observed.message.contains("user5"), "{}", observed.message);
}

#[test]
fn a_token_elsewhere_names_the_access_to_take_away() {
    let place = Place {
        secret: "ynab",
        secret_namespace: "shared-tokens",
        budget_namespace: "household",
    };
    let observed = verdict(&place, &[answer(user("bob"), true, false)]);
    assert!(
        observed
            .message
            .contains("Take their access to Secrets in shared-tokens away"),
        "{}",
        observed.message
    );
}

#[test]
fn a_failed_check_says_unknown_and_what_to_grant() {
    let observed = unknown(&PLACE, "403 Forbidden");
    assert_eq!(observed.status, Status::Unknown);
    for needle in ["ynab", "household", "403 Forbidden", "rolebindings"] {
        assert!(observed.message.contains(needle), "{}", observed.message);
    }
}

#[test]
fn a_warning_is_published_once_per_new_finding() {
    let now = Timestamp::UNIX_EPOCH;
    let readable = verdict(&PLACE, &[answer(user("bob"), true, false)]);
    let clean = verdict(&PLACE, &[]);
    let with = |o: &Observed| conditions::set(&[], o.clone(), None, now);
    let cases = [
        (vec![], &readable, true),
        (with(&clean), &readable, true),
        (with(&readable), &readable, false),
        (
            with(&readable),
            &verdict(&PLACE, &[answer(user("eve"), true, false)]),
            true,
        ),
        (vec![], &clean, false),
        (with(&readable), &clean, false),
    ];
    for (previous, next, warned) in cases {
        let a = announcement(&previous, next);
        assert_eq!(a.is_some(), warned, "{previous:?} -> {next:?}");
        if let Some(a) = a {
            assert!(a.warning);
            assert_eq!(a.reason, READABLE_BY_OTHERS);
            assert_eq!(a.note, next.message);
        }
    }
}
