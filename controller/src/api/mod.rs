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

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
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
}
