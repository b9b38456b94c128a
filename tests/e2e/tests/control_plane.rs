//! The test control plane itself: independent planes side by side, token users, clean stop, and
//! the controllers of kube-controller-manager (garbage collection, namespace deletion, role
//! aggregation) acting as in a cluster.

use std::fmt::Debug;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use kube::api::{Api, DeleteParams, PostParams};
use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{PATCH, Scenario, demo_with_uncategorised};
use ledgerops_testenv::{ControlPlane, Storage, USERS};
use serde::de::DeserializeOwned;
use serde_json::json;

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("url ends with a port")
}

#[tokio::test]
async fn planes_are_independent_and_stop_when_dropped() {
    let (a, b) = tokio::join!(
        ControlPlane::private(Storage::Memory),
        ControlPlane::private(Storage::Memory)
    );
    let (a, b) = (a.expect("first plane"), b.expect("second plane"));
    assert_ne!(a.url(), b.url());

    // The same name in both proves they do not share a store.
    for plane in [&a, &b] {
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "same"}})).unwrap();
        let api = Api::<Namespace>::all(plane.client().await.unwrap());
        api.create(&PostParams::default(), &ns)
            .await
            .expect("namespace in a fresh store");
    }

    let port = port_of(a.url());
    let dir = a.dir().to_owned();
    let pids = a.pids();
    assert_eq!(
        pids.len(),
        3,
        "kube-controller-manager, kube-apiserver and kine"
    );
    drop(a);
    // SIGKILL is delivered at once, but the kernel closes the socket a moment later.
    let mut closed = false;
    for _ in 0..50 {
        if TcpStream::connect(("127.0.0.1", port)).is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        closed,
        "the API server still listens on {port} after its ControlPlane was dropped"
    );
    assert!(!dir.exists(), "{} was not removed", dir.display());
    // The waiting thread reaps each killed child, and its /proc entry goes with it.
    for pid in pids {
        let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
        let start = Instant::now();
        while proc.exists() && start.elapsed() < Duration::from_secs(5) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!proc.exists(), "process {pid} outlived its ControlPlane");
    }
    assert!(
        b.client().await.unwrap().apiserver_version().await.is_ok(),
        "dropping one plane stopped the other"
    );
}

/// A plane on disk keeps every object across a store restart (the soak's "store restarts"
/// fault), and one killed store is told apart from one running.
#[tokio::test]
async fn a_store_on_disk_is_killed_and_started_again_with_every_object_kept() {
    let mut plane = ControlPlane::start_private(Storage::Disk).await.unwrap();
    let ns = plane.namespace("kept").await.unwrap();
    assert!(!plane.store_exited());
    let took = plane.restart_store().await.expect("the store restarts");
    assert!(!plane.store_exited());
    let api = Api::<Namespace>::all(plane.client().await.unwrap());
    let got = api
        .get(&ns)
        .await
        .expect("the namespace outlived its store");
    assert_eq!(got.metadata.name.as_deref(), Some(ns.as_str()));
    // And the API server writes through the new store.
    plane
        .namespace("after")
        .await
        .expect("a write after the restart");
    let log = std::fs::read_to_string(plane.dir().join("kine.log")).unwrap();
    assert!(
        log.matches("Kine available at").count() >= 2,
        "one log keeps both runs of the store (took {took:?}):\n{log}"
    );
}

async fn whoami(client: kube::Client) -> String {
    let review: SelfSubjectReview = serde_json::from_value(serde_json::json!({})).unwrap();
    let me = Api::<SelfSubjectReview>::all(client)
        .create(&PostParams::default(), &review)
        .await
        .unwrap();
    me.status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .unwrap_or_default()
}

/// Each test user is who it says, and only admin is privileged.
async fn assert_users(plane: &ControlPlane) {
    for user in USERS {
        assert_eq!(whoami(plane.client_as(user).await.unwrap()).await, *user);
    }
    // RBAC is on, so alice may not list namespaces.
    let alice = Api::<Namespace>::all(plane.client_as("alice").await.unwrap());
    let err = alice
        .list(&Default::default())
        .await
        .expect_err("alice has no role");
    assert!(err.to_string().contains("forbidden"), "{err}");
    assert!(plane.client_as("mallory").await.is_err());
}

#[tokio::test]
async fn token_users_are_authenticated_and_authorized_as_themselves() {
    assert_users(ControlPlane::shared()).await;
}

/// `LEDGEROPS_TEST_KUBECONFIG` hands the suites an existing cluster; a private plane's kubeconfig
/// stands in for the user's k3d cluster here.
#[tokio::test]
async fn an_existing_cluster_is_used_as_it_is_with_the_same_users() {
    let theirs = ControlPlane::private(Storage::Memory).await.unwrap();
    let ours = ControlPlane::existing(theirs.kubeconfig()).await.unwrap();
    assert_eq!(ours.url(), theirs.url());
    assert!(ours.pids().is_empty(), "nothing was started");
    assert_users(&ours).await;
    let bob = ours
        .kubectl_ok(&[
            "--context",
            "bob",
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ])
        .unwrap();
    assert_eq!(bob, "bob", "kubectl's contexts are the test users too");

    // A ServiceAccount's token works against it (the Helm suite runs the controller so).
    let ns = ours.namespace("robots").await.unwrap();
    ours.kubectl_ok(&["create", "serviceaccount", "robot", "-n", &ns])
        .unwrap();
    let token = ours
        .kubectl_ok(&["create", "token", "robot", "-n", &ns])
        .unwrap();
    let path = ours.kubeconfig_with_token("robot", token.trim()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&path).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let robot = kube::Client::try_from(config).unwrap();
    assert_eq!(
        whoami(robot).await,
        format!("system:serviceaccount:{ns}:robot")
    );

    // ledgerops itself runs on it: a Budget syncs and a Transaction converges in one PATCH.
    let s = Scenario::new(&ours, "existing", demo_with_uncategorised(0)).await;
    let ledgerops = Ledgerops::start(&ours).await;
    s.create_writing_budget("household", json!({})).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 1);
    drop(ledgerops);

    // Letting go of it stops nothing.
    drop(ours);
    assert!(
        theirs
            .client()
            .await
            .unwrap()
            .apiserver_version()
            .await
            .is_ok()
    );
}

const LIMIT: Duration = Duration::from_secs(30);

/// Creates ConfigMap `owner` and ConfigMap `dependent` owned by it (by uid, blocking the owner's
/// foreground deletion), in `ns`.
async fn owner_and_dependent(plane: &ControlPlane, ns: &str) -> Api<ConfigMap> {
    let api = Api::<ConfigMap>::namespaced(plane.client().await.unwrap(), ns);
    let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owner"}})).unwrap();
    let owner = api.create(&PostParams::default(), &owner).await.unwrap();
    let dependent: ConfigMap = serde_json::from_value(json!({"metadata": {
        "name": "dependent",
        "ownerReferences": [{
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner.metadata.uid.unwrap(),
            "blockOwnerDeletion": true,
        }],
    }}))
    .unwrap();
    api.create(&PostParams::default(), &dependent)
        .await
        .unwrap();
    api
}

/// Polls until `name` no longer exists, failing with the last state seen after [`LIMIT`].
async fn until_gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + DeserializeOwned + Debug,
{
    let start = Instant::now();
    let mut last = None;
    while start.elapsed() < LIMIT {
        match api.get_opt(name).await.unwrap() {
            None => return,
            Some(obj) => last = Some(obj),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} still exists after {LIMIT:?}: {last:#?}");
}

/// kubectl with a bound on its wait: without a controller to finish a deletion, kubectl waits
/// for ever.
fn kubectl_delete(plane: &ControlPlane, args: &[&str]) {
    let mut all = vec!["delete", "--wait=true", "--timeout=60s"];
    all.extend_from_slice(args);
    let started = Instant::now();
    plane
        .kubectl_ok(&all)
        .unwrap_or_else(|e| panic!("after {:?}: {e}", started.elapsed()));
}

#[tokio::test]
async fn a_dependent_is_collected_once_its_owner_is_deleted() {
    let plane = ControlPlane::shared();
    let ns = plane.namespace("gc").await.unwrap();
    let api = owner_and_dependent(plane, &ns).await;
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    until_gone(&api, "dependent").await;
}

#[tokio::test]
async fn a_foreground_delete_removes_the_dependent_first_and_completes() {
    let plane = ControlPlane::shared();
    let ns = plane.namespace("gc-foreground").await.unwrap();
    let api = owner_and_dependent(plane, &ns).await;
    kubectl_delete(
        plane,
        &["configmap", "owner", "-n", &ns, "--cascade=foreground"],
    );
    assert!(api.get_opt("owner").await.unwrap().is_none());
    assert!(
        api.get_opt("dependent").await.unwrap().is_none(),
        "the owner went before its blocking dependent"
    );
}

#[tokio::test]
async fn an_orphaning_delete_completes_and_keeps_the_dependent() {
    let plane = ControlPlane::shared();
    let ns = plane.namespace("gc-orphan").await.unwrap();
    let api = owner_and_dependent(plane, &ns).await;
    kubectl_delete(
        plane,
        &["configmap", "owner", "-n", &ns, "--cascade=orphan"],
    );
    assert!(api.get_opt("owner").await.unwrap().is_none());
    let dependent = api
        .get_opt("dependent")
        .await
        .unwrap()
        .expect("an orphaned dependent stays");
    let owners = dependent.metadata.owner_references.unwrap_or_default();
    assert!(
        owners.is_empty(),
        "the reference to the deleted owner stays: {owners:?}"
    );
}

#[tokio::test]
async fn a_namespace_deletion_removes_its_content_and_completes() {
    let plane = ControlPlane::shared();
    let ns = plane.namespace("ns-delete").await.unwrap();
    let _ = owner_and_dependent(plane, &ns).await;
    // The namespace controller waits 5 s after a deletion before it starts.
    kubectl_delete(plane, &["namespace", &ns]);
    let namespaces = Api::<Namespace>::all(plane.client().await.unwrap());
    assert!(namespaces.get_opt(&ns).await.unwrap().is_none());
    let all = Api::<ConfigMap>::all(plane.client().await.unwrap());
    let left: Vec<_> = all
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|cm| cm.metadata.namespace.as_deref() == Some(ns.as_str()))
        .collect();
    assert!(left.is_empty(), "left in the deleted namespace: {left:?}");
}

#[tokio::test]
async fn a_cluster_role_labelled_aggregate_to_edit_extends_edit() {
    let plane = ControlPlane::shared();
    let admin = plane.client().await.unwrap();
    let ns = plane.namespace("aggregate").await.unwrap();
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {
            "name": "ledgerops-test-widgets-edit",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"},
        },
        "rules": [{
            "apiGroups": ["aggregation.ledgerops.test"],
            "resources": ["widgets"],
            "verbs": ["get"],
        }],
    }))
    .unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "bob-edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin, &ns)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();

    // bob holds only the built-in `edit`: he may get widgets once the rule is aggregated into it.
    let reviews = Api::<SelfSubjectAccessReview>::all(plane.client_as("bob").await.unwrap());
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({"spec": {
        "resourceAttributes": {
            "namespace": ns, "group": "aggregation.ledgerops.test", "resource": "widgets", "verb": "get",
        },
    }}))
    .unwrap();
    let start = Instant::now();
    loop {
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            break;
        }
        assert!(
            start.elapsed() < LIMIT,
            "`edit` did not gain the widgets rule within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
