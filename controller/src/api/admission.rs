//! Who may write what on an `ApprovalRequest`: a ValidatingAdmissionPolicy and its binding,
//! rendered into `crds/` by `ledgerops crdgen`.
//!
//! The CRD's own CEL rules cannot see who sends a request, so these checks live in a
//! ValidatingAdmissionPolicy (`admissionregistration.k8s.io/v1`, Kubernetes 1.30+):
//!
//! - a decision added to a request must be made in the sender's own name (`spec.decision.by` is
//!   `request.userInfo.username`);
//! - only the ledgerops controller records decisions made through Gitea (`by: gitea:<login>`);
//! - only the controller writes `approvalrequests/status`, changes `spec.escalateTo` and sets,
//!   changes or removes `ledgerops.dev/*` labels.
//!
//! A decision, once made, cannot change: the CRD's rule already refuses that (it runs before any
//! admission policy), so the policy does not repeat it.
//!
//! The controller's user name is a policy parameter: the binding reads `controllerUser` from the
//! ConfigMap [`PARAMS_NAMESPACE`]/[`PARAMS_NAME`] (example: `examples/admission-params.yaml`).
//! When that ConfigMap is missing the binding denies every create and update of an
//! ApprovalRequest, the controller's included (`parameterNotFoundAction: Deny`, `failurePolicy:
//! Fail`): the only alternative Kubernetes offers, `Allow`, skips every check, forged decisions
//! included. An empty `controllerUser` names nobody: people still decide in their own name, and
//! nobody may write status, Gitea decisions, `escalateTo` or `ledgerops.dev/*` labels.

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use serde_json::{Value, json};

/// Name of the policy and of its binding.
pub const POLICY_NAME: &str = "ledgerops-approvalrequests";
/// Namespace of the ConfigMap that holds the policy's parameters.
pub const PARAMS_NAMESPACE: &str = "ledgerops-system";
/// Name of the ConfigMap that holds the policy's parameters.
pub const PARAMS_NAME: &str = "ledgerops-admission";
/// The ConfigMap key naming the controller's user, e.g.
/// `system:serviceaccount:ledgerops-system:ledgerops`.
pub const CONTROLLER_USER_KEY: &str = "controllerUser";

/// The variables the validations share, in evaluation order (a variable may use earlier ones).
const VARIABLES: &[(&str, &str)] = &[
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
    (
        "name",
        "has(object.metadata.name) ? object.metadata.name : object.metadata.generateName",
    ),
    (
        "isStatus",
        "has(request.subResource) && request.subResource == 'status'",
    ),
    (
        "decisionAdded",
        "!variables.isStatus && has(object.spec.decision) && (oldObject == null || !has(oldObject.spec.decision))",
    ),
    (
        "by",
        "variables.decisionAdded ? object.spec.decision.by : ''",
    ),
    (
        "oldLabels",
        "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}",
    ),
    (
        "newLabels",
        "has(object.metadata.labels) ? object.metadata.labels : {}",
    ),
    (
        "changedLabels",
        "variables.newLabels.filter(k, k.startsWith('ledgerops.dev/') && (!(k in variables.oldLabels) || variables.oldLabels[k] != variables.newLabels[k])) + variables.oldLabels.filter(k, k.startsWith('ledgerops.dev/') && !(k in variables.newLabels))",
    ),
    (
        "oldEscalateTo",
        "oldObject != null && has(oldObject.spec.escalateTo) ? oldObject.spec.escalateTo : []",
    ),
    (
        "newEscalateTo",
        "has(object.spec.escalateTo) ? object.spec.escalateTo : []",
    ),
];

/// One validation: the rule, the fallback message, the message naming user and value.
struct Rule {
    expression: &'static str,
    message: &'static str,
    message_expression: &'static str,
}

/// The validations, most specific first: the API server reports the first that fails.
const RULES: &[Rule] = &[
    Rule {
        expression: "!variables.isStatus || variables.isController",
        message: "only the ledgerops controller may write the status of an ApprovalRequest; to answer the request, set spec.decision with your own user name as by",
        message_expression: "'user ' + variables.user + ' may not write the status of ApprovalRequest ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') records it. To answer the request, set spec.decision with \"by\": \"' + variables.user + '\" instead.'",
    },
    Rule {
        expression: "!variables.decisionAdded || variables.by == variables.user || variables.by.startsWith('gitea:')",
        message: "spec.decision.by must be your own user name (the one you are authenticated as)",
        message_expression: "'user ' + variables.user + ' may not record a decision by \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ': spec.decision.by must be your own user name. Set \"by\": \"' + variables.user + '\" to decide yourself, or leave the decision to ' + variables.by + '.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.by.startsWith('gitea:') || variables.isController",
        message: "only the ledgerops controller may record a decision made through Gitea (by: gitea:<login>); set by to your own user name, or comment /agent approve in Gitea",
        message_expression: "'user ' + variables.user + ' may not record the Gitea decision \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') records decisions made through Gitea. Set \"by\": \"' + variables.user + '\" to decide with kubectl, or comment /agent approve ' + variables.name + ' (or /agent reject) in Gitea.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.by.startsWith('gitea:') || variables.by.matches('^gitea:[A-Za-z0-9][A-Za-z0-9_.-]*$')",
        message: "a Gitea decision must be recorded as by: gitea:<login>, with the commenter's Gitea login",
        message_expression: "'the decision by \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ' is not a valid Gitea decision: write gitea:<login> with the Gitea login of the commenter (letters, digits, -, _ and . only).'",
    },
    Rule {
        expression: "variables.isController || size(variables.changedLabels) == 0",
        message: "only the ledgerops controller may set, change or remove ledgerops.dev/ labels on an ApprovalRequest; leave them as they are",
        message_expression: "'user ' + variables.user + ' may not set, change or remove the label(s) ' + variables.changedLabels.join(', ') + ' on ApprovalRequest ' + variables.name + ': ledgerops.dev/ labels tie the request to what it asks about, and only the ledgerops controller (' + variables.controllerName + ') writes them. Leave them as they are; use a label prefix of your own for your labels.'",
    },
    Rule {
        expression: "oldObject == null || variables.isController || variables.newEscalateTo == variables.oldEscalateTo",
        message: "only the ledgerops controller may change spec.escalateTo of an ApprovalRequest; change spec.approval.escalateTo of the Budget instead",
        message_expression: "'user ' + variables.user + ' may not change spec.escalateTo of ApprovalRequest ' + variables.name + ' from [' + variables.oldEscalateTo.join(', ') + '] to [' + variables.newEscalateTo.join(', ') + ']: ledgerops copies it from the Budget. Change spec.approval.escalateTo of the Budget instead; the next request uses it.'",
    },
];

/// The policy that guards ApprovalRequests, and the binding that enforces it with the parameters
/// from ConfigMap `ledgerops-system/ledgerops-admission`.
pub fn approval_policy() -> (ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding) {
    let (policy, binding) = approval_policy_json();
    (
        serde_json::from_value(policy).expect("the policy matches ValidatingAdmissionPolicy"),
        serde_json::from_value(binding)
            .expect("the binding matches ValidatingAdmissionPolicyBinding"),
    )
}

fn approval_policy_json() -> (Value, Value) {
    let variables: Vec<Value> = VARIABLES
        .iter()
        .map(|(name, expression)| json!({"name": name, "expression": expression}))
        .collect();
    let validations: Vec<Value> = RULES
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
    let policy = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": POLICY_NAME, "labels": labels},
        "spec": {
            "failurePolicy": "Fail",
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": [{
                    "apiGroups": ["ledgerops.dev"],
                    "apiVersions": ["*"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["approvalrequests", "approvalrequests/status"],
                }],
            },
            "variables": variables,
            "validations": validations,
        },
    });
    let binding = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": POLICY_NAME, "labels": labels},
        "spec": {
            "policyName": POLICY_NAME,
            "validationActions": ["Deny"],
            "paramRef": {
                "name": PARAMS_NAME,
                "namespace": PARAMS_NAMESPACE,
                "parameterNotFoundAction": "Deny",
            },
        },
    });
    (policy, binding)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// k8s-openapi drops fields it does not know: a misspelt field would vanish silently.
    #[test]
    fn typed_objects_keep_every_field() {
        let (policy, binding) = approval_policy();
        let (policy_json, binding_json) = approval_policy_json();
        assert_eq!(serde_json::to_value(&policy).unwrap(), policy_json);
        assert_eq!(serde_json::to_value(&binding).unwrap(), binding_json);
    }

    #[test]
    fn variables_are_defined_before_use() {
        for (i, (name, _)) in VARIABLES.iter().enumerate() {
            let reference = format!("variables.{name}");
            for (later, expression) in &VARIABLES[..i] {
                assert!(
                    !expression.contains(&reference),
                    "variable {later} uses {name}, defined after it"
                );
            }
        }
    }

    #[test]
    fn every_rule_is_forbidden_with_a_message() {
        let (policy, binding) = approval_policy();
        let spec = policy.spec.unwrap();
        for v in spec.validations.unwrap() {
            assert_eq!(v.reason.as_deref(), Some("Forbidden"));
            assert!(v.message.is_some_and(|m| !m.is_empty()));
            assert!(v.message_expression.is_some());
        }
        let param_ref = binding.spec.unwrap().param_ref.unwrap();
        assert_eq!(
            param_ref.parameter_not_found_action.as_deref(),
            Some("Deny")
        );
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
    }
}
