//! ConfigRepo end to end: `ledgerops run` fetches real Git repositories (on disk over `file://`,
//! and a private repository of a real Gitea over HTTP with a token), applies what they declare
//! into a real API server, and prunes what they stop declaring (a plan whose write is in flight
//! only once it ended). The guarantees about what a repository may create run as `alice`, who
//! holds a namespace editor's rights and more.

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::config_repo::{ConfigRepo, RepoPhase};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops::api::transaction::Transaction;
use ledgerops::logic::status::conditions;
use ledgerops_e2e::attacker::{attacker, install_people_roles};
use ledgerops_e2e::config_repo::{self, transaction};
use ledgerops_e2e::controller::{Ledgerops, shared_file_root};
use ledgerops_e2e::git_work::{Work, bare};
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::kstatus;
use ledgerops_e2e::scenario::{PATCH, WAIT, category};
use ledgerops_e2e::wait::{self, eventually};
use ledgerops_e2e::world::World;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use serde_json::{Value, json};
use ynab_sim::demo;

const SECRET: &str = "configrepo-webhook-secret";

/// The Gitea repository the shared controller takes webhooks for.
fn gitea_repo() -> String {
    format!("household/crepo-{}", std::process::id())
}

/// Where the shared controller caches what it fetched.
fn cache_dir() -> PathBuf {
    ControlPlane::shared().dir().join("cache")
}

/// One `ledgerops run` for the whole suite: every controller on a plane follows every
/// ConfigRepo, so tests share it (and each works in a namespace of its own).
async fn controller() -> &'static Ledgerops {
    static SHARED: tokio::sync::OnceCell<Ledgerops> = tokio::sync::OnceCell::const_new();
    SHARED
        .get_or_init(|| async {
            let plane = ControlPlane::shared();
            std::fs::create_dir_all(shared_file_root()).unwrap();
            let gitea = Gitea::shared();
            let name = gitea_repo();
            // The bot reads it: the authors of what a repository of the attached Gitea applies are
            // read from Gitea.
            gitea_api::create_repo(
                name.trim_start_matches("household/"),
                &[(gitea.bot(), "read")],
            )
            .await;
            let (root, cache) = (
                shared_file_root().display().to_string(),
                cache_dir().display().to_string(),
            );
            let args = [
                "--config-repo-file-root",
                root.as_str(),
                "--config-repo-cache",
                cache.as_str(),
                "--gitea-url",
                gitea.url(),
                "--gitea-bot-login",
                gitea.bot().login(),
                "--gitea-repository",
                name.as_str(),
            ];
            let env = [
                ("LEDGEROPS_GITEA_TOKEN", gitea.bot().token()),
                ("LEDGEROPS_GITEA_WEBHOOK_SECRET", SECRET),
            ];
            Ledgerops::start_with(plane, &args, &env).await
        })
        .await
}

/// One test's world: a namespace, a YNAB simulator and a directory for its repositories, on the
/// suite's controller.
async fn world(prefix: &str) -> World {
    World::build(prefix)
        .controller(controller())
        .repositories()
        .build()
        .await
}

/// Count of this namespace's syncs that wrote anything ("applied N" notes in the log).
fn writing_syncs(w: &World) -> usize {
    w.controller()
        .log()
        .lines()
        .filter(|l| l.contains(": applied ") && l.contains(&w.sc.ns))
        .count()
}

fn repos(w: &World) -> Api<ConfigRepo> {
    w.sc.api()
}

/// Creates the ConfigRepo `name` as `client` (admin or alice).
async fn create(w: &World, client: &Client, name: &str, spec: Value) {
    config_repo::create(client, &w.sc.ns, name, spec).await;
}

async fn patch_spec(w: &World, name: &str, spec: Value) {
    repos(w)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": spec})),
        )
        .await
        .unwrap();
}

/// Waits until `Ready` has `reason` (and the ConfigRepo describes its generation).
async fn wait_reason(w: &World, name: &str, reason: &str) -> ConfigRepo {
    config_repo::until_synced(&repos(w), name, |r| {
        let s = r.status.clone().unwrap_or_default();
        s.observed_generation == r.metadata.generation
            && conditions::get(&s.conditions, "Ready").is_some_and(|c| c.reason == reason)
    })
    .await
}

/// Waits until `commit` of `main` is applied.
async fn wait_applied(w: &World, name: &str, commit: &str) -> ConfigRepo {
    config_repo::wait_applied(&repos(w), name, commit).await
}

async fn transactions(w: &World) -> Vec<String> {
    config_repo::transaction_names(&w.sc.api()).await
}

fn ready(repo: &ConfigRepo) -> (String, String) {
    let s = repo.status.as_ref().unwrap();
    let c = conditions::get(&s.conditions, "Ready").unwrap();
    (c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn file_repository_applies_recursively_then_an_unchanged_revision_writes_nothing() {
    let w = world("crepo-file").await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let plan = "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationPlan\nmetadata:\n  name: groceries\nspec:\n  budgetRef:\n    name: household\n  assignments:\n    - transactionId: tx-048\n      categoryId: cat-groceries\n";
    let two = format!(
        "{}---\n# the second one\n{}",
        transaction("rent", "may"),
        transaction("bakery", "bread")
    );
    let head = work.commit(
        &[
            ("ledger/transactions.yaml", &two),
            ("ledger/plans/may.yml", plan),
            ("ledger/README.md", "not applied"),
            ("elsewhere/other.yaml", &transaction("outside", "x")),
        ],
        false,
    );
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": url, "path": "ledger", "interval": "30s"}),
    )
    .await;
    let repo = wait_applied(&w, "household", &head).await;
    let status = repo.status.unwrap();
    assert_eq!(transactions(&w).await, ["bakery", "rent"]);
    kstatus::expect::<ConfigRepo>(&w.sc.client, &w.sc.ns, "household", "Current").await;
    let inventory: Vec<(String, String)> = status
        .inventory
        .iter()
        .map(|e| (e.kind.clone(), e.name.clone()))
        .collect();
    assert_eq!(
        inventory,
        [
            ("CategorizationPlan".into(), "groceries".into()),
            ("Transaction".into(), "bakery".into()),
            ("Transaction".into(), "rent".into()),
        ]
    );
    let rent = w.sc.api::<Transaction>().get("rent").await.unwrap();
    let managers: Vec<String> = rent
        .metadata
        .managed_fields
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.contains(&"ledgerops-configrepo".to_owned()),
        "{managers:?}"
    );

    // Unchanged: many intervals and a request-now later, the ConfigRepo and what it applied
    // are where they were, and no sync wrote anything.
    w.sc.annotate::<ConfigRepo>("household", "ledgerops.dev/sync-requested-at", "1")
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = repos(&w).get("household").await.unwrap();
    let rent_before = w.sc.api::<Transaction>().get("rent").await.unwrap();
    let log_before = writing_syncs(&w);
    assert_eq!(log_before, 1, "{}", w.controller().log());
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after = repos(&w).get("household").await.unwrap();
    let rent_after = w.sc.api::<Transaction>().get("rent").await.unwrap();
    assert_eq!(before.resource_version(), after.resource_version());
    assert_eq!(
        rent_before.metadata.generation,
        rent_after.metadata.generation
    );
    assert_eq!(writing_syncs(&w), 1);

    // Someone edits a repository object by hand: the next sync puts the declared spec back.
    w.sc.api::<Transaction>()
        .patch(
            "rent",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"memo": "edited by hand"}})),
        )
        .await
        .unwrap();
    wait::until(&w.sc.api::<Transaction>(), "rent", WAIT, |t| {
        t.spec.memo.as_deref() == Some("may")
    })
    .await;

    // The server stops answering: the previous revision stays, and the condition says why.
    patch_spec(
        &w,
        "household",
        json!({"url": "http://127.0.0.1:9/household.git"}),
    )
    .await;
    let failed = wait_reason(&w, "household", "Unreachable").await;
    let (_, message) = ready(&failed);
    assert!(
        message.contains("cannot fetch http://127.0.0.1:9/household.git")
            && message.ends_with(&format!("Revision main@sha1:{head} stays applied.")),
        "{message}"
    );
    assert_eq!(failed.status.unwrap().phase, Some(RepoPhase::FetchFailed));
    // The network may come back on its own: under way, not stuck.
    kstatus::expect::<ConfigRepo>(&w.sc.client, &w.sc.ns, "household", "InProgress").await;
    assert_eq!(transactions(&w).await, ["bakery", "rent"]);
    assert_eq!(w.sc.writes().await, 0);
}

#[tokio::test]
async fn bad_yaml_and_forbidden_documents_apply_nothing_and_are_named() {
    let w = world("crepo-refuse").await;
    let alice = attacker(ControlPlane::shared(), &w.sc.ns, "alice").await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let first = work.commit(&[("tx.yaml", &transaction("rent", "may"))], false);
    create(
        &w,
        &alice,
        "household",
        json!({"url": url, "interval": "30s"}),
    )
    .await;
    wait_applied(&w, "household", &first).await;

    let secret =
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\nstringData:\n  token: x\n";
    let binding = "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: alice-admin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n  - kind: User\n    name: alice\n";
    let elsewhere = transaction("escape", "x").replace(
        "  name: escape\n",
        "  name: escape\n  namespace: kube-system\n",
    );
    let bad_yaml =
        "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: [unclosed\n";
    let second = work.commit(
        &[
            (
                "tx.yaml",
                &format!(
                    "{}---\n{}",
                    transaction("rent", "june"),
                    transaction("new", "x")
                ),
            ),
            ("evil/secret.yaml", secret),
            ("evil/rbac.yaml", binding),
            ("evil/elsewhere.yaml", &elsewhere),
            ("broken.yaml", bad_yaml),
        ],
        false,
    );
    let refused = wait_reason(&w, "household", "InvalidDocument").await;
    let (_, message) = ready(&refused);
    for expected in [
        "broken.yaml:4: not valid YAML: unclosed bracket",
        "evil/elsewhere.yaml:5: names namespace \"kube-system\"",
        "evil/rbac.yaml:2: RoleBinding (apiVersion rbac.authorization.k8s.io/v1) is not a kind a ConfigRepo applies",
        "evil/secret.yaml:2: Secret (apiVersion v1) is not a kind",
        &format!("Revision main@sha1:{first} stays applied."),
    ] {
        assert!(message.contains(expected), "{expected} not in: {message}");
    }
    let status = refused.status.unwrap();
    assert_eq!(
        status.last_attempted_revision,
        Some(format!("main@sha1:{second}"))
    );
    assert_eq!(
        status.last_applied_revision,
        Some(format!("main@sha1:{first}"))
    );
    // Nothing of the revision: not the good documents, not the forbidden ones.
    assert_eq!(transactions(&w).await, ["rent"]);
    let rent = w.sc.api::<Transaction>().get("rent").await.unwrap();
    assert_eq!(rent.spec.memo.as_deref(), Some("may"));
    assert!(
        w.sc.api::<Secret>()
            .get_opt("stolen")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        w.sc.api::<RoleBinding>()
            .get_opt("alice-admin")
            .await
            .unwrap()
            .is_none()
    );
    let elsewhere = Api::<Transaction>::namespaced(w.sc.client.clone(), "kube-system");
    assert!(elsewhere.get_opt("escape").await.unwrap().is_none());

    // Valid YAML the API server refuses (categoryId and split together): dry-run catches it,
    // and the good document of the same revision is not applied either.
    let both = transaction("split", "x").replace(
        "  memo: x\n",
        "  memo: x\n  categoryId: cat-a\n  split:\n    - amount: \"1\"\n      categoryId: cat-a\n    - amount: \"2\"\n      categoryId: cat-b\n",
    );
    let third = work.commit(
        &[
            ("tx.yaml", &transaction("rent", "june")),
            ("more/split.yaml", &both),
        ],
        false,
    );
    let refused = wait_reason(&w, "household", "DryRunFailed").await;
    let (_, message) = ready(&refused);
    assert!(
        message.contains(&format!("revision main@sha1:{third}: nothing applied"))
            && message.contains("more/split.yaml:1: Transaction/split: the API server refused it:")
            && message.contains("categoryId"),
        "{message}"
    );
    let rent = w.sc.api::<Transaction>().get("rent").await.unwrap();
    assert_eq!(rent.spec.memo.as_deref(), Some("may"));
    assert_eq!(transactions(&w).await, ["rent"]);
    assert_eq!(w.sc.writes().await, 0);
}

#[tokio::test]
async fn a_repository_cannot_reach_secrets_or_the_controllers_disk() {
    let w = world("crepo-reach").await;
    let alice = attacker(ControlPlane::shared(), &w.sc.ns, "alice").await;
    w.sc.create_budget("household", demo::TOKEN, json!({}))
        .await;
    // A server of alice's that records what it is sent.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(tokio::sync::Mutex::new(Vec::<u8>::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0; 4096];
            if let Ok(n) = tokio::io::AsyncReadExt::read(&mut socket, &mut buf).await {
                record.lock().await.extend_from_slice(&buf[..n]);
            }
        }
    });
    // The YNAB token's Secret, not labelled as Git credentials.
    create(
        &w,
        &alice,
        "exfiltrate",
        json!({"url": format!("http://127.0.0.1:{port}/x.git"), "interval": "30s", "secretRef": {"name": "household-token"}}),
    )
    .await;
    let refused = wait_reason(&w, "exfiltrate", "CredentialsNotOptedIn").await;
    assert!(
        ready(&refused)
            .1
            .contains("is not labelled ledgerops.dev/git-credentials=true")
    );
    // Git credentials of another namespace that do not name this one are not sent either.
    let elsewhere = ControlPlane::shared()
        .namespace("crepo-creds")
        .await
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/x.git");
    let creds: Secret = serde_json::from_value(json!({
        "metadata": {"name": "git", "labels": {"ledgerops.dev/git-credentials": "true"},
                     "annotations": {"ledgerops.dev/git-url-prefixes": format!("http://127.0.0.1:{port}/")}},
        "stringData": {"username": "bot", "password": "git-password-77e1"}
    }))
    .unwrap();
    Api::<Secret>::namespaced(w.sc.client.clone(), &elsewhere)
        .create(&PostParams::default(), &creds)
        .await
        .unwrap();
    create(
        &w,
        &alice,
        "borrow",
        json!({"url": url, "interval": "30s", "secretRef": {"name": "git", "namespace": elsewhere}}),
    )
    .await;
    let refused = wait_reason(&w, "borrow", "CredentialsNotGranted").await;
    let message = ready(&refused).1;
    for needle in [
        format!(
            "Secret git in namespace {elsewhere} has no annotation ledgerops.dev/allowed-namespaces"
        ),
        format!(
            "kubectl annotate secret git -n {elsewhere} --overwrite ledgerops.dev/allowed-namespaces={}",
            w.sc.ns
        ),
    ] {
        assert!(message.contains(&needle), "{needle}: {message}");
    }
    // Another ConfigRepo's cache, and the controller's own disk, through file://.
    let cache = cache_dir();
    for (name, url) in [
        ("cache", format!("file://{}", cache.display())),
        ("disk", "file:///etc".to_owned()),
        ("climb", format!("file://{}/../", w.root().display())),
    ] {
        create(&w, &alice, name, json!({"url": url, "interval": "30s"})).await;
        let refused = wait_reason(&w, name, "UrlNotAllowed").await;
        assert!(ready(&refused).1.contains("must be under"), "{name}");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let sent = String::from_utf8_lossy(&seen.lock().await).to_lowercase();
    assert!(!sent.contains("authorization"), "{sent}");
    let log = w.controller().log();
    assert!(!log.contains(demo::TOKEN), "the token reached the log");
    let repo = repos(&w).get("exfiltrate").await.unwrap();
    assert!(!serde_json::to_string(&repo).unwrap().contains(demo::TOKEN));
    assert_eq!(w.sc.writes().await, 0);
}

#[tokio::test]
async fn prune_keeps_opted_out_objects_and_holds_a_mass_deletion_for_a_person() {
    let w = world("crepo-prune").await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let files = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| (format!("tx/{n}.yaml"), transaction(n, "m")))
            .collect()
    };
    let commit = |names: &[&str]| {
        let owned = files(names);
        let refs: Vec<(&str, &str)> = owned
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        work.commit(&refs, false)
    };
    let first = commit(&["a", "b", "c", "d", "e"]);
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": url, "path": "tx", "interval": "30s"}),
    )
    .await;
    wait_applied(&w, "household", &first).await;
    // One of five goes (20%): pruned.
    let second = commit(&["a", "b", "c", "d"]);
    wait_applied(&w, "household", &second).await;
    assert_eq!(transactions(&w).await, ["a", "b", "c", "d"]);
    // A person keeps `d` whatever the repository says.
    w.sc.annotate::<Transaction>("d", "ledgerops.dev/prune", "disabled")
        .await;
    let third = commit(&["a", "b", "c"]);
    let repo = wait_applied(&w, "household", &third).await;
    assert_eq!(transactions(&w).await, ["a", "b", "c", "d"]);
    assert_eq!(repo.status.unwrap().inventory.len(), 3);
    // The directory moved in the repository: an error, and nothing is pruned.
    let moved = work.commit(&[("elsewhere/a.yaml", &transaction("a", "m"))], false);
    let missing = wait_reason(&w, "household", "PathNotFound").await;
    assert!(
        ready(&missing)
            .1
            .contains(&format!("revision main@sha1:{moved} has no directory tx")),
        "{:?}",
        ready(&missing)
    );
    assert_eq!(transactions(&w).await, ["a", "b", "c", "d"]);
    let only_a = commit(&["a"]);
    let held = wait_reason(&w, "household", "PruneGuard").await;
    let (_, message) = ready(&held);
    assert!(
        // 2 more of the 5 a person last saw, after 1 (e) before: 60%.
        message.contains(&format!(
            "revision main@sha1:{only_a} would delete 2 object(s) (Transaction/b, Transaction/c), 1 were deleted by earlier revisions"
        )) && message.contains("of the 5 objects in force when a person last confirmed")
            && message.contains(&format!("ledgerops.dev/confirm-prune=main@sha1:{only_a}")),
        "{message}"
    );
    assert_eq!(held.status.unwrap().phase, Some(RepoPhase::PruneHeld));
    // Held for a person: Flux's health check reads it as failed, with the guard's words.
    let verdict =
        kstatus::expect::<ConfigRepo>(&w.sc.client, &w.sc.ns, "household", "Failed").await;
    assert!(verdict.message.contains("confirm-prune"), "{verdict:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(transactions(&w).await, ["a", "b", "c", "d"]);
    // A person confirms that exact revision: the prune goes ahead.
    w.sc.annotate::<ConfigRepo>(
        "household",
        "ledgerops.dev/confirm-prune",
        &format!("main@sha1:{only_a}"),
    )
    .await;
    wait_applied(&w, "household", &only_a).await;
    assert_eq!(transactions(&w).await, ["a", "d"]);
    assert_eq!(w.sc.writes().await, 0);
}

#[tokio::test]
async fn a_plan_whose_write_is_in_flight_is_pruned_only_once_it_is_applied() {
    let w = world("crepo-applying").await;
    w.sc.create_writing_budget("household", json!({})).await;
    w.sc.wait_budget("household", BudgetPhase::Ready).await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let plan = format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: CategorizationPlan\nmetadata:\n  name: groceries\nspec:\n  budgetRef:\n    name: household\n  assignments:\n    - transactionId: tx-048\n      categoryId: {}\n",
        category("Groceries")
    );
    let (a, b) = (transaction("a", "m"), transaction("b", "m"));
    // The plan's bulk update lands in YNAB and its answer is held back until the repository has
    // dropped the plan.
    w.sc.hold_next_patch_for(Duration::from_secs(20)).await;
    let first = work.commit(
        &[
            ("tx/a.yaml", &a),
            ("tx/b.yaml", &b),
            ("plans/groceries.yaml", &plan),
        ],
        false,
    );
    // An hour's interval: every sync below is one the test asks for.
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": url, "interval": "1h"}),
    )
    .await;
    wait_applied(&w, "household", &first).await;
    w.sc.wait_plan("groceries", PlanPhase::Applying).await;
    w.sc.wait_patches(1).await;

    // The repository drops the plan while its write is in flight: the plan stays, still tracked.
    let second = work.commit(&[("tx/a.yaml", &a), ("tx/b.yaml", &b)], false);
    w.sc.annotate::<ConfigRepo>("household", "ledgerops.dev/sync-requested-at", "1")
        .await;
    let repo = wait_applied(&w, "household", &second).await;
    let plans = w.sc.api::<CategorizationPlan>();
    let applying = plans.get("groceries").await.unwrap();
    assert_eq!(applying.status.unwrap().phase, Some(PlanPhase::Applying));
    let tracked = |repo: ConfigRepo| -> Vec<String> {
        let inventory = repo.status.unwrap().inventory;
        inventory
            .iter()
            .map(|e| format!("{}/{}", e.kind, e.name))
            .collect()
    };
    assert_eq!(
        tracked(repo),
        [
            "CategorizationPlan/groceries",
            "Transaction/a",
            "Transaction/b"
        ]
    );
    // And the sync says what it keeps, and why.
    let kept = "kept until their write ends 1 [CategorizationPlan/groceries]";
    let log = w.controller().log();
    assert!(
        log.lines()
            .any(|l| l.contains(&w.sc.ns) && l.contains(kept)),
        "no note naming the kept plan"
    );

    // The write ends (the answer is lost, YNAB is read again: it landed); the next sync prunes.
    let applied = w.sc.wait_plan("groceries", PlanPhase::Applied).await;
    let operation = applied.status.unwrap().operation_id.unwrap();
    w.sc.annotate::<ConfigRepo>("household", "ledgerops.dev/sync-requested-at", "2")
        .await;
    wait::gone(&plans, "groceries").await;
    let repo = wait::until(&repos(&w), "household", WAIT, |r| {
        r.status.as_ref().is_some_and(|s| s.inventory.len() == 2)
    })
    .await;
    assert_eq!(tracked(repo), ["Transaction/a", "Transaction/b"]);

    // Deleting the plan changed nothing in YNAB, and its journal stays (no plan owns it).
    assert_eq!(w.sc.requests(PATCH).await, 1);
    assert_eq!(
        w.sc.ynab_category("tx-048").await,
        Some(category("Groceries"))
    );
    let journal =
        w.sc.api::<ConfigMap>()
            .get(&format!("ledgerops-journal-{operation}"))
            .await
            .expect("the journal's completion record");
    assert!(
        journal
            .metadata
            .owner_references
            .unwrap_or_default()
            .is_empty()
    );
}

#[tokio::test]
async fn gitea_over_http_with_a_token_push_webhook_force_push_and_deleted_branch() {
    let gitea = Gitea::shared();
    let w = world("crepo-gitea").await;
    let repo = gitea_repo();
    let admin = gitea.admin();
    let clone = format!("{}/{repo}.git", gitea.url());
    let authed = clone.replacen(
        "://",
        &format!("://{}:{}@", admin.login(), admin.token()),
        1,
    );
    let work = Work::new(w.root().join("work"), &authed);
    work.git(&["fetch", "-q", &authed, "main"]);
    work.git(&["reset", "-q", "--hard", "FETCH_HEAD"]);
    let first = work.commit(
        &[
            ("tx/a.yaml", &transaction("a", "m")),
            ("tx/b.yaml", &transaction("b", "m")),
        ],
        false,
    );
    gitea_api::add_hook(&repo, w.controller().webhook_url(), SECRET, &["push"]).await;

    // A private repository: without credentials, or with a Secret that did not opt in, nothing.
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "gitea"},
        "stringData": {"username": admin.login(), "token": admin.token()},
    }))
    .unwrap();
    w.sc.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": clone, "interval": "1h", "secretRef": {"name": "gitea"}}),
    )
    .await;
    wait_reason(&w, "household", "CredentialsNotOptedIn").await;
    let label = json!({"metadata": {
        "labels": {"ledgerops.dev/git-credentials": "true"},
        "annotations": {"ledgerops.dev/git-url-prefixes": format!("{}/", gitea.url())},
    }});
    w.sc.api::<Secret>()
        .patch("gitea", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .unwrap();
    w.sc.annotate::<ConfigRepo>("household", "ledgerops.dev/sync-requested-at", "1")
        .await;
    wait_applied(&w, "household", &first).await;
    assert_eq!(transactions(&w).await, ["a", "b"]);

    // A push: the webhook syncs at once (the interval is an hour).
    let second = work.commit(
        &[
            ("tx/a.yaml", &transaction("a", "m")),
            ("tx/b.yaml", &transaction("b", "n")),
            ("tx/c.yaml", &transaction("c", "m")),
        ],
        false,
    );
    wait_applied(&w, "household", &second).await;
    assert_eq!(transactions(&w).await, ["a", "b", "c"]);

    // A force-push rewriting that commit: held until a person confirms it, then followed, and
    // `c` (no longer declared) pruned.
    let rewritten = work.commit(
        &[
            ("tx/a.yaml", &transaction("a", "m")),
            ("tx/b.yaml", &transaction("b", "o")),
        ],
        true,
    );
    assert_ne!(rewritten, second);
    let held = wait_reason(&w, "household", "HistoryRewritten").await;
    assert_eq!(held.status.unwrap().phase, Some(RepoPhase::RewriteHeld));
    assert_eq!(transactions(&w).await, ["a", "b", "c"]);
    w.sc.annotate::<ConfigRepo>(
        "household",
        "ledgerops.dev/confirm-rewrite",
        &format!("main@sha1:{rewritten}"),
    )
    .await;
    wait_applied(&w, "household", &rewritten).await;
    assert_eq!(transactions(&w).await, ["a", "b"]);
    let b = w.sc.api::<Transaction>().get("b").await.unwrap();
    assert_eq!(b.spec.memo.as_deref(), Some("o"));

    // A branch of its own, then deleted: Ready=False naming it, and nothing is pruned.
    work.git(&["push", "-q", &authed, "main:refs/heads/live"]);
    patch_spec(&w, "household", json!({"branch": "live"})).await;
    wait_reason(&w, "household", "Applied").await;
    work.git(&["push", "-q", &authed, ":refs/heads/live"]);
    w.sc.annotate::<ConfigRepo>("household", "ledgerops.dev/sync-requested-at", "2")
        .await;
    let gone = wait_reason(&w, "household", "BranchNotFound").await;
    let (_, message) = ready(&gone);
    assert!(
        message.contains("has no branch live")
            && message.ends_with(&format!("Revision live@sha1:{rewritten} stays applied.")),
        "{message}"
    );
    assert!(!message.contains(admin.token()));
    assert_eq!(transactions(&w).await, ["a", "b"]);
    assert!(
        !w.controller().log().contains(admin.token()),
        "the Git token reached the log"
    );
    assert_eq!(w.sc.writes().await, 0);
}

#[tokio::test]
async fn the_example_repository_applies() {
    let w = world("crepo-example").await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let example = ledgerops_e2e::example("config-repo");
    let files: Vec<(String, String)> = [
        "budget.yaml",
        "transactions/bakery.yaml",
        "plans/2026-05-groceries.yaml",
        "rules/rail-co.yaml",
    ]
    .iter()
    .map(|f| {
        (
            f.to_string(),
            std::fs::read_to_string(example.join(f)).unwrap(),
        )
    })
    .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let head = work.commit(&refs, false);
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": url, "interval": "30s", "authority": "Govern"}),
    )
    .await;
    let repo = wait_applied(&w, "household", &head).await;
    let cache = cache_dir().join(repo.metadata.uid.clone().unwrap());
    assert_eq!(repo.status.unwrap().inventory.len(), 4);
    assert_eq!(transactions(&w).await, ["bakery"]);
    // The merged rule is blessed by its repository, and the controller says it may act.
    let rules: Api<CategorizationRule> = Api::namespaced(w.sc.client.clone(), &w.sc.ns);
    let rule = wait::until(&rules, "rail-co", Duration::from_secs(30), |r| {
        r.status.as_ref().and_then(|s| s.phase) == Some(RulePhase::Blessed)
    })
    .await;
    assert_eq!(rule.spec.blessing.unwrap().by, "configrepo:household");

    // Deleted, its fetched history goes too; what it applied stays (prune is per revision).
    assert!(
        cache.is_dir(),
        "{} holds the fetched history",
        cache.display()
    );
    Api::<ConfigRepo>::namespaced(w.sc.client.clone(), &w.sc.ns)
        .delete("household", &Default::default())
        .await
        .unwrap();
    eventually(
        "the cache is removed",
        Duration::from_secs(30),
        async || !cache.exists(),
    )
    .await;
    assert_eq!(transactions(&w).await, ["bakery"]);
}

#[tokio::test]
async fn a_service_account_limits_what_a_repository_may_do() {
    let w = world("crepo-sa").await;
    let (_, url) = bare(w.root(), "household.git");
    let work = Work::new(w.root().join("work"), &url);
    let head = work.commit(
        &[("bakery.yaml", &transaction("bakery", "from the repo"))],
        false,
    );
    let plane = ControlPlane::shared();
    let ns = w.sc.ns.as_str();
    plane
        .kubectl_ok(&["create", "serviceaccount", "repo-writer", "-n", ns])
        .unwrap();
    create(
        &w,
        &w.sc.client,
        "household",
        json!({"url": url, "interval": "30s", "serviceAccountName": "repo-writer"}),
    )
    .await;

    // An account with no rights: the API server refuses the dry run as that account.
    let refused = wait_reason(&w, "household", "DryRunFailed").await;
    let (_, message) = ready(&refused);
    assert!(
        message.contains(&format!("system:serviceaccount:{ns}:repo-writer"))
            && message.contains("bakery.yaml"),
        "{message}"
    );
    assert!(transactions(&w).await.is_empty(), "nothing applied");

    // Given ledgerops-edit, the same revision applies.
    install_people_roles(&plane.client().await.unwrap()).await;
    plane
        .kubectl_ok(&[
            "create",
            "rolebinding",
            "repo-writer-edit",
            "-n",
            ns,
            "--clusterrole=ledgerops-edit",
            &format!("--serviceaccount={ns}:repo-writer"),
        ])
        .unwrap();
    wait_applied(&w, "household", &head).await;
    assert_eq!(transactions(&w).await, ["bakery"]);
}

/// A sync cut off between applying a revision and recording it (the controller killed, its
/// status write refused, or a sync that read a status the watch had not delivered yet) leaves
/// objects the inventory does not name. They are still this repository's: the controller alone
/// may write its name as their proposer. Before, the next sync called them foreign and held
/// the repository on `Conflict` for good (seen in CI as a ConfigRepo that never got Ready).
#[tokio::test]
async fn objects_a_cut_off_sync_left_unrecorded_are_still_the_repositorys() {
    let w = world("crepo-cutoff").await;
    let (_, url) = bare(w.root(), "cutoff.git");
    let work = Work::new(w.root().join("cutoff-work"), &url);
    let files = [
        ("a.yaml", transaction("cut-a", "m")),
        ("b.yaml", transaction("cut-b", "m")),
    ];
    let pairs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let head = work.commit(&pairs, false);
    create(
        &w,
        &w.sc.client,
        "cutoff",
        json!({"url": url, "interval": "30s"}),
    )
    .await;
    wait_applied(&w, "cutoff", &head).await;
    // What a cut-off sync leaves: the objects, and a status that never recorded them (written
    // here as the controller's user, the only one admission lets write it).
    let lost = json!({"status": {"inventory": [], "lastAppliedRevision": null}});
    repos(&w)
        .patch_status("cutoff", &PatchParams::default(), &Patch::Merge(&lost))
        .await
        .unwrap();
    let repo = wait_applied(&w, "cutoff", &head).await;
    let names: Vec<String> = repo
        .status
        .unwrap()
        .inventory
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(names, ["cut-a", "cut-b"]);
    assert_eq!(transactions(&w).await, ["cut-a", "cut-b"]);
    assert_eq!(w.sc.writes().await, 0);
}
