//! The test control plane itself: independent planes side by side, token users, clean stop.

use std::net::TcpStream;

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use ledgerops_testenv::{ControlPlane, USERS};

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("url ends with a port")
}

#[tokio::test]
async fn planes_are_independent_and_stop_when_dropped() {
    let (a, b) = tokio::join!(ControlPlane::start(), ControlPlane::start());
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
    assert!(
        b.client().await.unwrap().apiserver_version().await.is_ok(),
        "dropping one plane stopped the other"
    );
}

#[tokio::test]
async fn token_users_are_authenticated_and_authorized_as_themselves() {
    let plane = ControlPlane::shared();
    for user in USERS {
        let client = plane.client_as(user).await.unwrap();
        let review: SelfSubjectReview = serde_json::from_value(serde_json::json!({})).unwrap();
        let me = Api::<SelfSubjectReview>::all(client)
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        let name = me.status.and_then(|s| s.user_info).and_then(|u| u.username);
        assert_eq!(name.as_deref(), Some(*user));
    }
    // Only admin is privileged: RBAC is on, so alice may not list namespaces.
    let alice = Api::<Namespace>::all(plane.client_as("alice").await.unwrap());
    let err = alice
        .list(&Default::default())
        .await
        .expect_err("alice has no role");
    assert!(err.to_string().contains("forbidden"), "{err}");
    assert!(plane.client_as("mallory").await.is_err());
}
