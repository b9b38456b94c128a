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

/// Gives `user` the `ledgerops-owner` role in `ns`, and returns a client authenticated as them.
pub async fn owner(plane: &ControlPlane, ns: &str, user: &str) -> Client {
    person(plane, ns, user, "ledgerops-owner").await
}

/// Takes `user`'s `role` in `ns` away again (a person who leaves the household).
pub async fn unbind(plane: &ControlPlane, ns: &str, user: &str, role: &str) {
    let admin = plane.client().await.expect("admin client");
    let name = format!("{user}-{}", role.replace(':', "-"));
    Api::<RoleBinding>::namespaced(admin, ns)
        .delete(&name, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("unbinding {role} from {user}: {e}"));
}

/// An automation: the ServiceAccount `name` of `ns` holding only Kubernetes' built-in `edit`
/// role there (and `ledgerops-edit`, which `edit` aggregates, bound directly so that the test
/// does not wait for the aggregation), as a CI job or an AI agent would. Returns a client that
/// acts as it (admin impersonating the account).
pub async fn automation(plane: &ControlPlane, ns: &str, name: &str) -> Client {
    let admin = plane.client().await.expect("admin client");
    install_people_roles(&admin).await;
    let user = format!("system:serviceaccount:{ns}:{name}");
    for role in ["edit", "ledgerops-edit"] {
        let binding: RoleBinding = serde_json::from_value(json!({
            "metadata": {"name": format!("{name}-{role}"), "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        }))
        .expect("a RoleBinding");
        Api::<RoleBinding>::namespaced(admin.clone(), ns)
            .patch(
                &format!("{name}-{role}"),
                &PatchParams::apply("ledgerops-tests").force(),
                &Patch::Apply(&binding),
            )
            .await
            .unwrap_or_else(|e| panic!("binding {role} to {user}: {e}"));
    }
    impersonating(plane, &user, None).await
}

/// A person who holds `ledgerops-approver` in `ns` only through their group `group` (as a
/// household's approvers often are bound), and a client that acts as them in that group.
pub async fn group_approver(plane: &ControlPlane, ns: &str, user: &str, group: &str) -> Client {
    let admin = plane.client().await.expect("admin client");
    install_people_roles(&admin).await;
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": format!("{group}-approver"), "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ledgerops-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    }))
    .expect("a RoleBinding");
    Api::<RoleBinding>::namespaced(admin, ns)
        .patch(
            &format!("{group}-approver"),
            &PatchParams::apply("ledgerops-tests").force(),
            &Patch::Apply(&binding),
        )
        .await
        .unwrap_or_else(|e| panic!("binding ledgerops-approver to group {group}: {e}"));
    impersonating(plane, user, Some(vec![group.to_owned()])).await
}

/// A client that is admin impersonating `user` (in `groups`, when given).
async fn impersonating(plane: &ControlPlane, user: &str, groups: Option<Vec<String>>) -> Client {
    let mut kubeconfig =
        kube::config::Kubeconfig::read_from(plane.kubeconfig()).expect("the kubeconfig");
    for auth in kubeconfig
        .auth_infos
        .iter_mut()
        .filter(|a| a.name == "admin")
    {
        if let Some(info) = auth.auth_info.as_mut() {
            info.impersonate = Some(user.to_owned());
            info.impersonate_groups = groups.clone();
        }
    }
    let options = kube::config::KubeConfigOptions {
        context: Some("admin".into()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .unwrap_or_else(|e| panic!("a config impersonating {user}: {e}"));
    Client::try_from(config).unwrap_or_else(|e| panic!("a client as {user}: {e}"))
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
