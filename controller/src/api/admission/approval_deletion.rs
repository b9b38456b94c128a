//! Deleting a decided ApprovalRequest: only the controller may (its retention), and anyone once
//! its namespace is being deleted. Not the garbage collector: a decided request is a record that
//! outlives its subject (ledgerops drops its owner reference), and an owner reference someone
//! points at a missing object must not erase it. The request is the record of who decided what;
//! deleting it would erase that record and reset a rejection. A request still waiting for a
//! decision may be deleted by someone who shaped the change (`spec.proposedBy`) or who may
//! decide it (`approve`), and by Kubernetes' own cleanup: ledgerops opens a new one. Anyone
//! else deleting it would only keep the household from ever being asked.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-approvalrequest-deletion";

// On DELETE `object` is null: everything comes from `oldObject`.
const VARIABLES: &[(&str, &str)] = &[
    ("name", "oldObject.metadata.name"),
    ("decided", "has(oldObject.spec.decision)"),
    (
        "decision",
        "variables.decided ? oldObject.spec.decision.verdict + ' decision by ' + oldObject.spec.decision.by : ''",
    ),
    (
        "namespaceGoing",
        "namespaceObject != null && has(namespaceObject.status) && has(namespaceObject.status.phase) && namespaceObject.status.phase == 'Terminating'",
    ),
    (
        "subject",
        "oldObject.spec.subject.kind + ' ' + oldObject.spec.subject.name",
    ),
    (
        "proposedBy",
        "has(oldObject.spec.proposedBy) ? oldObject.spec.proposedBy : []",
    ),
    (
        "mayApprove",
        "authorizer.group('ledgerops.dev').resource('approvalrequests').namespace(request.namespace).name(request.name).check('approve').allowed()",
    ),
];

const RULES: &[Rule] = &[
    Rule {
        expression: "!variables.decided || variables.isController || variables.namespaceGoing",
        message: "a decided ApprovalRequest records who decided; only the ledgerops controller deletes it. Edit or delete the plan or transaction it is about instead",
        message_expression: "'user ' + variables.user + ' may not delete ApprovalRequest ' + variables.name + ': it records the ' + variables.decision + ', and only the ledgerops controller (' + variables.controllerName + ') deletes decided requests. Leave it in place; to stop or redo the change, edit or delete ' + variables.subject + ' instead.'",
    },
    Rule {
        expression: "variables.decided || variables.isController || variables.namespaceGoing || variables.isCleanup || variables.user in variables.proposedBy || variables.mayApprove",
        message: "a waiting ApprovalRequest is deleted only by someone who shaped the change it asks about, or who may decide it",
        message_expression: "'user ' + variables.user + ' may not delete ApprovalRequest ' + variables.name + ': it waits for a decision on ' + variables.subject + ', and only someone who shaped that change (' + variables.proposedBy.join(', ') + ') or who holds approve on approvalrequests deletes a waiting request. To withdraw the change, edit or delete ' + variables.subject + ' instead.'",
    },
];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may delete a decided ApprovalRequest.",
        match_constraints: resource_rules("ledgerops.dev", &["approvalrequests"], &["DELETE"]),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
