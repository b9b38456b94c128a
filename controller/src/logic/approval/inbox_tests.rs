//! Unit tests of `logic/approval/inbox.rs`.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

const BOT: &str = "ledgerops-bot";
const GITEA: &str = "https://git.example.com";

/// A request of plan `groceries` (uid `plan-uid`) of Budget `home`, issued at `issued` seconds.
pub(in crate::logic::approval) fn request(
    name: &str,
    issued: i64,
    lineage: &[&str],
) -> ApprovalRequest {
    let at = k8s_openapi::jiff::Timestamp::from_second(1_790_000_000 + issued).unwrap();
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
        "metadata": {"name": name, "namespace": "family", "uid": format!("{name}-uid")},
        "spec": {"budgetRef": {"name": "home"},
                 "subject": {"kind": "CategorizationPlan", "name": "groceries"},
                 "previewHash": "h", "summary": "Move 3 transactions to Groceries",
                 "reason": "more than 25.00", "changeCount": 3, "expiresAt": at.to_string(),
                 "proposedBy": lineage, "fourEyes": true},
        "status": {"phase": "Pending",
                   "issuedFor": {"subjectUid": "plan-uid", "previewHash": "h", "at": at.to_string()}},
    }))
    .unwrap()
}

#[test]
fn the_issue_is_the_bots_oldest_with_the_subjects_marker() {
    let ours = format!("{}\nWaiting", marker("plan-uid"));
    let other = format!("{}\nWaiting", marker("other-uid"));
    let quoted = format!("> quote\n{ours}");
    type Issues<'a> = Vec<(i64, &'a str, &'a str)>;
    let cases: Vec<(&str, Issues, Option<i64>)> = vec![
        ("the bot's", vec![(4, BOT, &ours)], Some(4)),
        (
            "the oldest of two",
            vec![(9, BOT, &ours), (4, BOT, &ours)],
            Some(4),
        ),
        ("a copy by someone else", vec![(2, "mallory", &ours)], None),
        ("another subject's", vec![(2, BOT, &other)], None),
        (
            "the marker not on the first line",
            vec![(2, BOT, &quoted)],
            None,
        ),
        ("nothing", vec![], None),
    ];
    for (case, issues, expected) in cases {
        assert_eq!(find(issues, BOT, "plan-uid"), expected, "{case}");
    }
    assert_eq!(subject_of("<!-- ledgerops:inbox subject= -->"), None);
    assert_eq!(subject_of("<!-- ledgerops:inbox subject=a b -->"), None);
}

#[test]
fn the_newest_issued_request_of_the_subject_speaks() {
    let name = |r: Option<&ApprovalRequest>| r.map(ResourceExt::name_any);
    let first = request("groceries-1", 0, &[]);
    let second = request("groceries-2", 60, &[]);
    let mut not_issued = request("groceries-9", 120, &[]);
    not_issued.status = None;
    let mut elsewhere = request("rent-1", 180, &[]);
    elsewhere
        .status
        .as_mut()
        .unwrap()
        .issued_for
        .as_mut()
        .unwrap()
        .subject_uid = "rent-uid".into();
    let all = [first.clone(), second.clone(), not_issued, elsewhere];
    // Replaced within the same second: the one not replaced speaks, whatever the names say.
    let mut replaced = request("groceries-zz", 60, &[]);
    replaced.status.as_mut().unwrap().phase = Some(ApprovalPhase::Stale);
    let same_second = [replaced.clone(), second.clone()];
    assert_eq!(
        name(newest(&same_second, "plan-uid")),
        Some(second.name_any())
    );
    assert_eq!(
        name(newest(&same_second[..1], "plan-uid")),
        Some(replaced.name_any()),
        "alone, it still speaks"
    );
    assert_eq!(
        newest(&all, "plan-uid")
            .map(ResourceExt::name_any)
            .as_deref(),
        Some("groceries-2")
    );
    assert_eq!(name(newest(&all[..1], "plan-uid")), Some(first.name_any()));
    assert_eq!(
        name(newest(&all[2..3], "plan-uid")),
        None,
        "a request the controller did not issue"
    );
    assert_eq!(
        newest(&all, "rent-uid")
            .map(ResourceExt::name_any)
            .as_deref(),
        Some("rent-1")
    );
}

#[test]
fn the_approvers_asked_are_the_mapped_logins_outside_the_lineage() {
    let users = BTreeMap::from([
        ("alice-g".to_owned(), "alice".to_owned()),
        ("bob".to_owned(), "bob@example.com".to_owned()),
        ("carol".to_owned(), "carol".to_owned()),
    ]);
    let logins = |r: &ApprovalRequest| -> Vec<String> {
        candidates(r, &users).into_iter().map(|(l, _)| l).collect()
    };
    let r = request("groceries-1", 0, &["alice", "gitea:carol"]);
    assert_eq!(
        logins(&r),
        ["bob"],
        "alice by her user name, carol by her login"
    );
    let mut one_person = r.clone();
    one_person.spec.four_eyes = false;
    assert_eq!(logins(&one_person), ["alice-g", "bob", "carol"]);
    assert!(candidates(&r, &BTreeMap::new()).is_empty());
}

fn repo(name: &str, url: &str, inventory: serde_json::Value) -> ConfigRepo {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
        "metadata": {"name": name, "namespace": "family"},
        "spec": {"url": url},
        "status": {"inventory": inventory},
    }))
    .unwrap()
}

fn budget(approval: serde_json::Value) -> Budget {
    serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": "home", "namespace": "family"},
        "spec": {"planId": "last-used", "tokenSecretRef": {"name": "t", "key": "k"},
                 "approval": approval},
    }))
    .unwrap()
}

#[test]
fn the_issue_goes_to_the_repository_the_budget_names_else_its_config_repository() {
    let allowed = Allowlist::new(&["family/config", "family/other", "family/inbox"]).unwrap();
    let declares =
        json!([{"kind": "Budget", "name": "home", "digest": "d", "uid": "b", "commit": "c"}]);
    let url = |r: &str| format!("{GITEA}/family/{r}.git");
    let mut elsewhere = repo("a-elsewhere", &url("config"), declares.clone());
    elsewhere.metadata.namespace = Some("neighbours".into());
    let default = budget(json!({}));
    let named = |r: &str| budget(json!({"inbox": {"repository": r}}));
    let off = budget(json!({"inbox": {"enabled": false}}));
    let two = || {
        vec![
            repo("a", &url("other"), json!([])),
            repo("b", &url("config"), declares.clone()),
        ]
    };
    let some = |r: &str| Some(format!("family/{r}"));
    let cases = [
        (
            "the repository that declares the Budget",
            Some(&default),
            two(),
            some("config"),
        ),
        ("the Budget not seen yet", None, two(), some("config")),
        (
            "else the first by name",
            Some(&default),
            vec![
                repo("b", &url("config"), json!([])),
                repo("a", &url("other"), json!([])),
            ],
            some("other"),
        ),
        (
            "the one the Budget names",
            Some(&named("family/inbox")),
            two(),
            some("inbox"),
        ),
        (
            "named, but not one the bot may speak in",
            Some(&named("family/secret")),
            two(),
            None,
        ),
        ("turned off", Some(&off), two(), None),
        (
            "a repository not on the allowlist",
            Some(&default),
            vec![repo("a", &url("unlisted"), declares.clone())],
            None,
        ),
        (
            "nor one on another server",
            Some(&default),
            vec![repo(
                "a",
                "https://evil.example.com/family/config.git",
                declares.clone(),
            )],
            None,
        ),
        (
            "nor one of another namespace",
            Some(&default),
            vec![elsewhere],
            None,
        ),
        ("no repository", Some(&default), vec![], None),
    ];
    for (case, budget, repos, expected) in cases {
        let repos: Vec<&ConfigRepo> = repos.iter().collect();
        assert_eq!(
            repository(("family", "home"), budget, &repos, GITEA, &allowed),
            expected,
            "{case}"
        );
    }
}
