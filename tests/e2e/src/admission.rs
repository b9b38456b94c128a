//! Installing the admission policies of `crds/` and their parameter ConfigMap, as a cluster
//! should have them, and waiting until the API server enforces every binding.

use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ledgerops::api::admission::{
    self, CONTROLLER_USER_KEY, PARAMS_NAME, PARAMS_NAMESPACE, configmaps,
};
use serde_json::{Value, json};

use crate::example_documents;

/// Who the probes claim to be: a user with every RBAC right who is not the controller, so that
/// only the admission policies can refuse them.
const PROBE_USER: &str = "ledgerops-admission-probe";
/// A decided ApprovalRequest in the parameter namespace that the probes try to delete.
const PROBE_REQUEST: &str = "ledgerops-admission-probe";

/// Applies every policy and binding as `ledgerops crdgen` renders them, and the parameter
/// ConfigMap naming `controller_user`; then waits until each binding refuses what it should.
/// Idempotent. The CRDs must be installed.
pub async fn install_admission(admin: &Client, controller_user: &str) {
    install_params(admin, controller_user).await;
    install_policies(admin).await;
    wait_until_enforced(admin, controller_user).await;
}

/// The parameter ConfigMap (and its namespace), naming `controller_user`.
pub async fn install_params(admin: &Client, controller_user: &str) {
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": PARAMS_NAMESPACE}})).unwrap();
    match Api::<Namespace>::all(admin.clone())
        .create(&PostParams::default(), &namespace)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("creating namespace {PARAMS_NAMESPACE}: {e}"),
    }
    let api = Api::<ConfigMap>::namespaced(admin.clone(), PARAMS_NAMESPACE);
    let current = api.get_opt(PARAMS_NAME).await.expect("reading the params");
    let named = current
        .as_ref()
        .and_then(|cm| cm.data.as_ref())
        .and_then(|d| d.get(CONTROLLER_USER_KEY));
    if named.map(String::as_str) == Some(controller_user) {
        return;
    }
    // As an administrator who is not the controller: the policy `ledgerops-params` refuses the
    // controller's user (admin, in these suites) any change of the parameters that name it.
    let url = format!("/api/v1/namespaces/{PARAMS_NAMESPACE}/configmaps");
    let answer = match current {
        None => {
            let params = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": PARAMS_NAME, "namespace": PARAMS_NAMESPACE},
                "data": {CONTROLLER_USER_KEY: controller_user},
            });
            impersonated(admin, "POST", &url, Some(params)).await
        }
        Some(_) => {
            let patch = json!({"data": {CONTROLLER_USER_KEY: controller_user}});
            impersonated(admin, "PATCH", &format!("{url}/{PARAMS_NAME}"), Some(patch)).await
        }
    };
    match answer {
        Ok(_) => {}
        // Another suite of this binary created it meanwhile: look again.
        Err(kube::Error::Api(e)) if e.code == 409 => {
            Box::pin(install_params(admin, controller_user)).await
        }
        Err(e) => panic!("writing the params ConfigMap: {e}"),
    }
}

/// Every policy and binding, from the files `ledgerops crdgen` writes into `crds/`.
pub async fn install_policies(admin: &Client) {
    let policies: Api<ValidatingAdmissionPolicy> = Api::all(admin.clone());
    let bindings: Api<ValidatingAdmissionPolicyBinding> = Api::all(admin.clone());
    for set in admission::policies() {
        policies
            .patch(set.name, &apply(), &Patch::Apply(&set.policy))
            .await
            .unwrap_or_else(|e| panic!("applying policy {}: {e}", set.name));
        for binding in &set.bindings {
            let name = binding.metadata.name.clone().expect("bindings are named");
            bindings
                .patch(&name, &apply(), &Patch::Apply(binding))
                .await
                .unwrap_or_else(|e| panic!("applying binding {name}: {e}"));
        }
    }
}

fn apply() -> PatchParams {
    PatchParams::apply("ledgerops-tests").force()
}

/// One dry-run request per binding, as [`PROBE_USER`]: each must be refused with its policy's
/// message. A binding starts being enforced a moment after it is created.
async fn wait_until_enforced(admin: &Client, controller_user: &str) {
    let request = probe_request(controller_user);
    let requests = Api::<ledgerops::api::approval::ApprovalRequest>::namespaced(
        admin.clone(),
        PARAMS_NAMESPACE,
    );
    let start = Instant::now();
    loop {
        let last = match requests.create(&PostParams::default(), &request).await {
            Ok(_) => None,
            Err(kube::Error::Api(e)) if e.code == 409 => None,
            Err(e) => Some(format!("creating the probe request: {e}")),
        };
        let last = match last {
            Some(failed) => failed,
            None => match first_unrefused(admin).await {
                None => return,
                Some(answer) => answer,
            },
        };
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the admission policies were not enforced within 60s: {last}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A decided ApprovalRequest, created by the controller's user in its own name.
fn probe_request(controller_user: &str) -> ledgerops::api::approval::ApprovalRequest {
    let mut doc = example_documents("approval-request.yaml").remove(0);
    doc["metadata"] = json!({"name": PROBE_REQUEST});
    doc["spec"]["decision"] = json!({"verdict": "Approve", "by": controller_user});
    serde_json::from_value(doc).expect("the example is valid")
}

/// The first probe the API server did not refuse as expected, with its answer.
async fn first_unrefused(admin: &Client) -> Option<String> {
    let base = format!("/apis/ledgerops.dev/v1alpha1/namespaces/{PARAMS_NAMESPACE}");
    let configmaps_url = format!("/api/v1/namespaces/{PARAMS_NAMESPACE}/configmaps");
    let mut request = example_documents("approval-request.yaml").remove(0);
    request["metadata"] = json!({"name": "ledgerops-admission-probe-new"});
    let job = example_documents("agent-job.yaml").remove(0);
    let journal = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "ledgerops-admission-probe", "labels": {configmaps::JOURNAL_LABEL: "true"}}});
    let sequence = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": configmaps::SEQUENCE_CONFIGMAP}});
    let mut transaction = example_documents("transaction.yaml").remove(0);
    transaction["metadata"] = json!({"name": "ledgerops-admission-probe"});
    let probes = [
        (
            "POST",
            format!("{base}/transactions"),
            Some(transaction),
            "may not create Transaction ledgerops-admission-probe",
        ),
        (
            "POST",
            format!("{base}/approvalrequests"),
            Some(request),
            "may not create ApprovalRequest",
        ),
        (
            "DELETE",
            format!("{base}/approvalrequests/{PROBE_REQUEST}"),
            None,
            "may not delete ApprovalRequest",
        ),
        (
            "PATCH",
            format!("{base}/approvalrequests/{PROBE_REQUEST}/status"),
            Some(json!({"status": {"phase": "Pending"}})),
            "may not write the status of ApprovalRequest",
        ),
        (
            "POST",
            format!("{base}/agentjobs"),
            Some(job),
            "may not create AgentJob",
        ),
        (
            "POST",
            configmaps_url.clone(),
            Some(journal),
            "may not create ConfigMap ledgerops-admission-probe",
        ),
        (
            "POST",
            configmaps_url,
            Some(sequence),
            "may not create ConfigMap ledgerops-agentjob-sequence",
        ),
    ];
    for (method, url, body, expect) in probes {
        let answer = impersonated(admin, method, &format!("{url}?dryRun=All"), body).await;
        match answer {
            Err(kube::Error::Api(e)) if e.code == 403 && e.message.contains(expect) => {}
            other => {
                return Some(format!(
                    "{method} {url}: expected {expect:?}, got {other:?}"
                ));
            }
        }
    }
    None
}

/// A request as [`PROBE_USER`] in `system:masters` (RBAC allows everything; admission decides).
async fn impersonated(
    admin: &Client,
    method: &str,
    url: &str,
    body: Option<Value>,
) -> Result<Value, kube::Error> {
    let content_type = if method == "PATCH" {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    let request = http::Request::builder()
        .method(method)
        .uri(url)
        .header("Impersonate-User", PROBE_USER)
        .header("Impersonate-Group", "system:masters")
        .header("Content-Type", content_type)
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())
        .expect("a valid request");
    admin.request::<Value>(request).await
}
