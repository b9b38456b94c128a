//! The custom resources users write and read. CRD YAML in `crds/` is generated from these types.

// kube's repeated `printcolumn(...)` arguments look like duplicated attributes to clippy.
#![allow(clippy::duplicated_attributes)]

pub mod admission;
pub mod agent_job;
pub mod approval;
pub mod autopilot;
pub mod budget;
pub mod common;
pub mod config_repo;
pub mod plan;
pub mod rule;
pub mod transaction;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, JSON,
};
use kube::CustomResourceExt;

/// Every CRD ledgerops serves, in a stable order.
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        budget::Budget::crd(),
        transaction::Transaction::crd(),
        plan::CategorizationPlan::crd(),
        approval::ApprovalRequest::crd(),
        agent_job::AgentJob::crd(),
        config_repo::ConfigRepo::crd(),
        rule::CategorizationRule::crd(),
    ]
    .into_iter()
    .map(kstatus_ready)
    .collect()
}

/// What every kind shares for kstatus readers (Flux, Argo CD, kpt) and `kubectl get`:
/// - a status defaulted to `observedGeneration: -1`, as Flux's kinds do: an object no
///   reconcile has looked at yet then reads as InProgress (generation ≠ observed) rather than
///   Current, which is what kstatus concludes of an object with no status at all;
/// - READY and STATUS columns from the `Ready` condition, like Flux's.
fn kstatus_ready(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for version in &mut crd.spec.versions {
        let status = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("status"));
        if let Some(status) = status {
            status.default = Some(JSON(serde_json::json!({ "observedGeneration": -1 })));
        }
        let columns = version
            .additional_printer_columns
            .get_or_insert_with(Vec::new);
        for (name, field, description) in [
            (
                "Ready",
                "status",
                "Whether the object is in the state it declares",
            ),
            ("Status", "message", "What the Ready condition says"),
        ] {
            columns.push(CustomResourceColumnDefinition {
                name: name.into(),
                type_: "string".into(),
                json_path: format!(".status.conditions[?(@.type==\"Ready\")].{field}"),
                description: Some(description.into()),
                ..CustomResourceColumnDefinition::default()
            });
        }
    }
    crd
}
