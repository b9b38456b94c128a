//! Who may write what: ValidatingAdmissionPolicies and their bindings, rendered into `crds/` by
//! `ledgerops crdgen`, one file per policy.
//!
//! CRD rules cannot see who sends a request, so these checks live in ValidatingAdmissionPolicies
//! (`admissionregistration.k8s.io/v1`, Kubernetes 1.30+):
//!
//! - [`approval_requests`]: only the controller creates ApprovalRequests; a decision is made in
//!   the sender's own name, only while the request is Pending; Gitea decisions, `escalateTo` and
//!   `ledgerops.dev/*` labels are the controller's;
//! - [`approval_deletion`]: a decided ApprovalRequest is deleted only by the controller (or by
//!   Kubernetes' own garbage collector and namespace cleanup);
//! - [`agent_jobs`]: only the controller creates, changes and deletes AgentJobs;
//! - [`rules`]: a CategorizationRule is blessed in the blesser's own name, and a blessed rule's
//!   match or category changes only with a new blessing;
//! - [`status`]: only the controller writes the `status` of any ledgerops kind;
//! - [`configmaps`]: only the controller writes the journal ConfigMaps and the `/agent` receive
//!   sequence;
//! - [`proposals`]: `ledgerops.dev/proposed-by` names whoever created or last changed what an
//!   object proposes (four eyes rest on it);
//! - [`governance`]: a Budget's spec and a governing ConfigRepo need the verb `govern`;
//! - [`params`]: the controller never changes the parameters that name it.
//!
//! The powers are custom verbs checked with CEL's `authorizer`: `approve` on approvalrequests,
//! `bless` on categorizationrules, `govern` on budgets and configrepos. RBAC's `update` or
//! `patch` alone carries none of them.
//!
//! The controller's user name is a policy parameter: every binding reads `controllerUser` from the
//! ConfigMap [`PARAMS_NAMESPACE`]/[`PARAMS_NAME`] (example: `examples/admission-params.yaml`).
//! When that ConfigMap is missing a binding denies every request it matches, the controller's
//! included (`parameterNotFoundAction: Deny`, `failurePolicy: Fail`): the only alternative
//! Kubernetes offers, `Allow`, skips every check. An empty `controllerUser` names nobody.
//!
//! The API server looks up a binding's parameters before it evaluates the policy's
//! `matchConditions`: a binding that matched every ConfigMap would, without its parameters,
//! refuse every ConfigMap write in the cluster (the parameter ConfigMap's own included). So the
//! ConfigMap policy's bindings select the protected ConfigMaps themselves (by label and by name),
//! and its `matchConditions` only repeat that selection.

pub mod agent_jobs;
pub mod approval_deletion;
pub mod approval_requests;
pub mod configmaps;
pub mod demotions;
pub mod governance;
pub mod params;
pub mod proposals;
pub mod rules;
pub mod status;

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use serde_json::{Value, json};

/// Namespace of the ConfigMap that holds the policies' parameters.
pub const PARAMS_NAMESPACE: &str = "ledgerops-system";
/// Name of the ConfigMap that holds the policies' parameters.
pub const PARAMS_NAME: &str = "ledgerops-admission";
/// The ConfigMap key naming the controller's user, e.g.
/// `system:serviceaccount:ledgerops-system:ledgerops`.
pub const CONTROLLER_USER_KEY: &str = "controllerUser";
/// The only validation action that refuses a request (`Warn` and `Audit` let it through).
pub const DENY: &str = "Deny";

/// The variables every policy starts with, in evaluation order.
const SHARED: &[(&str, &str)] = &[
    ("user", "request.userInfo.username"),
    (
        "controllerUser",
        "has(params.data) && 'controllerUser' in params.data ? params.data.controllerUser.trim() : ''",
    ),
    (
        "isController",
        "variables.controllerUser != '' && variables.user == variables.controllerUser",
    ),
    (
        "controllerName",
        "variables.controllerUser != '' ? variables.controllerUser : 'nobody yet: set controllerUser in ConfigMap ledgerops-system/ledgerops-admission'",
    ),
    // kube-controller-manager's garbage collector (an owner was deleted) and namespace cleanup.
    (
        "isCleanup",
        "variables.user in ['system:kube-controller-manager', 'system:serviceaccount:kube-system:generic-garbage-collector', 'system:serviceaccount:kube-system:namespace-controller']",
    ),
    (
        "verb",
        "request.operation == 'CREATE' ? 'create' : request.operation == 'DELETE' ? 'delete' : 'change'",
    ),
];

/// One validation: the rule, the fallback message, the message naming user and value.
pub struct Rule {
    pub expression: &'static str,
    pub message: &'static str,
    pub message_expression: &'static str,
}

/// One binding of a policy: its name and what it narrows the policy to (`None`: all it matches).
pub struct BindingDef {
    pub name: &'static str,
    pub match_resources: Option<Value>,
}

/// One policy as the source declares it.
pub struct Definition {
    pub name: &'static str,
    /// One line for the header of its file in `crds/`.
    pub about: &'static str,
    pub match_constraints: Value,
    pub match_conditions: &'static [(&'static str, &'static str)],
    /// The policy's own variables, after [`SHARED`].
    pub variables: &'static [(&'static str, &'static str)],
    /// Most specific first: the API server reports the first that fails.
    pub rules: &'static [Rule],
    pub bindings: Vec<BindingDef>,
}

/// A policy and its bindings, as installed.
#[derive(Clone, Debug)]
pub struct PolicySet {
    pub name: &'static str,
    pub about: &'static str,
    pub policy: ValidatingAdmissionPolicy,
    pub bindings: Vec<ValidatingAdmissionPolicyBinding>,
}

impl PolicySet {
    /// Its file in `crds/`.
    pub fn file(&self) -> String {
        format!(
            "admission-{}.yaml",
            self.name.trim_start_matches("ledgerops-")
        )
    }
}

/// Every policy this version ships, with its bindings.
/// Objects' `spec`s by name.
pub type Specs = Vec<(String, serde_json::Value)>;

/// The `spec` of every policy, then of every binding, by name, as this version ships them: what
/// the controller's guard and the plugin's `check` compare the live ones with.
pub fn shipped_specs() -> (Specs, Specs) {
    let sets = policies();
    let spec = |value: serde_json::Value| value["spec"].clone();
    let policies = sets
        .iter()
        .map(|s| {
            let value = serde_json::to_value(&s.policy).expect("a policy serializes");
            (s.name.to_owned(), spec(value))
        })
        .collect();
    let bindings = sets
        .iter()
        .flat_map(|s| &s.bindings)
        .map(|b| {
            let value = serde_json::to_value(b).expect("a binding serializes");
            (b.metadata.name.clone().unwrap_or_default(), spec(value))
        })
        .collect();
    (policies, bindings)
}

pub fn policies() -> Vec<PolicySet> {
    definitions()
        .into_iter()
        .map(|def| {
            let (policy, bindings) = render(&def);
            PolicySet {
                name: def.name,
                about: def.about,
                policy: serde_json::from_value(policy)
                    .expect("the policy matches ValidatingAdmissionPolicy"),
                bindings: bindings
                    .into_iter()
                    .map(|b| {
                        serde_json::from_value(b)
                            .expect("the binding matches ValidatingAdmissionPolicyBinding")
                    })
                    .collect(),
            }
        })
        .collect()
}

fn definitions() -> Vec<Definition> {
    vec![
        approval_requests::definition(),
        approval_deletion::definition(),
        agent_jobs::definition(),
        status::definition(),
        configmaps::definition(),
        rules::definition(),
        demotions::definition(),
        proposals::definition(),
        governance::definition(),
        params::definition(),
    ]
}

/// A binding named like its policy that enforces all of it.
fn whole(name: &'static str) -> Vec<BindingDef> {
    vec![BindingDef {
        name,
        match_resources: None,
    }]
}

/// `resourceRules` for `resources` of group `group` and `operations`.
fn resource_rules(group: &str, resources: &[&str], operations: &[&str]) -> Value {
    json!({
        "resourceRules": [{
            "apiGroups": [group],
            "apiVersions": ["*"],
            "operations": operations,
            "resources": resources,
        }],
    })
}

fn render(def: &Definition) -> (Value, Vec<Value>) {
    let variables: Vec<Value> = SHARED
        .iter()
        .chain(def.variables)
        .map(|(name, expression)| json!({"name": name, "expression": expression}))
        .collect();
    let validations: Vec<Value> = def
        .rules
        .iter()
        .map(|r| {
            json!({
                "expression": r.expression,
                "message": r.message,
                "messageExpression": r.message_expression,
                "reason": "Forbidden",
            })
        })
        .collect();
    let labels = json!({"app.kubernetes.io/name": "ledgerops"});
    let mut spec = json!({
        "failurePolicy": "Fail",
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": def.match_constraints,
        "variables": variables,
        "validations": validations,
    });
    if !def.match_conditions.is_empty() {
        spec["matchConditions"] = def
            .match_conditions
            .iter()
            .map(|(name, expression)| json!({"name": name, "expression": expression}))
            .collect();
    }
    let policy = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": def.name, "labels": labels},
        "spec": spec,
    });
    let bindings = def
        .bindings
        .iter()
        .map(|b| {
            let mut spec = json!({
                "policyName": def.name,
                "validationActions": [DENY],
                "paramRef": {
                    "name": PARAMS_NAME,
                    "namespace": PARAMS_NAMESPACE,
                    "parameterNotFoundAction": DENY,
                },
            });
            if let Some(narrowed) = &b.match_resources {
                spec["matchResources"] = narrowed.clone();
            }
            json!({
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": b.name, "labels": labels},
                "spec": spec,
            })
        })
        .collect();
    (policy, bindings)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
