use super::*;
use crate::api::transaction::Transaction;

#[test]
fn the_patch_is_an_apply_of_the_status_with_the_version_precondition_when_given() {
    let status = serde_json::json!({"phase": "Converged"});
    let patch = |resource_version: Option<&'static str>| StatusPatch {
        api_version: Transaction::api_version(&()),
        kind: Transaction::kind(&()),
        metadata: resource_version.map(|resource_version| Version { resource_version }),
        status: &status,
    };
    assert_eq!(
        serde_json::to_value(patch(Some("42"))).unwrap(),
        serde_json::json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
            "metadata": {"resourceVersion": "42"}, "status": {"phase": "Converged"}
        })
    );
    assert_eq!(
        serde_json::to_value(patch(None)).unwrap(),
        serde_json::json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
            "status": {"phase": "Converged"}
        })
    );
}
