//! The `status` of every ledgerops kind is what the controller did and saw: only it writes it.
//! A status written by someone else could claim a preview, an approval or a phase that never
//! happened.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-status";

/// The status subresource of every kind in `ledgerops.dev`.
pub const RESOURCES: &[&str] = &[
    "budgets/status",
    "transactions/status",
    "categorizationplans/status",
    "approvalrequests/status",
    "agentjobs/status",
    "configrepos/status",
    "categorizationrules/status",
];

const VARIABLES: &[(&str, &str)] = &[
    ("name", "object.metadata.name"),
    ("kind", "request.kind.kind"),
];

const RULES: &[Rule] = &[Rule {
    expression: "variables.isController",
    message: "only the ledgerops controller writes the status of ledgerops objects; change the spec instead (to answer an ApprovalRequest, set spec.decision in your own name)",
    message_expression: "'user ' + variables.user + ' may not write the status of ' + variables.kind + ' ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') records it. ' + (variables.kind == 'ApprovalRequest' ? 'To answer the request, set spec.decision with \"by\": \"' + variables.user + '\" instead.' : 'Change its spec instead; ledgerops reports what it did in the status.')",
}];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may write the status of ledgerops objects.",
        match_constraints: resource_rules("ledgerops.dev", RESOURCES, &["UPDATE"]),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
