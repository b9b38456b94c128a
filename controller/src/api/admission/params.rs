//! The parameters that name the controller (ConfigMap `ledgerops-system/ledgerops-admission`)
//! define its authority: the controller itself never changes or deletes them, whatever RBAC it
//! is given (a release namespace that is also a Budget namespace gives it ConfigMap rights there).
//!
//! CREATE is not matched: while the ConfigMap is missing every binding denies (its parameters are
//! that ConfigMap), and an administrator must be able to create it.

use serde_json::json;

use super::{BindingDef, Definition, PARAMS_NAME, Rule, resource_rules};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-params";

const RULES: &[Rule] = &[Rule {
    expression: "!variables.isController",
    message: "the ledgerops controller may not change the admission parameters that define its own authority",
    message_expression: "'user ' + variables.user + ' (the ledgerops controller) may not ' + variables.verb + ' ConfigMap ' + request.namespace + '/' + request.name + ': it names the controller to the admission policies, and the controller never changes its own authority. A cluster administrator changes it.'",
}];

pub fn definition() -> Definition {
    let mut by_name = resource_rules("", &["configmaps"], &["UPDATE", "DELETE"]);
    by_name["resourceRules"][0]["resourceNames"] = json!([PARAMS_NAME]);
    by_name["namespaceSelector"] = json!({"matchLabels": {
        "kubernetes.io/metadata.name": super::PARAMS_NAMESPACE,
    }});
    Definition {
        name: NAME,
        about: "The controller never changes the parameters that name it.",
        match_constraints: resource_rules("", &["configmaps"], &["UPDATE", "DELETE"]),
        match_conditions: &[(
            "admission-params",
            "request.namespace == 'ledgerops-system' && request.name == 'ledgerops-admission'",
        )],
        variables: &[],
        rules: RULES,
        bindings: vec![BindingDef {
            name: NAME,
            match_resources: Some(by_name),
        }],
    }
}
