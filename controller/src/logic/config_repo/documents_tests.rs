use super::*;

fn governing() -> Source<'static> {
    Source {
        repo: "ledger-config",
        proposer: "configrepo:ledger-config".into(),
        governs: Ok(()),
        demoted: Default::default(),
    }
}

fn proposing() -> Source<'static> {
    Source {
        governs: Err("ConfigRepo ledger-config has authority Propose".into()),
        ..governing()
    }
}

fn file(path: &str, text: &str) -> File {
    File {
        path: path.into(),
        text: text.into(),
    }
}

const TX: &str = "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: bakery\nspec:\n  memo: bread\n";

#[test]
fn reads_every_document_of_every_file_with_its_line_and_this_namespace() {
    let plan = "# plans\n---\napiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationPlan\nmetadata:\n  name: p1\n  namespace: home\nspec: {}\n---\n\n---\napiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: household\nspec: {}\n";
    let docs = parse(
        &[file("a/tx.yaml", TX), file("b/plans.yml", plan)],
        "home",
        &governing(),
    )
    .unwrap();
    let got: Vec<(&str, usize, RepoKind, &str)> = docs
        .iter()
        .map(|d| (d.file.as_str(), d.line, d.kind, d.name.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("a/tx.yaml", 1, RepoKind::Transaction, "bakery"),
            ("b/plans.yml", 3, RepoKind::CategorizationPlan, "p1"),
            ("b/plans.yml", 12, RepoKind::Budget, "household"),
        ]
    );
    assert_eq!(docs[0].body["metadata"]["namespace"], "home");
    assert_eq!(docs[0].digest.len(), 64);
}

#[test]
fn the_digest_follows_the_content() {
    let a = parse(&[file("a.yaml", TX)], "home", &governing()).unwrap();
    let same = parse(
        &[file("other.yaml", &format!("# moved\n{TX}"))],
        "home",
        &governing(),
    )
    .unwrap();
    let changed = parse(
        &[file("a.yaml", &TX.replace("bread", "cake"))],
        "home",
        &governing(),
    )
    .unwrap();
    assert_eq!(a[0].digest, same[0].digest);
    assert_ne!(a[0].digest, changed[0].digest);
}

/// One refused document per row: its text, the line named, and a phrase of the message.
#[test]
fn refuses_with_file_line_and_what_to_do() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
            2,
            "Secret (apiVersion v1) is not a kind a ConfigRepo applies",
        ),
        (
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: r\n",
            2,
            "RoleBinding",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: ApprovalRequest\nmetadata:\n  name: a\n",
            2,
            "ApprovalRequest (apiVersion ledgerops.dev/v1alpha1) is not a kind",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: AgentJob\nmetadata:\n  name: a\n",
            2,
            "AgentJob",
        ),
        (
            "apiVersion: ledgerops.dev/v1beta9\nkind: Budget\nmetadata:\n  name: a\n",
            2,
            "apiVersion ledgerops.dev/v1beta9",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: b\n  namespace: kube-system\n",
            5,
            "names namespace \"kube-system\": a ConfigRepo applies only into its own namespace home",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: b\n  ownerReferences: []\n",
            5,
            "metadata.ownerReferences is not applied",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: b\n  labels:\n    ledgerops.dev/journal: \"true\"\n",
            6,
            "label ledgerops.dev/journal is set only by the ledgerops controller",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: b\nstatus:\n  phase: Ready\n",
            5,
            "top-level field status",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nspec: {}\n",
            1,
            "has no metadata",
        ),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  labels: {}\n",
            3,
            "has no metadata.name",
        ),
        ("# c\n- a\n- b\n", 2, "is not a Kubernetes object"),
        (
            "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: [unclosed\n",
            5,
            "not valid YAML",
        ),
    ];
    for (text, line, phrase) in cases {
        let doc = format!("{TX}---\n{text}");
        let refusals = parse(&[file("dir/x.yaml", &doc)], "home", &governing()).unwrap_err();
        assert_eq!(refusals.len(), 1, "{text}: {refusals:?}");
        let r = &refusals[0];
        // The Transaction takes 6 lines and the marker one more.
        assert_eq!(
            (r.file.as_str(), r.line),
            ("dir/x.yaml", line + 7),
            "{text}: {r}"
        );
        assert!(r.message.contains(phrase), "{text}: {r}");
    }
}

#[test]
fn a_name_declared_twice_names_both_places() {
    let refusals = parse(
        &[file("a.yaml", TX), file("b.yaml", TX)],
        "home",
        &governing(),
    )
    .unwrap_err();
    assert_eq!(
        refusals[0].to_string(),
        "b.yaml:1: Transaction/bakery is declared twice (first at a.yaml:1): keep one"
    );
}

#[test]
fn every_refusal_of_a_revision_is_reported() {
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    let refusals = parse(
        &[file("a.yaml", bad), file("b.yaml", bad), file("c.yaml", TX)],
        "home",
        &governing(),
    )
    .unwrap_err();
    let files: Vec<&str> = refusals.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(files, ["a.yaml", "b.yaml"]);
}

#[test]
fn empty_files_and_comment_only_documents_declare_nothing() {
    let docs = parse(
        &[file("a.yaml", ""), file("b.yaml", "# nothing\n---\n---\n")],
        "home",
        &governing(),
    );
    assert_eq!(docs, Ok(Vec::new()));
}

const RULE: &str = "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationRule\nmetadata:\n  name: rail-co\nspec:\n  budgetRef:\n    name: household\n  match:\n    payeeNormalised: RAIL CO\n  categoryId: transport\n";

#[test]
fn a_merged_rule_is_blessed_by_its_repository_and_never_in_a_persons_name() {
    let docs = parse(&[file("rules.yaml", RULE)], "home", &governing()).unwrap();
    assert_eq!(docs[0].kind, RepoKind::CategorizationRule);
    assert_eq!(
        docs[0].body["spec"]["blessing"],
        serde_json::json!({"by": "configrepo:ledger-config"})
    );
    // The blessing is part of what is compared: the same file blesses the same way.
    let again = parse(&[file("rules.yaml", RULE)], "home", &governing()).unwrap();
    assert_eq!(docs[0].digest, again[0].digest);
    let claimed = format!("{RULE}  blessing:\n    by: alice\n");
    let refusals = parse(&[file("rules.yaml", &claimed)], "home", &governing()).unwrap_err();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].line, 11, "the line of spec.blessing");
    assert!(
        refusals[0].message.contains(
            "merging the rule blesses it (as configrepo:ledger-config); remove spec.blessing"
        ),
        "{}",
        refusals[0].message
    );
}

#[test]
fn a_repository_that_proposes_only_declares_no_budget_and_blesses_no_rule() {
    let docs = parse(&[file("rules.yaml", RULE)], "home", &proposing()).unwrap();
    assert!(
        docs[0].body["spec"].get("blessing").is_none(),
        "a Candidate"
    );
    let budget = "apiVersion: ledgerops.dev/v1alpha1\nkind: Budget\nmetadata:\n  name: household\nspec:\n  planId: last-used\n  tokenSecretRef:\n    name: t\n";
    let refusals = parse(&[file("budget.yaml", budget)], "home", &proposing()).unwrap_err();
    assert_eq!(refusals.len(), 1);
    assert!(
        refusals[0]
            .message
            .contains("Budget household is not applied")
            && refusals[0].message.contains("authority Propose"),
        "{}",
        refusals[0].message
    );
    assert!(parse(&[file("budget.yaml", budget)], "home", &governing()).is_ok());
}

#[test]
fn every_object_names_the_repository_as_its_proposer() {
    let written = TX.replace(
        "metadata:",
        "metadata:\n  annotations:\n    ledgerops.dev/proposed-by: mallory",
    );
    let docs = parse(&[file("a.yaml", &written)], "home", &governing()).unwrap();
    assert_eq!(
        docs[0].body["metadata"]["annotations"][PROPOSED_BY],
        "configrepo:ledger-config"
    );
}

#[test]
fn a_demoted_rule_is_not_blessed_by_the_merge_until_it_changes() {
    let docs = parse(&[file("rules.yaml", RULE)], "home", &governing()).unwrap();
    let key = docs[0].rule_key.clone().expect("a rule has a content key");
    let demoted = Source {
        demoted: [key.clone()].into(),
        ..governing()
    };
    let again = parse(&[file("renamed.yaml", &RULE.replace("rail-co", "rail-co-2"))], "home", &demoted).unwrap();
    assert!(again[0].body["spec"].get("blessing").is_none(), "same content, any name");
    assert_eq!(again[0].rule_key.as_deref(), Some(key.as_str()));
    let changed = RULE.replace("transport", "travel");
    let merged = parse(&[file("rules.yaml", &changed)], "home", &demoted).unwrap();
    assert_eq!(
        merged[0].body["spec"]["blessing"],
        serde_json::json!({"by": "configrepo:ledger-config"})
    );
    assert_ne!(merged[0].rule_key.as_deref(), Some(key.as_str()));
}
