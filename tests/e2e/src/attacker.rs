//! The user the trust suites play: someone with ordinary rights in one namespace, and more. Every
//! guarantee must hold against them through admission and the controller's own checks, not RBAC.

use k8s_openapi::api::rbac::v1::{ClusterRole, Role, RoleBinding};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use ledgerops_testenv::ControlPlane;
use serde_json::json;

use crate::example_documents;

/// Installs the people roles of `examples/people-roles.yaml` (cluster-wide, idempotent).
pub async fn install_people_roles(admin: &Client) {
    let api: Api<ClusterRole> = Api::all(admin.clone());
    let params = PatchParams::apply("ledgerops-tests").force();
    for doc in example_documents("people-roles.yaml") {
        let role: ClusterRole = serde_json::from_value(doc).expect("a ClusterRole");
        let name = role.metadata.name.clone().expect("named");
        api.patch(&name, &params, &Patch::Apply(&role))
            .await
            .unwrap_or_else(|e| panic!("applying ClusterRole {name}: {e}"));
    }
}

/// Gives `user` the `ledgerops-approver` role in `ns`, and returns a client authenticated as them.
pub async fn approver(plane: &ControlPlane, ns: &str, user: &str) -> Client {
    person(plane, ns, user, "ledgerops-approver").await
}

/// Gives `user` the `ledgerops-edit` role in `ns` (and nothing else), and returns a client
/// authenticated as them.
pub async fn editor(plane: &ControlPlane, ns: &str, user: &str) -> Client {
    person(plane, ns, user, "ledgerops-edit").await
}

async fn person(plane: &ControlPlane, ns: &str, user: &str, role: &str) -> Client {
    let admin = plane.client().await.expect("admin client");
    install_people_roles(&admin).await;
    bind(&admin, ns, user, "ClusterRole", role).await;
    plane.client_as(user).await.expect("a client as the user")
}

async fn bind(admin: &Client, ns: &str, user: &str, kind: &str, role: &str) {
    let name = format!("{user}-{}", role.replace(':', "-"));
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }))
    .expect("a RoleBinding");
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .patch(
            &name,
            &PatchParams::apply("ledgerops-tests").force(),
            &Patch::Apply(&binding),
        )
        .await
        .unwrap_or_else(|e| panic!("binding {role} to {user}: {e}"));
}

/// Gives `user` in `ns` what a namespace editor has (Kubernetes' built-in `edit`, and
/// `ledgerops-edit`, bound directly so that the test does not wait for its aggregation), plus
/// what an over-broad grant elsewhere might add: writing every status of ours and creating
/// ApprovalRequests and AgentJobs. Returns a client authenticated as `user`.
pub async fn attacker(plane: &ControlPlane, ns: &str, user: &str) -> Client {
    let admin = plane.client().await.expect("admin client");
    install_people_roles(&admin).await;
    let params = PatchParams::apply("ledgerops-tests").force();
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "over-broad", "namespace": ns},
        "rules": [{
            "apiGroups": ["ledgerops.dev"],
            "resources": ["*", "*/status"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        }],
    }))
    .expect("a Role");
    Api::<Role>::namespaced(admin.clone(), ns)
        .patch("over-broad", &params, &Patch::Apply(&role))
        .await
        .expect("creating the over-broad Role");
    for (kind, role) in [
        ("ClusterRole", "edit"),
        ("ClusterRole", "ledgerops-edit"),
        ("Role", "over-broad"),
    ] {
        bind(&admin, ns, user, kind, role).await;
    }
    plane.client_as(user).await.expect("a client as the user")
}
