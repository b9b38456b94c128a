//! Governing: a Budget's whole spec (writes, approval policy, autopilot and its
//! breaker, API URL, token Secret, request budget, closed months) and a governing ConfigRepo are
//! an owner's. Creating, changing or deleting them needs the custom verb `govern` (ClusterRole
//! `ledgerops-owner`), checked with the authorizer; so does naming someone else as their proposer,
//! which would change who answers for them, and changing their owner references or finalizers,
//! which would let the garbage collector delete them or keep a deleted one from going
//! (Kubernetes' own cleanup may still remove one), and confirming a governing ConfigRepo's held
//! revision (a large prune, a rewritten branch). Changes of other metadata (labels, other
//! annotations) are not governing.
//!
//! A ConfigRepo with `spec.authority: Propose` (the default) proposes only, and anyone RBAC lets
//! write ConfigRepos may make one; `Govern`, or changing or deleting one that governs, is an
//! owner's act.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-governance";

const OPERATIONS: &[&str] = &["CREATE", "UPDATE", "DELETE"];

// On DELETE `object` is null, on CREATE `oldObject`.
const VARIABLES: &[(&str, &str)] = &[
    ("name", "request.name"),
    ("kind", "request.kind.kind"),
    (
        "proposer",
        "object != null && has(object.metadata.annotations) && 'ledgerops.dev/proposed-by' in object.metadata.annotations ? object.metadata.annotations['ledgerops.dev/proposed-by'] : ''",
    ),
    (
        "oldProposer",
        "oldObject != null && has(oldObject.metadata.annotations) && 'ledgerops.dev/proposed-by' in oldObject.metadata.annotations ? oldObject.metadata.annotations['ledgerops.dev/proposed-by'] : ''",
    ),
    (
        "specChanged",
        "oldObject == null || object == null || object.spec != oldObject.spec || variables.proposer != variables.oldProposer",
    ),
    // An owner reference to a missing object would have the garbage collector delete it; a
    // finalizer would keep a deleted one from going (ledgerops sets none).
    (
        "ownersChanged",
        "object != null && oldObject != null && ((has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) != (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []) || (has(object.metadata.finalizers) ? object.metadata.finalizers : []) != (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []))",
    ),
    // Confirming a held revision (a large prune, a rewritten branch) lets it through.
    (
        "confirmChanged",
        "object != null && oldObject != null && ['ledgerops.dev/confirm-prune', 'ledgerops.dev/confirm-rewrite'].exists(k, (has(object.metadata.annotations) && k in object.metadata.annotations ? object.metadata.annotations[k] : '') != (has(oldObject.metadata.annotations) && k in oldObject.metadata.annotations ? oldObject.metadata.annotations[k] : ''))",
    ),
    (
        "changed",
        "variables.specChanged || variables.ownersChanged || variables.confirmChanged",
    ),
    (
        "governing",
        "variables.kind == 'Budget' || (object != null && has(object.spec.authority) && object.spec.authority == 'Govern') || (oldObject != null && has(oldObject.spec.authority) && oldObject.spec.authority == 'Govern')",
    ),
    (
        "mayGovern",
        "authorizer.group('ledgerops.dev').resource(request.resource.resource).namespace(request.namespace).name(request.name).check('govern').allowed()",
    ),
];

const RULES: &[Rule] = &[Rule {
    expression: "variables.isController || !variables.changed || !variables.governing || variables.mayGovern || (variables.isCleanup && !variables.specChanged)",
    message: "governing (a Budget, or a ConfigRepo with authority Govern) needs the verb govern, which the ClusterRole ledgerops-owner grants",
    message_expression: "'user ' + variables.user + ' may not ' + variables.verb + ' ' + variables.kind + ' ' + variables.name + ' in namespace ' + request.namespace + ': ' + (variables.kind == 'Budget' ? 'a Budget\\'s spec (writes, approval policy, four eyes, autopilot, API URL, token, request budget, closed months) is governed' : 'a ConfigRepo with authority Govern declares Budgets and blesses rules, and is governed') + ' (owner references, finalizers and confirmations of held revisions included), which needs the verb govern on ' + request.resource.resource + ' (the ClusterRole ledgerops-owner grants it; edit and ledgerops-edit never do). Ask an owner to make the change.'",
}];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may govern: a Budget's spec and a governing ConfigRepo are an owner's.",
        match_constraints: resource_rules("ledgerops.dev", &["budgets", "configrepos"], OPERATIONS),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
