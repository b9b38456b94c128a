//! The ApprovalRequest admission policies (`crds/admission-*.yaml`) on a real kube-apiserver, with
//! token-authenticated users: `alice` forges, `bob` approves in his own name, and `admin` plays
//! the ledgerops controller (the params ConfigMap names it). `tests/attacks/admission.rs` plays
//! every other rule as an attacker.

use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use ledgerops::api::admission::{self, approval_requests};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops_e2e::{example_documents, install_crds};
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};

const POLICY_NAME: &str = approval_requests::NAME;

/// The controller's identity in these tests.
const CONTROLLER: &str = "admin";

fn plane() -> &'static ControlPlane {
    ControlPlane::shared()
}

async fn client_as(user: &str) -> Client {
    plane()
        .client_as(user)
        .await
        .unwrap_or_else(|e| panic!("client for {user}: {e}"))
}

fn requests(client: &Client, ns: &str) -> Api<ApprovalRequest> {
    Api::namespaced(client.clone(), ns)
}

/// A fresh namespace where alice and bob may read, patch, decide (`approve`) and delete
/// ApprovalRequests and patch their status: what is checked here is in whose name and when.
async fn namespace_for_people(admin: &Client, prefix: &str) -> String {
    let ns = plane().namespace(prefix).await.expect("namespace");
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "approvers"},
        "rules": [{
            "apiGroups": ["ledgerops.dev"],
            "resources": ["approvalrequests", "approvalrequests/status"],
            "verbs": ["get", "list", "watch", "patch", "update", "delete", "approve"],
        }],
    }))
    .unwrap();
    Api::<Role>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &role)
        .await
        .expect("creating the role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "approvers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "approvers"},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"},
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"},
        ],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &binding)
        .await
        .expect("creating the role binding");
    ns
}

/// Creates, as the controller, a copy of `examples/approval-request.yaml` named `name`.
async fn create_request(admin: &Client, ns: &str, name: &str, labels: Value) -> ApprovalRequest {
    let mut doc = example_documents("approval-request.yaml").remove(0);
    doc["metadata"] = json!({"name": name, "labels": labels});
    let request: ApprovalRequest = serde_json::from_value(doc).expect("the example is valid");
    requests(admin, ns)
        .create(&PostParams::default(), &request)
        .await
        .unwrap_or_else(|e| panic!("creating ApprovalRequest {ns}/{name}: {e}"))
}

fn decision(verdict: &str, by: &str) -> Value {
    json!({"spec": {"decision": {"verdict": verdict, "by": by, "comment": "checked the preview"}}})
}

async fn patch(
    client: &Client,
    ns: &str,
    name: &str,
    body: &Value,
) -> Result<ApprovalRequest, kube::Error> {
    requests(client, ns)
        .patch(name, &PatchParams::default(), &Patch::Merge(body))
        .await
}

/// The message of a request the API server refused as Forbidden; panics when it was accepted.
fn forbidden<T: std::fmt::Debug>(what: &str, result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(e)) if e.code == 403 => e.message,
        other => panic!("{what}: expected 403 Forbidden, got {other:?}"),
    }
}

fn invalid<T: std::fmt::Debug>(what: &str, result: Result<T, kube::Error>) -> String {
    match result {
        Err(kube::Error::Api(e)) if e.code == 422 => e.message,
        other => panic!("{what}: expected 422 Invalid, got {other:?}"),
    }
}

fn assert_contains(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "expected {part:?} in the message: {message}"
        );
    }
}

/// A binding is enforced a moment after it is created (the API server compiles the policy and
/// watches the params): dry-run a known forgery until it is refused with `expect` in the message.
async fn wait_until_refused(client: &Client, ns: &str, name: &str, by: &str, expect: &str) {
    let api = requests(client, ns);
    let dry_run = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let body = decision("Approve", by);
    let start = Instant::now();
    loop {
        let last = match api.patch(name, &dry_run, &Patch::Merge(&body)).await {
            Err(kube::Error::Api(e)) if e.message.contains(expect) => return,
            other => format!("{other:?}"),
        };
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the admission policy was not enforced within 60s on {ns}/{name}; last answer: {last}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn setup(prefix: &str) -> (Client, String) {
    let admin = client_as(CONTROLLER).await;
    install_crds(&admin).await;
    let ns = namespace_for_people(&admin, prefix).await;
    create_request(&admin, &ns, "probe", json!({})).await;
    wait_until_refused(
        &client_as("alice").await,
        &ns,
        "probe",
        "bob",
        "user alice may not record a decision by \"bob\"",
    )
    .await;
    (admin, ns)
}

#[tokio::test]
async fn a_decision_is_made_in_ones_own_name_and_gitea_ones_only_by_the_controller() {
    let (admin, ns) = setup("admission-decide").await;
    let alice = client_as("alice").await;
    create_request(&admin, &ns, "groceries", json!({})).await;

    // alice forges bob's approval.
    let message = forbidden(
        "alice approving as bob",
        patch(&alice, &ns, "groceries", &decision("Approve", "bob")).await,
    );
    assert_contains(
        &message,
        &[
            POLICY_NAME,
            "user alice may not record a decision by \"bob\" on ApprovalRequest groceries",
            "spec.decision.by must be your own user name",
            "Set \"by\": \"alice\"",
        ],
    );
    assert_eq!(
        requests(&admin, &ns)
            .get("groceries")
            .await
            .unwrap()
            .spec
            .decision,
        None,
        "the forged decision must not be stored"
    );

    // bob approves in his own name, with the command the README and the request's message give.
    let out = plane()
        .kubectl_ok(&[
            "--context",
            "bob",
            "patch",
            "approvalrequest",
            "groceries",
            "-n",
            &ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"decision":{"verdict":"Approve","by":"bob","comment":"ok"}}}"#,
        ])
        .unwrap_or_else(|e| panic!("bob approving as bob: {e}"));
    assert!(out.contains("patched"), "{out}");
    let decided = requests(&admin, &ns).get("groceries").await.unwrap();
    let made = decided.spec.decision.expect("bob's decision is stored");
    assert_eq!(made.by, "bob");

    // Once made, nobody changes it: the CRD's rule answers before the policy.
    let message = invalid(
        "alice overturning bob's decision",
        patch(&alice, &ns, "groceries", &decision("Reject", "alice")).await,
    );
    assert_contains(
        &message,
        &["a decision, once made, cannot be changed or withdrawn"],
    );
    let message = invalid(
        "alice withdrawing bob's decision",
        patch(
            &alice,
            &ns,
            "groceries",
            &json!({"spec": {"decision": null}}),
        )
        .await,
    );
    assert_contains(
        &message,
        &["a decision, once made, cannot be changed or withdrawn"],
    );

    // A Gitea decision is the controller's to record.
    create_request(&admin, &ns, "transport", json!({})).await;
    let message = forbidden(
        "alice recording a Gitea decision",
        patch(
            &alice,
            &ns,
            "transport",
            &decision("Approve", "gitea:alice"),
        )
        .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not record the Gitea decision \"gitea:alice\" on ApprovalRequest transport",
            "only the ledgerops controller (admin)",
            "Set \"by\": \"alice\"",
            "/agent approve transport",
        ],
    );

    // The controller cannot forge a person either, nor record a Gitea decision without a login.
    let message = forbidden(
        "the controller approving as bob",
        patch(&admin, &ns, "transport", &decision("Approve", "bob")).await,
    );
    assert_contains(
        &message,
        &["user admin may not record a decision by \"bob\""],
    );
    let message = forbidden(
        "the controller recording gitea: with no login",
        patch(&admin, &ns, "transport", &decision("Approve", "gitea:")).await,
    );
    assert_contains(
        &message,
        &["the decision by \"gitea:\" on ApprovalRequest transport is not a valid Gitea decision"],
    );

    // The controller records carol's `/agent approve` comment.
    let recorded = patch(
        &admin,
        &ns,
        "transport",
        &decision("Approve", "gitea:carol"),
    )
    .await
    .expect("the controller records a Gitea decision");
    assert_eq!(recorded.spec.decision.unwrap().by, "gitea:carol");
}

#[tokio::test]
async fn only_the_controller_writes_status_escalation_and_ledgerops_labels() {
    let (admin, ns) = setup("admission-fields").await;
    let alice = client_as("alice").await;
    create_request(
        &admin,
        &ns,
        "rent",
        json!({"ledgerops.dev/subject-uid": "uid-1"}),
    )
    .await;

    let message = forbidden(
        "alice writing status",
        requests(&alice, &ns)
            .patch_status(
                "rent",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": "Approved"}})),
            )
            .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not write the status of ApprovalRequest rent",
            "only the ledgerops controller (admin) records it",
            "set spec.decision with \"by\": \"alice\"",
        ],
    );

    let message = forbidden(
        "alice editing escalateTo",
        patch(
            &alice,
            &ns,
            "rent",
            &json!({"spec": {"escalateTo": ["alice"]}}),
        )
        .await,
    );
    assert_contains(
        &message,
        &[
            "user alice may not change spec.escalateTo of ApprovalRequest rent from [finance-manager] to [alice]",
            "Change spec.approval.escalateTo of the Budget instead",
        ],
    );

    for (what, labels) in [
        (
            "alice changing a ledgerops.dev label",
            json!({"ledgerops.dev/subject-uid": "uid-2"}),
        ),
        (
            "alice removing a ledgerops.dev label",
            json!({"ledgerops.dev/subject-uid": null}),
        ),
        (
            "alice adding a ledgerops.dev label",
            json!({"ledgerops.dev/other": "x"}),
        ),
    ] {
        let message = forbidden(
            what,
            patch(
                &alice,
                &ns,
                "rent",
                &json!({"metadata": {"labels": labels}}),
            )
            .await,
        );
        assert_contains(
            &message,
            &[
                "user alice may not set, change or remove the label(s) ledgerops.dev/",
                "on ApprovalRequest rent",
            ],
        );
    }

    // Other labels are the users' own.
    patch(
        &alice,
        &ns,
        "rent",
        &json!({"metadata": {"labels": {"team": "household"}}}),
    )
    .await
    .expect("alice labels the request for herself");

    // The controller may do all of it.
    requests(&admin, &ns)
        .patch_status(
            "rent",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Pending"}})),
        )
        .await
        .expect("the controller writes status");
    let updated = patch(
        &admin,
        &ns,
        "rent",
        &json!({
            "metadata": {"labels": {"ledgerops.dev/subject-uid": "uid-2"}},
            "spec": {"escalateTo": ["finance-manager", "alice"]},
        }),
    )
    .await
    .expect("the controller changes escalateTo and its labels");
    assert_eq!(updated.spec.escalate_to, ["finance-manager", "alice"]);
    assert_eq!(updated.labels()["ledgerops.dev/subject-uid"], "uid-2");
}

/// The decision documented in the README: without its params ConfigMap the binding refuses every
/// write, a person's own-name decision included (`parameterNotFoundAction: Allow` would skip every
/// check instead). Proven with a second binding of the same policy whose ConfigMap does not
/// exist, limited to one namespace so that the other tests are not affected.
#[tokio::test]
async fn without_its_params_configmap_the_policy_refuses_every_write() {
    let (admin, ns) = setup("admission-noparams").await;
    create_request(&admin, &ns, "utilities", json!({})).await;

    let mut binding = admission::policies()
        .into_iter()
        .find(|s| s.name == POLICY_NAME)
        .expect("the ApprovalRequest policy")
        .bindings
        .remove(0);
    let name = format!("{POLICY_NAME}-missing-params-{ns}");
    binding.metadata.name = Some(name.clone());
    let spec = binding.spec.as_mut().unwrap();
    spec.param_ref.as_mut().unwrap().name = Some("ledgerops-admission-absent".into());
    spec.match_resources = Some(
        serde_json::from_value(json!({
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
        }))
        .unwrap(),
    );
    let bindings = Api::<ValidatingAdmissionPolicyBinding>::all(admin.clone());
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("creating the binding without params");

    let bob = client_as("bob").await;
    wait_until_refused(&bob, &ns, "utilities", "bob", "no params found").await;
    // The API server answers 422 Invalid here (a binding it cannot configure), not 403.
    let message = invalid(
        "bob approving as bob without params",
        patch(&bob, &ns, "utilities", &decision("Approve", "bob")).await,
    );
    assert_contains(
        &message,
        &[
            &name,
            "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
        ],
    );
    assert_eq!(
        requests(&admin, &ns)
            .get("utilities")
            .await
            .unwrap()
            .spec
            .decision,
        None
    );
    let refused = patch(
        &admin,
        &ns,
        "utilities",
        &json!({"metadata": {"labels": {"ledgerops.dev/subject-uid": "uid-3"}}}),
    )
    .await;
    let message = invalid("the controller writing its labels without params", refused);
    assert_contains(&message, &["no params found"]);

    bindings
        .delete(&name, &DeleteParams::default())
        .await
        .expect("deleting the binding without params");
}

/// bob may answer a request while it is Pending, never once it is finished; a decided request
/// stays (only the controller deletes it), an undecided one may go.
#[tokio::test]
async fn a_decision_needs_a_pending_request_and_stays_recorded() {
    let (admin, ns) = setup("admission-phase").await;
    let bob = client_as("bob").await;
    for (name, phase) in [
        ("late", "Expired"),
        ("outdated", "Stale"),
        ("done", "Approved"),
    ] {
        create_request(&admin, &ns, name, json!({})).await;
        requests(&admin, &ns)
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": phase}})),
            )
            .await
            .expect("the controller sets the phase");
        let message = forbidden(
            &format!("bob deciding a request that is {phase}"),
            patch(&bob, &ns, name, &decision("Approve", "bob")).await,
        );
        assert_contains(
            &message,
            &[
                approval_requests::NAME,
                &format!("user bob may not decide ApprovalRequest {name}: it is {phase}"),
                "a decision is taken only while a request is Pending",
            ],
        );
    }

    create_request(&admin, &ns, "pending", json!({})).await;
    requests(&admin, &ns)
        .patch_status(
            "pending",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Pending"}})),
        )
        .await
        .expect("the controller sets the phase");
    patch(&bob, &ns, "pending", &decision("Reject", "bob"))
        .await
        .expect("bob decides a Pending request");
    let message = forbidden(
        "bob deleting his rejection",
        requests(&bob, &ns)
            .delete("pending", &DeleteParams::default())
            .await,
    );
    assert_contains(
        &message,
        &[
            admission::approval_deletion::NAME,
            "user bob may not delete ApprovalRequest pending: it records the Reject decision by bob",
            "edit or delete CategorizationPlan september-cleanup instead",
        ],
    );

    create_request(&admin, &ns, "unanswered", json!({})).await;
    requests(&bob, &ns)
        .delete("unanswered", &DeleteParams::default())
        .await
        .expect("an undecided request may be deleted");
    requests(&admin, &ns)
        .delete("pending", &DeleteParams::default())
        .await
        .expect("the controller deletes a decided request");
}
