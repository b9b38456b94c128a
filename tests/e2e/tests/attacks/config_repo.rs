//! Issue 25: a ConfigRepo under attack. `alice` (an editor and more, who cannot read Secrets)
//! makes ConfigRepos and pushes to repositories served over `file://` from the shared
//! controller's file root, or points them at a stranger's server on loopback. Every case asserts
//! the refusal and its words, that the controller stays up and small, and that YNAB saw no write.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::config_repo::{ConfigRepo, RepoPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops::api::transaction::Transaction;
use ledgerops::logic::status::conditions;
use ledgerops_e2e::config_repo::{self, transaction, until_synced};
use ledgerops_e2e::git_work::{Work, bare};
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, category};
use ledgerops_e2e::stranger::Listener;
use ledgerops_e2e::wait;
use ledgerops_e2e::world::World;
use serde_json::{Value, json};

/// The most memory the shared controller may ever have held, whatever the repositories said.
const PEAK_MIB: u64 = 400;

/// A world on the shared controller, with alice and a directory of `file://` repositories.
async fn world(prefix: &str) -> World {
    World::build(prefix).repositories().alice().build().await
}

fn repos(w: &World) -> Api<ConfigRepo> {
    w.sc.api()
}

/// A bare repository `name` under the world's directory, and a working copy pushing to it.
fn repository(w: &World, name: &str) -> (Work, String) {
    let (_, url) = bare(w.root(), &format!("{name}.git"));
    let work = Work::new(w.root().join(format!("{name}-work")), &url);
    (work, url)
}

/// Creates the ConfigRepo `name` following `url` as `client`.
async fn create(w: &World, client: &Client, name: &str, url: &str, extra: Value) {
    let mut spec = json!({"url": url, "interval": "30s"});
    merge(&mut spec, extra);
    config_repo::create(client, &w.sc.ns, name, spec).await;
}

/// Waits (asking it to sync) until the ConfigRepo's `Ready` has `reason`; returns its message.
async fn until_reason(w: &World, name: &str, reason: &str) -> String {
    let repo = until_synced(&repos(w), name, |r| ready(r).0 == reason).await;
    ready(&repo).1
}

async fn transaction_names(w: &World) -> Vec<String> {
    config_repo::transaction_names(&w.sc.api()).await
}

/// The controller is up and answers, never held more than [`PEAK_MIB`], and YNAB saw `writes`
/// writes.
async fn unharmed(w: &World, writes: u64) {
    let controller = w.controller();
    assert!(!controller.exited(), "the controller died");
    let ready = reqwest::get(format!("{}/readyz", controller.url()))
        .await
        .expect("the controller answers");
    assert!(ready.status().is_success());
    let peak = controller.peak_rss_kib().expect("the controller's memory") / 1024;
    assert!(peak < PEAK_MIB, "the controller held {peak} MiB");
    assert_eq!(w.sc.writes().await, writes);
}

fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, extra) {
        a.extend(b);
    }
}

/// `Ready`'s reason and message.
fn ready(repo: &ConfigRepo) -> (String, String) {
    let status = repo.status.clone().unwrap_or_default();
    conditions::get(&status.conditions, "Ready")
        .filter(|_| status.observed_generation == repo.metadata.generation)
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

/// A Git credentials Secret, labelled as one; `serves` is its URL-prefix annotation.
async fn git_secret(s: &Scenario, name: &str, serves: Option<&str>) {
    let mut metadata = json!({"name": name, "labels": {"ledgerops.dev/git-credentials": "true"}});
    if let Some(prefixes) = serves {
        metadata["annotations"] = json!({"ledgerops.dev/git-url-prefixes": prefixes});
    }
    let secret: Secret = serde_json::from_value(json!({
        "metadata": metadata,
        "stringData": {"username": "household", "password": "hunter2-git"},
    }))
    .unwrap();
    s.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

#[tokio::test]
async fn git_credentials_go_only_to_the_servers_their_secret_names() {
    let w = world("crepo-creds").await;
    let stranger = Listener::answering(
        "401 Unauthorized",
        "www-authenticate: Basic realm=\"git\"\r\n",
        "",
    );
    git_secret(
        &w.sc,
        "household-git",
        Some("https://git.household.example/household/"),
    )
    .await;
    // Labelled before Secrets named their servers: the label alone no longer sends it anywhere.
    git_secret(&w.sc, "old-git", None).await;
    let url = format!("http://127.0.0.1:{}/household/config.git", stranger.port);
    for (name, secret, says) in [
        (
            "exfiltrate",
            "household-git",
            "it serves https://git.household.example/household/",
        ),
        (
            "unscoped",
            "old-git",
            "it does not say which servers it is for",
        ),
    ] {
        create(
            &w,
            w.alice(),
            name,
            &url,
            json!({"secretRef": {"name": secret}}),
        )
        .await;
        let message = until_reason(&w, name, "CredentialsNotForUrl").await;
        assert!(
            message.contains(says) && message.contains("ledgerops.dev/git-url-prefixes"),
            "{message}"
        );
        assert!(!message.contains("hunter2-git"));
    }
    assert_eq!(stranger.connections(), 0, "nothing was fetched");
    assert!(!stranger.saw("uthorization"));
    unharmed(&w, 0).await;
}

#[tokio::test]
async fn a_config_repo_reaches_no_internal_address_and_polls_no_faster_than_30s() {
    let w = world("crepo-ssrf").await;
    let refused = repos(&w)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
                "metadata": {"name": "hot", "annotations": {PROPOSED_BY: "admin"}},
                "spec": {"url": "https://git.example/h/c.git", "interval": "0s"},
            }))
            .unwrap(),
        )
        .await
        .expect_err("an interval under 30s is refused");
    assert!(
        refused.to_string().contains("interval must be 30s or more"),
        "{refused}"
    );

    // The test controller allows plain http to loopback only; https to loopback, the cloud
    // metadata endpoint and a cluster Service address are refused before any connection.
    let stranger = Listener::start("200 OK", "{}");
    let port = stranger.port;
    let cases = [
        (
            "loopback-https",
            format!("https://127.0.0.1:{port}/h/c.git"),
            "127.0.0.1",
        ),
        (
            "localhost",
            format!("https://localhost:{port}/h/c.git"),
            "localhost",
        ),
        (
            "metadata",
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "http://",
        ),
        ("service", "http://10.96.0.1/h/c.git".to_owned(), "http://"),
    ];
    for (name, url, _) in &cases {
        create(&w, w.alice(), name, url, json!({})).await;
    }
    for (name, _, says) in &cases {
        let message = until_reason(&w, name, "UrlNotAllowed").await;
        assert!(
            message.contains(says) && message.contains("--config-repo-url-allow"),
            "{name}: {message}"
        );
    }
    assert_eq!(stranger.connections(), 0);
    unharmed(&w, 0).await;
}

/// A CategorizationRule document for RAIL CO in `category_name`.
fn rule(name: &str, category_name: &str) -> String {
    format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationRule\nmetadata:\n  name: {name}\nspec:\n  budgetRef:\n    name: household\n  match:\n    payeeNormalised: RAIL CO\n  categoryId: {}\n",
        category(category_name)
    )
}

#[tokio::test]
async fn a_repository_never_takes_over_what_it_did_not_create() {
    let w = world("crepo-adopt").await;
    w.sc.create_writing_budget("household", json!({})).await;
    w.sc.wait_budget("household", BudgetPhase::Ready).await;
    // alice's own Transaction, and a rule a person blessed.
    let rent: Transaction = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
        "metadata": {"name": "rent", "annotations": {PROPOSED_BY: "alice"}},
        "spec": {"budgetRef": {"name": "household"}, "transactionId": "tx-rent", "memo": "mine"},
    }))
    .unwrap();
    Api::<Transaction>::namespaced(w.alice().clone(), &w.sc.ns)
        .create(&PostParams::default(), &rent)
        .await
        .unwrap();
    w.sc.create_rule(
        "rail-co",
        "RAIL CO",
        "Transport",
        Some("2026-09-20T10:00:00Z"),
    )
    .await;
    let blessed =
        w.sc.api::<CategorizationRule>()
            .get("rail-co")
            .await
            .unwrap();

    // An owner's governing repository declares both: refused, naming each, nothing changed.
    let (work, url) = repository(&w, "takeover");
    work.commit(
        &[
            ("rent.yaml", &transaction("rent", "theirs")),
            ("rules/rail-co.yaml", &rule("rail-co", "Restaurants")),
        ],
        false,
    );
    create(
        &w,
        &w.sc.client,
        "takeover",
        &url,
        json!({"authority": "Govern"}),
    )
    .await;
    let message = until_reason(&w, "takeover", "Conflict").await;
    for says in [
        "rent.yaml:1: Transaction/rent exists and is not this repository's",
        "rules/rail-co.yaml:1: CategorizationRule/rail-co exists and is not this repository's",
    ] {
        assert!(message.contains(says), "{message}");
    }
    let rent = w.sc.api::<Transaction>().get("rent").await.unwrap();
    assert_eq!(rent.spec.memo.as_deref(), Some("mine"));
    assert_eq!(
        rent.annotations().get(PROPOSED_BY).map(String::as_str),
        Some("alice")
    );
    let rule_now =
        w.sc.api::<CategorizationRule>()
            .get("rail-co")
            .await
            .unwrap();
    assert_eq!(rule_now.spec, blessed.spec, "the blessed rule is untouched");
    assert_eq!(
        rule_now.annotations().get(PROPOSED_BY),
        blessed.annotations().get(PROPOSED_BY)
    );

    // One repository's object is not another's: the second is refused, the first keeps it.
    let (first, first_url) = repository(&w, "first");
    let head = first.commit(&[("t1.yaml", &transaction("t1", "first"))], false);
    create(&w, w.alice(), "first", &first_url, json!({})).await;
    config_repo::wait_applied(&repos(&w), "first", &head).await;
    let (second, second_url) = repository(&w, "second");
    second.commit(&[("t1.yaml", &transaction("t1", "second"))], false);
    create(&w, w.alice(), "second", &second_url, json!({})).await;
    until_reason(&w, "second", "Conflict").await;

    // Deleting the first leaves its object, an Event saying so, and still nobody adopts it.
    repos(&w)
        .delete("first", &DeleteParams::default())
        .await
        .unwrap();
    let events: Api<Event> = w.sc.api();
    wait::eventually(
        "the Event of what the deleted ConfigRepo left",
        WAIT,
        async || {
            events
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .iter()
                .any(|e| {
                    e.reason.as_deref() == Some("Deleted")
                        && e.note.as_deref().is_some_and(|n| {
                            n.contains("ConfigRepo first was deleted")
                                && n.contains("Transaction/t1")
                        })
                })
        },
    )
    .await;
    let message = until_reason(&w, "second", "Conflict").await;
    assert!(message.contains("Transaction/t1 exists"), "{message}");
    let t1 = w.sc.api::<Transaction>().get("t1").await.unwrap();
    assert_eq!(t1.spec.memo.as_deref(), Some("first"));
    assert_eq!(transaction_names(&w).await, ["rent", "t1"]);
    unharmed(&w, 0).await;
}

#[tokio::test]
async fn resource_bombs_are_refused_before_the_work_and_the_controller_stays_small() {
    let w = world("crepo-bombs").await;
    // A 700 KB scalar aliased 60,000 times: 42 GB once expanded.
    let anchor = "x".repeat(700 * 1024);
    let aliases = "*a, ".repeat(60_000);
    let alias_bomb = format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: bomb\n  annotations:\n    big: &a \"{anchor}\"\nspec:\n  budgetRef:\n    name: household\n  transactionId: tx-bomb\n  memo: [{aliases}]\n"
    );
    // 50 MB of zeros: a small pack, a huge blob.
    let zeros = "0".repeat(50 << 20);
    // 6,000 documents in one file.
    let documents: String = (0..6_000)
        .map(|i| format!("---\n{}", transaction(&format!("d{i}"), "m")))
        .collect();
    // (ConfigRepo, files, the reasons that refuse it, what the message names)
    type Case<'a> = (&'a str, Vec<(String, String)>, &'a [&'a str], &'a str);
    let cases: [Case; 4] = [
        (
            "aliases",
            vec![("bomb.yaml".into(), alias_bomb)],
            &["InvalidDocument", "InvalidRepository"],
            "bomb.yaml",
        ),
        (
            "blob",
            vec![("big.yaml".into(), zeros)],
            &["InvalidRepository"],
            "big.yaml",
        ),
        (
            "tree",
            (0..25_000)
                .map(|i| (format!("t/{}/{i}.txt", i % 100), String::new()))
                .collect(),
            &["InvalidRepository"],
            "20000",
        ),
        (
            "documents",
            vec![("many.yaml".into(), documents)],
            &["InvalidDocument", "InvalidRepository"],
            "many.yaml",
        ),
    ];
    for (name, files, _, _) in &cases {
        let (work, url) = repository(&w, name);
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        work.commit(&refs, false);
        create(&w, w.alice(), name, &url, json!({})).await;
    }
    for (name, _, reasons, says) in &cases {
        let repo = until_synced(&repos(&w), name, |r| reasons.contains(&ready(r).0.as_str())).await;
        let (reason, message) = ready(&repo);
        assert!(message.contains(says), "{name}: {message}");
        assert_eq!(
            repo.status.unwrap().phase,
            Some(if reason == "InvalidRepository" {
                RepoPhase::FetchFailed
            } else {
                RepoPhase::ApplyFailed
            }),
            "{name}"
        );
    }
    assert!(transaction_names(&w).await.is_empty());
    unharmed(&w, 0).await;
}

/// `count` Transaction files named `<prefix>-t<i>`.
fn transactions(prefix: &str, range: std::ops::Range<usize>) -> Vec<(String, String)> {
    range
        .map(|i| {
            let name = format!("{prefix}-t{i}");
            (format!("tx/{name}.yaml"), transaction(&name, "m"))
        })
        .collect()
}

fn refs(files: &[(String, String)]) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect()
}

#[tokio::test]
async fn the_prune_guard_counts_documents_across_pushes() {
    let w = world("crepo-prune").await;
    // 49% a push: 4 of 10, then 2 more, is 6 of the 10 a person last saw.
    let (drip, drip_url) = repository(&w, "drip");
    let head = drip.commit(&refs(&transactions("d", 0..10)), false);
    create(&w, w.alice(), "drip", &drip_url, json!({})).await;
    config_repo::wait_applied(&repos(&w), "drip", &head).await;
    let head = drip.commit(&refs(&transactions("d", 4..10)), false);
    config_repo::wait_applied(&repos(&w), "drip", &head).await;
    drip.commit(&refs(&transactions("d", 6..10)), false);
    let message = until_reason(&w, "drip", "PruneGuard").await;
    assert!(
        message.contains("would delete 2 object(s)")
            && message.contains("4 were deleted by earlier revisions")
            && message.contains("of the 10 objects"),
        "{message}"
    );

    // Padding: 60 documents in one file, then the 10 real ones dropped.
    let (pad, pad_url) = repository(&w, "padded");
    let real = transactions("p", 0..10);
    let head = pad.commit(&refs(&real), false);
    create(&w, w.alice(), "padded", &pad_url, json!({})).await;
    config_repo::wait_applied(&repos(&w), "padded", &head).await;
    let padding: String = (0..60)
        .map(|i| format!("---\n{}", transaction(&format!("pad{i}"), "m")))
        .collect();
    let mut padded = real.clone();
    padded.push(("padding.yaml".into(), padding.clone()));
    let head = pad.commit(&refs(&padded), false);
    config_repo::wait_applied(&repos(&w), "padded", &head).await;
    pad.commit(&[("padding.yaml", padding.as_str())], false);
    let message = until_reason(&w, "padded", "PruneGuard").await;
    assert!(message.contains("would delete 10 object(s)"), "{message}");
    let left = transaction_names(&w).await;
    assert_eq!(left.iter().filter(|n| n.starts_with("p-t")).count(), 10);
    assert_eq!(left.iter().filter(|n| n.starts_with("d-t")).count(), 6);
    unharmed(&w, 0).await;
}

#[tokio::test]
async fn a_rewritten_branch_is_held_until_an_owner_confirms() {
    let w = world("crepo-rewrite").await;
    let (work, url) = repository(&w, "policy");
    let first = work.commit(
        &[
            ("a.yaml", &transaction("a", "m")),
            ("b.yaml", &transaction("b", "m")),
        ],
        false,
    );
    create(
        &w,
        &w.sc.client,
        "policy",
        &url,
        json!({"authority": "Govern"}),
    )
    .await;
    config_repo::wait_applied(&repos(&w), "policy", &first).await;
    let second = work.commit(
        &[
            ("a.yaml", &transaction("a", "m")),
            ("b.yaml", &transaction("b", "m")),
            ("c.yaml", &transaction("c", "m")),
        ],
        false,
    );
    config_repo::wait_applied(&repos(&w), "policy", &second).await;
    // Someone who can push resets the branch to the older commit.
    work.git(&[
        "push",
        "-q",
        "--force",
        &url,
        &format!("{first}:refs/heads/main"),
    ]);
    let message = until_reason(&w, "policy", "HistoryRewritten").await;
    assert!(
        message.contains(&format!("revision main@sha1:{first} does not descend from the applied revision main@sha1:{second}")),
        "{message}"
    );
    let repo = repos(&w).get("policy").await.unwrap();
    assert_eq!(repo.status.unwrap().phase, Some(RepoPhase::RewriteHeld));
    assert_eq!(transaction_names(&w).await, ["a", "b", "c"]);
    // Confirming a governing repository's held revision is governing.
    let confirm = json!({"metadata": {"annotations": {"ledgerops.dev/confirm-rewrite": format!("main@sha1:{first}")}}});
    let refused = Api::<ConfigRepo>::namespaced(w.alice().clone(), &w.sc.ns)
        .patch("policy", &PatchParams::default(), &Patch::Merge(&confirm))
        .await
        .expect_err("alice may not confirm");
    assert!(refused.to_string().contains("govern"), "{refused}");
    repos(&w)
        .patch("policy", &PatchParams::default(), &Patch::Merge(&confirm))
        .await
        .unwrap();
    config_repo::wait_applied(&repos(&w), "policy", &first).await;
    assert_eq!(transaction_names(&w).await, ["a", "b"]);
    unharmed(&w, 0).await;
}

#[tokio::test]
async fn a_demotion_survives_deleting_the_rule() {
    let w = world("crepo-demotion").await;
    w.sc.create_writing_budget("household", json!({})).await;
    w.sc.wait_budget("household", BudgetPhase::Ready).await;
    let (work, url) = repository(&w, "rules");
    let head = work.commit(
        &[("rules/rail-co.yaml", &rule("rail-co", "Transport"))],
        false,
    );
    create(
        &w,
        &w.sc.client,
        "rules",
        &url,
        json!({"authority": "Govern"}),
    )
    .await;
    config_repo::wait_applied(&repos(&w), "rules", &head).await;
    let rules: Api<CategorizationRule> = w.sc.api();
    let phase = |r: &CategorizationRule| r.status.as_ref().and_then(|s| s.phase);
    wait::until(&rules, "rail-co", WAIT, |r| {
        phase(r) == Some(RulePhase::Blessed)
    })
    .await;
    // The autopilot writes under the rule's blessing; a person overrides it by hand.
    w.sc.api::<Budget>()
        .patch(
            "household",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"autopilot": {"enabled": true}}})),
        )
        .await
        .unwrap();
    wait::eventually("the autopilot's write", WAIT, async || {
        w.sc.requests(PATCH).await == 1
    })
    .await;
    w.sc.recategorise_in_ynab("tx-049", "Restaurants").await;
    let demoted = wait::until(&rules, "rail-co", WAIT, |r| {
        phase(r) == Some(RulePhase::Demoted)
    })
    .await;

    // Its repository records the demotion at once.
    let recorded = |r: &ConfigRepo| {
        r.status
            .as_ref()
            .is_some_and(|s| s.demoted.iter().any(|d| d.name == "rail-co"))
    };
    let repo = until_synced(&repos(&w), "rules", recorded).await;
    assert!(
        ready(&repo).1.contains("demoted by a person's override"),
        "{:?}",
        ready(&repo)
    );
    // alice may not delete it (the repository would make it again, blessed by the merge).
    let alices: Api<CategorizationRule> = Api::namespaced(w.alice().clone(), &w.sc.ns);
    let refused = alices
        .delete("rail-co", &DeleteParams::default())
        .await
        .expect_err("deleting a demoted rule needs bless");
    assert!(refused.to_string().contains("it is demoted"), "{refused}");
    // She takes its blessing off instead: applied again, and still not blessed by the merge.
    alices
        .patch(
            "rail-co",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"blessing": null}})),
        )
        .await
        .unwrap();
    let taken_off = rules.get("rail-co").await.unwrap().metadata.generation;
    until_synced(&repos(&w), "rules", |r| {
        r.status.as_ref().is_some_and(|s| {
            s.inventory
                .iter()
                .any(|e| e.name == "rail-co" && e.generation >= taken_off)
        }) && recorded(r)
    })
    .await;
    // An approver deletes it: made again, still not blessed by the merge.
    rules
        .delete("rail-co", &DeleteParams::default())
        .await
        .unwrap();
    let made_again = wait::until(&rules, "rail-co", WAIT, |r| r.uid() != demoted.uid()).await;
    assert!(
        made_again.spec.blessing.is_none(),
        "not blessed by the merge again"
    );
    wait::until(&rules, "rail-co", WAIT, |r| {
        phase(r) == Some(RulePhase::Candidate)
    })
    .await;
    assert_eq!(
        w.sc.requests(PATCH).await,
        1,
        "no write under the demoted rule"
    );

    // A changed rule merged is blessed by the merge.
    let head = work.commit(
        &[("rules/rail-co.yaml", &rule("rail-co", "Restaurants"))],
        false,
    );
    let applied = config_repo::wait_applied(&repos(&w), "rules", &head).await;
    assert!(applied.status.unwrap().demoted.is_empty());
    wait::until(&rules, "rail-co", WAIT, |r| {
        phase(r) == Some(RulePhase::Blessed)
    })
    .await;
    unharmed(&w, 1).await;
}
