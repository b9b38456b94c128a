//! The ConfigMaps ledgerops trusts: the journal of applied plans (label `ledgerops.dev/journal`,
//! the undo data), the `/agent` receive sequence (`ledgerops-agentjob-sequence`) and the record
//! of each token's YNAB requests (`ledgerops-request-window`). Only the
//! controller creates, changes (labels included) and deletes them; Kubernetes' garbage collector
//! and namespace cleanup may delete them too.
//!
//! Two bindings select them, one by label and one by name, so that no other ConfigMap write in
//! the cluster waits on this policy's parameters (see the module above). The `matchConditions`
//! select any `ledgerops.dev/` label, for a binding that matches more.

use serde_json::json;

use super::{BindingDef, Definition, Rule, resource_rules};

/// Name of the policy.
pub const NAME: &str = "ledgerops-configmaps";
/// The binding for journal ConfigMaps (and any ConfigMap that gains or loses the label).
pub const JOURNAL_BINDING: &str = "ledgerops-configmaps-journal";
/// The binding for the receive-sequence ConfigMap.
pub const SEQUENCE_BINDING: &str = "ledgerops-configmaps-sequence";
/// The label that marks a journal ConfigMap (`crate::k8s::journal`).
pub const JOURNAL_LABEL: &str = "ledgerops.dev/journal";
/// The ConfigMap holding the next `/agent` receive sequence (`crate::agent::store`).
pub const SEQUENCE_CONFIGMAP: &str = "ledgerops-agentjob-sequence";
/// The ConfigMap recording each token's YNAB requests (`crate::k8s::request_record`).
pub const REQUESTS_CONFIGMAP: &str = "ledgerops-request-window";

const OPERATIONS: &[&str] = &["CREATE", "UPDATE", "DELETE"];

const MATCH_CONDITIONS: &[(&str, &str)] = &[(
    "ledgerops-configmap",
    "(object != null && ((has(object.metadata.name) && object.metadata.name in ['ledgerops-agentjob-sequence', 'ledgerops-request-window']) || (has(object.metadata.labels) && object.metadata.labels.exists(k, k.startsWith('ledgerops.dev/'))))) || (oldObject != null && (oldObject.metadata.name in ['ledgerops-agentjob-sequence', 'ledgerops-request-window'] || (has(oldObject.metadata.labels) && oldObject.metadata.labels.exists(k, k.startsWith('ledgerops.dev/')))))",
)];

// On DELETE `object` is null, on CREATE `oldObject`.
const VARIABLES: &[(&str, &str)] = &[
    (
        "name",
        "object != null ? (has(object.metadata.name) ? object.metadata.name : object.metadata.generateName) : oldObject.metadata.name",
    ),
    (
        "oldLabels",
        "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}",
    ),
    (
        "newLabels",
        "object != null && has(object.metadata.labels) ? object.metadata.labels : {}",
    ),
    (
        "ledgeropsLabels",
        "variables.newLabels.filter(k, k.startsWith('ledgerops.dev/')) + variables.oldLabels.filter(k, k.startsWith('ledgerops.dev/') && !(k in variables.newLabels))",
    ),
    (
        "what",
        "variables.name == 'ledgerops-agentjob-sequence' ? 'the /agent receive sequence' : variables.name == 'ledgerops-request-window' ? 'the record of YNAB requests' : 'labelled ' + variables.ledgeropsLabels.join(', ')",
    ),
];

const RULES: &[Rule] = &[Rule {
    expression: "variables.isController || variables.isCleanup",
    message: "only the ledgerops controller writes its journal ConfigMaps (ledgerops.dev/ labels), ledgerops-agentjob-sequence and ledgerops-request-window; keep your own data in a ConfigMap without ledgerops.dev/ labels",
    message_expression: "'user ' + variables.user + ' may not ' + variables.verb + ' ConfigMap ' + variables.name + ' (' + variables.what + '): ConfigMaps with ledgerops.dev/ labels hold the ledgerops journal of applied plans, ledgerops-agentjob-sequence numbers /agent commands, and ledgerops-request-window counts YNAB requests against the hourly limit; only the ledgerops controller (' + variables.controllerName + ') writes them. Keep your own data in a ConfigMap without ledgerops.dev/ labels and under another name.'",
}];

pub fn definition() -> Definition {
    let mut by_name = resource_rules("", &["configmaps"], OPERATIONS);
    by_name["resourceRules"][0]["resourceNames"] = json!([SEQUENCE_CONFIGMAP, REQUESTS_CONFIGMAP]);
    Definition {
        name: NAME,
        about: "Who may write the ConfigMaps ledgerops trusts (journal, /agent sequence, request record).",
        match_constraints: resource_rules("", &["configmaps"], OPERATIONS),
        match_conditions: MATCH_CONDITIONS,
        variables: VARIABLES,
        rules: RULES,
        bindings: vec![
            BindingDef {
                name: JOURNAL_BINDING,
                match_resources: Some(json!({
                    "objectSelector": {
                        "matchExpressions": [{"key": JOURNAL_LABEL, "operator": "Exists"}],
                    },
                })),
            },
            BindingDef {
                name: SEQUENCE_BINDING,
                match_resources: Some(by_name),
            },
        ],
    }
}

#[cfg(test)]
#[path = "configmaps_tests.rs"]
mod tests;
