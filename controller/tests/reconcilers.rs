//! The Budget and Transaction reconcilers in process, on a real kube-apiserver and the YNAB
//! simulator: the controllers and their shared watches as `run` wires them, without the rest
//! of `ledgerops run` (no HTTP server, lease or process). Each test has a control plane of its
//! own, since its controllers act on every namespace.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Resource, ResourceExt};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::k8s::watches::Watches;
use ledgerops::logic::budget::api_url::ApiUrlAllowlist;
use ledgerops::reconcile::{self, Context};
use ledgerops_testenv::ControlPlane;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use ynab_sim::{RunningSim, SimConfig, Simulator, demo};

const NS: &str = "household";
const PATCH: &str = "PATCH /v1/plans/{plan_id}/transactions";

/// A control plane with the CRDs, the Budget and Transaction controllers running in this
/// process, and the simulator with the demo household.
struct Rig {
    _plane: ControlPlane,
    client: kube::Client,
    sim: RunningSim,
    controllers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.controllers.iter().for_each(|c| c.abort());
    }
}

async fn rig() -> Rig {
    rig_after(Archive::default()).await
}

/// Objects of another namespace made before the controllers start: ApprovalRequests and
/// Transactions of a Budget that is not there.
#[derive(Default)]
struct Archive {
    requests: usize,
    transactions: usize,
}

/// A rig whose controllers start with `requests` ApprovalRequests already in the cluster, as
/// after a restart of a controller that has been asking for a while.
async fn rig_after(archive: Archive) -> Rig {
    let plane = ControlPlane::start()
        .await
        .expect("the control plane starts");
    let kubeconfig = Kubeconfig::read_from(plane.kubeconfig()).unwrap();
    let options = KubeConfigOptions {
        context: Some("admin".into()),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .unwrap();
    let client = kube::Client::try_from(config.clone()).unwrap();
    install_crds(&client).await;
    let namespace: Namespace = from(json!({"metadata": {"name": NS}}));
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    create_archive(&client, &archive).await;
    let sim = Simulator::start(SimConfig {
        fixture: Some(demo::generate()),
        ..SimConfig::default()
    })
    .await
    .unwrap();

    let api_urls = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"]).unwrap();
    let mut watches = Watches::new(&client, None);
    let ctx = Arc::new(Context::new(client.clone(), config, &watches, api_urls));
    let budgets = reconcile::budget::run(ctx.clone(), &mut watches);
    let transactions = reconcile::transaction::run(ctx, &watches);
    let mut controllers = watches.spawn();
    controllers.push(tokio::spawn(async move {
        futures::join!(budgets, transactions);
    }));
    Rig {
        _plane: plane,
        client,
        sim,
        controllers,
    }
}

/// The CRDs as `crdgen` renders them, applied and Established.
async fn install_crds(client: &kube::Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in ledgerops::api::crds() {
        let name = crd.name_any();
        let apply = PatchParams::apply("reconcilers-test").force();
        api.patch(&name, &apply, &Patch::Apply(&crd)).await.unwrap();
        let established = await_condition(api.clone(), &name, conditions::is_crd_established());
        tokio::time::timeout(Duration::from_secs(30), established)
            .await
            .expect("Established within 30 s")
            .unwrap();
    }
}

/// `count` ApprovalRequests in namespace `archive`, a few at a time.
async fn create_archive(client: &kube::Client, archive: &Archive) {
    if archive.requests + archive.transactions == 0 {
        return;
    }
    let namespace: Namespace = from(json!({"metadata": {"name": "archive"}}));
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let requests: Api<ApprovalRequest> = Api::namespaced(client.clone(), "archive");
    futures::stream::iter(0..archive.requests)
        .for_each_concurrent(16, |i| {
            let api = requests.clone();
            async move {
                let request: ApprovalRequest = from(json!({
                    "apiVersion": "ledgerops.dev/v1alpha1", "kind": "ApprovalRequest",
                    "metadata": {"name": format!("old-{i}")},
                    "spec": {
                        "budgetRef": {"name": "household"},
                        "subject": {"kind": "Transaction", "name": format!("gone-{i}")},
                        "previewHash": "0123456789abcdef", "summary": "an old question",
                        "reason": "at or above the auto-approve limit",
                        "expiresAt": "2026-01-01T00:00:00Z"
                    }
                }));
                api.create(&PostParams::default(), &request).await.unwrap();
            }
        })
        .await;
    let transactions: Api<Transaction> = Api::namespaced(client.clone(), "archive");
    futures::stream::iter(0..archive.transactions)
        .for_each_concurrent(16, |i| {
            let api = transactions.clone();
            async move {
                let tx: Transaction = from(json!({
                    "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
                    "metadata": {"name": format!("old-{i}")},
                    "spec": {"budgetRef": {"name": "household"}, "transactionId": format!("tx-{i}"),
                        "categoryId": category("Groceries")}
                }));
                api.create(&PostParams::default(), &tx).await.unwrap();
            }
        })
        .await;
}

fn from<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

fn category(name: &str) -> String {
    demo::category(name)
}

impl Rig {
    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), NS)
    }

    /// A Budget writing without asking anyone, its token Secret, and waits until it is Ready.
    async fn writing_budget(&self) {
        let secret: Secret = from(json!({
            "metadata": {"name": "token", "labels": {"ledgerops.dev/ynab-token": "true"}},
            "stringData": {"token": demo::TOKEN}
        }));
        self.api::<Secret>()
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        let budget: Budget = from(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
            "metadata": {"name": "household"},
            "spec": {
                "planId": demo::PLAN_ID, "tokenSecretRef": {"name": "token"},
                "apiUrl": self.sim.api_url(),
                "writes": {"enabled": true, "batchWindow": "300ms", "maxBatchSize": 1000},
                "approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}
            }
        }));
        self.api::<Budget>()
            .create(&PostParams::default(), &budget)
            .await
            .unwrap();
        self.until::<Budget>("household", |b| {
            b.status.as_ref().and_then(|s| s.phase) == Some(BudgetPhase::Ready)
        })
        .await;
    }

    async fn transaction(&self, name: &str, budget: &str, id: &str, category_name: &str) {
        let tx: Transaction = from(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
            "metadata": {"name": name},
            "spec": {"budgetRef": {"name": budget}, "transactionId": id, "categoryId": category(category_name)}
        }));
        self.api::<Transaction>()
            .create(&PostParams::default(), &tx)
            .await
            .unwrap();
    }

    async fn until<K>(&self, name: &str, done: impl Fn(&K) -> bool) -> K
    where
        K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
    {
        let api = self.api::<K>();
        for _ in 0..600 {
            if let Some(object) = api.get_opt(name).await.unwrap()
                && done(&object)
            {
                return object;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "{name}: not there within a minute: {:?}",
            api.get_opt(name).await
        );
    }

    async fn phase_of(&self, name: &str, phase: TransactionPhase) -> Transaction {
        self.until::<Transaction>(name, |t| {
            t.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    async fn requests(&self) -> BTreeMap<String, u64> {
        self.sim.control().counters().await.unwrap().by_endpoint
    }
}

#[tokio::test]
async fn two_transactions_converge_in_one_write_and_a_resync_rewrites_nothing() {
    let rig = rig().await;
    rig.writing_budget().await;
    rig.sim.control().reset_counters().await.unwrap();
    rig.transaction("bakery", "household", "tx-048", "Groceries")
        .await;
    rig.transaction("rail", "household", "tx-049", "Transport")
        .await;
    rig.phase_of("bakery", TransactionPhase::Converged).await;
    rig.phase_of("rail", TransactionPhase::Converged).await;
    assert_eq!(rig.requests().await.get(PATCH), Some(&1), "one bulk update");
    // Settled: the write's own follow-up (its answer moved YNAB's server knowledge) is done.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let bakery = rig.api::<Transaction>().get("bakery").await.unwrap();
    let rail = rig.api::<Transaction>().get("rail").await.unwrap();

    // A resync the person asks for reads YNAB again; the reconcilers find nothing to do, and
    // write neither to YNAB nor to the API server.
    let synced = |b: &Budget| b.status.as_ref().and_then(|s| s.last_sync_time.clone());
    let before = synced(&rig.api::<Budget>().get("household").await.unwrap());
    rig.sim.control().reset_counters().await.unwrap();
    let ask = json!({"metadata": {"annotations": {"ledgerops.dev/sync-requested-at": "2026-12-01T00:00:00Z"}}});
    rig.api::<Budget>()
        .patch("household", &PatchParams::default(), &Patch::Merge(&ask))
        .await
        .unwrap();
    rig.until::<Budget>("household", |b| synced(b) != before)
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let requests = rig.requests().await;
    assert_eq!(requests.get(PATCH), None, "{requests:?}");
    for (name, was) in [("bakery", bakery), ("rail", rail)] {
        let now = rig.api::<Transaction>().get(name).await.unwrap();
        assert_eq!(
            now.resource_version(),
            was.resource_version(),
            "{name} was written again: {}\nwas: {}",
            serde_json::to_string(&now.status).unwrap(),
            serde_json::to_string(&was.status).unwrap()
        );
    }
}

#[tokio::test]
async fn a_transaction_of_a_missing_budget_is_invalid_and_nothing_is_sent() {
    let rig = rig().await;
    rig.transaction("bakery", "nobody", "tx-048", "Groceries")
        .await;
    let invalid = rig.phase_of("bakery", TransactionPhase::Invalid).await;
    let ready = invalid
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .expect("a Ready condition");
    assert_eq!(ready.status, "False");
    assert!(
        ready.message.contains("Budget nobody") && ready.message.contains(NS),
        "{}",
        ready.message
    );
    assert_eq!(rig.sim.control().counters().await.unwrap().total, 0);
}

/// A write is handed to the batcher and its answer wakes the Transaction: a spec changed while
/// the write was in flight is written right after its outcome is recorded, not at the next
/// resync.
#[tokio::test]
async fn a_spec_changed_while_its_write_is_in_flight_is_written_next() {
    let rig = rig().await;
    rig.writing_budget().await;
    rig.sim.control().reset_counters().await.unwrap();
    // Every YNAB answer slow: the first write stays in flight while the spec changes.
    rig.sim.control().set_latency(2_000).await.unwrap();
    rig.transaction("bakery", "household", "tx-048", "Groceries")
        .await;
    rig.phase_of("bakery", TransactionPhase::Writing).await;
    let change = json!({"spec": {"categoryId": category("Transport")}});
    rig.api::<Transaction>()
        .patch("bakery", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .unwrap();
    rig.sim.control().set_latency(0).await.unwrap();

    let applied = |t: &Transaction| {
        t.status
            .as_ref()
            .and_then(|s| s.applied.as_ref())
            .and_then(|a| a.category_id.clone())
    };
    let transport = Some(category("Transport"));
    let bakery = rig
        .until::<Transaction>("bakery", |t| {
            t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Converged)
                && applied(t) == transport
        })
        .await;
    assert!(bakery.status.unwrap().intent.is_none());
    let in_ynab = rig
        .sim
        .control()
        .transaction(demo::PLAN_ID, "tx-048")
        .await
        .unwrap();
    assert_eq!(in_ynab.summary.category_id, transport);
    let requests = rig.requests().await;
    assert_eq!(requests.get(PATCH), Some(&2), "{requests:?}");
}

/// A controller started after `archive`, writing one Transaction in one bulk update.
async fn writes_after(archive: Archive) {
    let rig = rig_after(archive).await;
    rig.writing_budget().await;
    rig.sim.control().reset_counters().await.unwrap();
    rig.transaction("bakery", "household", "tx-048", "Groceries")
        .await;
    rig.phase_of("bakery", TransactionPhase::Converged).await;
    assert_eq!(rig.requests().await.get(PATCH), Some(&1), "one bulk update");
}

/// A watch hands its listed objects to every subscriber, and the reconcilers read theirs only
/// once the Budgets and ApprovalRequests are known: with more requests than a subscriber
/// buffers, "known" must not wait for that hand-over, or a restarted controller waits on
/// itself and nothing is reconciled again (the hour's soak found it after 1,100 requests).
#[tokio::test]
async fn a_restart_among_more_requests_than_a_watch_buffers_still_reconciles() {
    writes_after(Archive {
        requests: 1_500,
        ..Archive::default()
    })
    .await;
}

/// The same with more Transactions than a subscriber buffers: the Transaction reconcilers read
/// what every Transaction and plan last wrote, so they wait until both kinds are listed, and
/// their own kind's hand-over must not wait on them (the hour's soak found it after 1,024
/// Transactions: a new leader reconciled no Transaction and no plan).
#[tokio::test]
async fn a_restart_among_more_transactions_than_a_watch_buffers_still_reconciles() {
    writes_after(Archive {
        transactions: 1_500,
        ..Archive::default()
    })
    .await;
}
