//! What `check` reads: the CRDs, the admission policies and their parameter, the leader Leases,
//! the Budgets here and your powers. A read that fails is kept as what it said, so that one
//! forbidden read does not hide the rest.

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use ledgerops::api::admission::{self, PARAMS_NAME, PARAMS_NAMESPACE};
use ledgerops::api::budget::Budget;
use ledgerops::k8s::admission_guard;
use ledgerops::logic::approval::admission::Compared;
use ledgerops::logic::values::duration;
use serde_json::Value;

use crate::cluster::Cluster;
use crate::logic::check::{BudgetSeen, CrdSeen, LeaseSeen, LiveCrd, Observed};

/// Each power a person may hold, with the verb and resource the authorizer is asked about.
const POWERS: [(&str, &str, &str); 4] = [
    ("propose", "create", "categorizationplans"),
    ("approve", "approve", "approvalrequests"),
    ("bless", "bless", "categorizationrules"),
    ("govern", "govern", "budgets"),
];

impl Cluster {
    pub async fn observe(&self, now: Timestamp) -> Observed {
        let (policies, bindings) = admission::shipped_specs();
        Observed {
            plugin_version: env!("CARGO_PKG_VERSION").to_owned(),
            crds: self.crds().await,
            policies: self.compared::<ValidatingAdmissionPolicy>(&policies).await,
            bindings: self
                .compared::<ValidatingAdmissionPolicyBinding>(&bindings)
                .await,
            params: Api::<ConfigMap>::namespaced(self.client(), PARAMS_NAMESPACE)
                .get_opt(PARAMS_NAME)
                .await
                .map(|cm| cm.map(|cm| cm.data.unwrap_or_default()))
                .map_err(said),
            leases: self.leases(now).await,
            budgets: self.budgets_seen(now).await,
            powers: self.powers().await,
        }
    }

    async fn crds(&self) -> Vec<CrdSeen> {
        let api = Api::<CustomResourceDefinition>::all(self.client());
        let mut out = Vec::new();
        for crd in ledgerops::api::crds() {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let live = api.get_opt(&name).await.map_err(said);
            out.push(CrdSeen {
                name,
                expected: schemas(&crd),
                live: live.map(|found| {
                    found.map(|live| LiveCrd {
                        established: live
                            .status
                            .iter()
                            .flat_map(|s| s.conditions.iter().flatten())
                            .any(|c| c.type_ == "Established" && c.status == "True"),
                        schemas: schemas(&live),
                    })
                }),
            });
        }
        out
    }

    async fn compared<K>(&self, shipped: &[(String, Value)]) -> Vec<Compared>
    where
        K: kube::Resource<DynamicType = ()>,
    {
        let api = Api::<DynamicObject>::all_with(self.client(), &ApiResource::erase::<K>(&()));
        let mut out = Vec::new();
        for (name, expected) in shipped {
            out.push(admission_guard::compared(&api, name, expected).await);
        }
        out
    }

    /// The leader Leases (`…-leader`) in the controller's namespace.
    async fn leases(&self, now: Timestamp) -> Result<Vec<LeaseSeen>, String> {
        let list = Api::<Lease>::namespaced(self.client(), PARAMS_NAMESPACE)
            .list(&ListParams::default())
            .await
            .map_err(said)?;
        Ok(list
            .items
            .into_iter()
            .filter(|l| {
                l.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.ends_with("-leader"))
            })
            .map(|l| {
                let spec = l.spec.unwrap_or_default();
                LeaseSeen {
                    name: l.metadata.name.unwrap_or_default(),
                    holder: spec.holder_identity,
                    renewed_seconds_ago: spec.renew_time.map(|t| now.duration_since(t.0).as_secs()),
                    duration_seconds: spec.lease_duration_seconds.unwrap_or(15).into(),
                }
            })
            .collect())
    }

    /// The Budgets here (or everywhere with `-A`) that are not suspended.
    async fn budgets_seen(&self, now: Timestamp) -> Result<Vec<BudgetSeen>, String> {
        let budgets: Vec<Budget> = self.list("Budgets").await.map_err(|e| e.to_string())?;
        Ok(budgets
            .into_iter()
            .filter(|b| !b.spec.suspend)
            .map(|b| BudgetSeen {
                name: b.metadata.name.clone().unwrap_or_default(),
                synced_seconds_ago: b
                    .status
                    .as_ref()
                    .and_then(|s| s.last_sync_time.as_ref())
                    .map(|t| now.duration_since(t.0).as_secs()),
                interval_seconds: duration::parse(&b.spec.sync_interval.0)
                    .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                    .unwrap_or(300),
                controller_version: b.status.as_ref().and_then(|s| s.controller_version.clone()),
            })
            .collect())
    }

    async fn powers(&self) -> Vec<(String, Result<bool, String>)> {
        let api = Api::<SelfSubjectAccessReview>::all(self.client());
        let mut out = Vec::new();
        for (power, verb, resource) in POWERS {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(ResourceAttributes {
                        group: Some("ledgerops.dev".into()),
                        namespace: Some(self.namespace().to_owned()),
                        resource: Some(resource.into()),
                        verb: Some(verb.into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            };
            let may = api
                .create(&PostParams::default(), &review)
                .await
                .map(|r| r.status.is_some_and(|s| s.allowed))
                .map_err(said);
            out.push((format!("{power} ({verb} {resource})"), may));
        }
        out
    }
}

/// Each served version's schema, by version name.
fn schemas(crd: &CustomResourceDefinition) -> BTreeMap<String, Value> {
    crd.spec
        .versions
        .iter()
        .map(|v| {
            (
                v.name.clone(),
                serde_json::to_value(&v.schema).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// What the API server said, briefly: its message alone for an API error.
fn said(e: kube::Error) -> String {
    match e {
        kube::Error::Api(status) => status.message,
        other => other.to_string(),
    }
}
