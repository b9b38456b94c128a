//! Unit tests of `logic/config_repo/documents.rs`.

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
            4,
            "not valid YAML: unclosed bracket '['",
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

/// Someone who changed an object the repository made stays in its lineage when the repository
/// applies it again; the document's digest (its content) does not change for that.
#[test]
fn an_apply_keeps_everyone_the_live_object_names() {
    use super::super::fixtures;
    let mut docs = parse(&[file("a.yaml", TX)], "home", &governing()).unwrap();
    let digest = docs[0].digest.clone();
    let mut changed = fixtures::live(RepoKind::Transaction, "bakery", 2);
    changed.made = Some((
        "configrepo:ledger-config,carol".into(),
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    ));
    let other = fixtures::live(RepoKind::Transaction, "other", 1);
    keep_lineages(&mut docs, &[other, changed]);
    assert_eq!(
        docs[0].body["metadata"]["annotations"][PROPOSED_BY],
        "configrepo:ledger-config,carol"
    );
    assert_eq!(docs[0].digest, digest);
    let mut fresh = parse(&[file("a.yaml", TX)], "home", &governing()).unwrap();
    keep_lineages(&mut fresh, &[]);
    assert_eq!(
        fresh[0].body["metadata"]["annotations"][PROPOSED_BY],
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
    let again = parse(
        &[file("renamed.yaml", &RULE.replace("rail-co", "rail-co-2"))],
        "home",
        &demoted,
    )
    .unwrap();
    assert!(
        again[0].body["spec"].get("blessing").is_none(),
        "same content, any name"
    );
    assert_eq!(again[0].rule_key.as_deref(), Some(key.as_str()));
    let changed = RULE.replace("transport", "travel");
    let merged = parse(&[file("rules.yaml", &changed)], "home", &demoted).unwrap();
    assert_eq!(
        merged[0].body["spec"]["blessing"],
        serde_json::json!({"by": "configrepo:ledger-config"})
    );
    assert_ne!(merged[0].rule_key.as_deref(), Some(key.as_str()));
}

/// A 700 KB scalar aliased 60,000 times expands to 42 GB: it is refused at the alias where the
/// revision's text passes its limit, having expanded no more than the limit.
#[test]
fn an_alias_bomb_is_refused_at_the_alias_that_passes_the_limit() {
    let mut bomb = format!(
        "{TX}---\napiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: bomb\nspec:\n  memo: &big {}\n  lines:\n",
        "x".repeat(700_000)
    );
    for _ in 0..60_000 {
        bomb.push_str("  - *big\n");
    }
    let started = std::time::Instant::now();
    let refusals = parse(&[file("bomb.yaml", &bomb)], "home", &governing()).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    // The aliases start on line 15; the anchor and 23 copies pass 16 MiB.
    assert_eq!(
        refusals[0].to_string(),
        format!(
            "bomb.yaml:37: the revision's YAML holds more than 16 MiB of text here, aliases expanded (at most {} bytes a revision): repeat less through aliases, or split the repository",
            16 << 20
        )
    );
}

/// Each limit of what a revision's YAML may hold: the files, the file and line named, and a
/// phrase of the message.
#[test]
fn every_limit_on_the_yaml_of_a_revision_names_where_it_was_passed() {
    let nested: String = (0..40)
        .map(|depth| format!("{}a:\n", "  ".repeat(depth)))
        .collect();
    let aliases = format!("a: &a x\nb:\n{}", "  - *a\n".repeat(1_001));
    let ratio = format!("a: &a x\nb:\n{}", "  - *a\n".repeat(100));
    let list = |n: usize| format!("{TX}  l: [{}]\n", "a,".repeat(n));
    let cases: Vec<(Vec<File>, (&str, usize), &str)> = vec![
        (
            vec![file("deep.yaml", &nested)],
            ("deep.yaml", 33),
            "nests deeper than 32 levels (the most a document may): flatten it",
        ),
        (
            vec![file("aliases.yaml", &aliases)],
            ("aliases.yaml", 1_003),
            "uses more than 1000 aliases (the most a document may): write the values out",
        ),
        (
            vec![file("ratio.yaml", &ratio)],
            ("ratio.yaml", 102),
            "uses 100 aliases of 1 anchors (at most 10 an anchor once a document has 100)",
        ),
        // The revision's allowance spans its files: each alone would be read.
        (
            vec![
                file("a.yaml", &list(300_000)),
                file("b.yaml", &list(300_000)),
            ],
            ("b.yaml", 7),
            "holds more than 500000 values, lists and mappings here, aliases expanded",
        ),
        (
            vec![
                file("a.yaml", &"~\n---\n".repeat(3_000)),
                file("b.yaml", &"# nulls\n~\n---\n".repeat(2_001)),
            ],
            ("b.yaml", 6_002),
            "document 5001 of the revision is past the limit of 5000 documents a revision",
        ),
    ];
    for (files, (path, line), phrase) in cases {
        let refusals = parse(&files, "home", &governing()).unwrap_err();
        assert_eq!(refusals.len(), 1, "{path}: {refusals:?}");
        let r = &refusals[0];
        assert_eq!((r.file.as_str(), r.line), (path, line), "{r}");
        assert!(r.message.contains(phrase), "{r}");
    }
}

/// Values read as serde_yaml read them (YAML 1.2): what a repository wrote means what it meant.
#[test]
fn values_keep_their_yaml_1_2_meaning() {
    let text = format!(
        "{TX}  flags: [yes, no, on, true, False]\n  codes: [0755, 1_000, 0x1F, 12, -1.5, ~]\n  \"<<\": kept\n"
    );
    let docs = parse(&[file("a.yaml", &text)], "home", &governing()).unwrap();
    assert_eq!(
        docs[0].body["spec"],
        serde_json::json!({
            "memo": "bread",
            "flags": ["yes", "no", "on", true, false],
            "codes": ["0755", "1_000", 31, 12, -1.5, null],
            "<<": "kept",
        })
    );
    let twice = format!("{TX}  memo: cake\n");
    let refusals = parse(&[file("a.yaml", &twice)], "home", &governing()).unwrap_err();
    assert_eq!(refusals[0].line, 7, "{}", refusals[0]);
    assert!(
        refusals[0].message.starts_with("not valid YAML: duplicate"),
        "{}",
        refusals[0]
    );
}

#[test]
fn a_repository_of_a_thousand_documents_is_well_within_the_limits() {
    let files: Vec<File> = (0..1_000)
        .map(|i| {
            let rule = RULE.replace("rail-co", &format!("rule-{i}"));
            file(
                &format!("rules/{i}.yaml"),
                &format!("# rule {i}\n---\n{rule}"),
            )
        })
        .collect();
    let docs = parse(&files, "home", &governing()).unwrap();
    assert_eq!(docs.len(), 1_000);
}
