//! ConfigRepos in a test namespace: the documents a repository declares, creating a ConfigRepo,
//! and waiting until it has applied a commit.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::config_repo::{ConfigRepo, RepoPhase};
use ledgerops::api::transaction::Transaction;
use serde_json::{Value, json};

use crate::scenario::WAIT;
use crate::wait;

/// A Transaction document for the repository, on the Budget `household`.
pub fn transaction(name: &str, memo: &str) -> String {
    format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: {name}\nspec:\n  budgetRef:\n    name: household\n  transactionId: tx-{name}\n  memo: {memo}\n"
    )
}

/// Creates the ConfigRepo `name` in `namespace` as `client`, in its user's own name
/// (`ledgerops.dev/proposed-by`, as admission requires).
pub async fn create(client: &Client, namespace: &str, name: &str, spec: Value) {
    let user = whoami(client).await;
    let repo: ConfigRepo = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ConfigRepo",
        "metadata": {"name": name, "annotations": {PROPOSED_BY: user}}, "spec": spec,
    }))
    .unwrap();
    Api::<ConfigRepo>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &repo)
        .await
        .unwrap();
}

/// The names of the Transactions `api` lists, sorted.
pub async fn transaction_names(api: &Api<Transaction>) -> Vec<String> {
    let mut names: Vec<String> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|t| t.name_any())
        .collect();
    names.sort();
    names
}

/// Waits until the ConfigRepo `name` has applied `commit` of `main` and is Ready.
pub async fn wait_applied(api: &Api<ConfigRepo>, name: &str, commit: &str) -> ConfigRepo {
    let revision = format!("main@sha1:{commit}");
    until_synced(api, name, |r| {
        r.status.as_ref().is_some_and(|s| {
            s.last_applied_revision.as_deref() == Some(revision.as_str())
                && s.phase == Some(RepoPhase::Ready)
        })
    })
    .await
}

/// Waits until the ConfigRepo `name` satisfies `done`, asking it to sync every 2 s meanwhile
/// (a ConfigRepo fetches every 30 s at the most often; a person would run `kubectl ledgerops
/// sync`, which sets the same annotation).
pub async fn until_synced(
    api: &Api<ConfigRepo>,
    name: &str,
    done: impl Fn(&ConfigRepo) -> bool,
) -> ConfigRepo {
    let poke = async {
        for i in 0u64.. {
            let now = format!("{i}-{:?}", std::time::SystemTime::now());
            let patch = json!({"metadata": {"annotations": {SYNC_REQUESTED: now}}});
            // The ConfigRepo may not exist yet, or be gone: the wait says what matters.
            let _ = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await;
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
        }
    };
    tokio::select! {
        repo = wait::until(api, name, WAIT, done) => repo,
        () = poke => unreachable!("the pokes never end"),
    }
}

/// The annotation that asks a ConfigRepo (or a Budget) to sync now.
const SYNC_REQUESTED: &str = "ledgerops.dev/sync-requested-at";

/// The user `client` is authenticated as (a SelfSubjectReview, what `kubectl auth whoami` says).
pub async fn whoami(client: &Client) -> String {
    let review = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("a SelfSubjectReview");
    review
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .expect("the API server names the user")
}
