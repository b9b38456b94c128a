//! A demoted rule stays demoted: deleting a CategorizationRule whose demotion is in force (a
//! person overrode by hand what ledgerops wrote under it) would let its config repository make it
//! again, blessed by the merge, with no person involved. Deleting one needs the verb `bless`
//! (an approver may lift a demotion by blessing anyway); the controller, the garbage collector
//! and namespace cleanup may too.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-demotions";

const VARIABLES: &[(&str, &str)] = &[
    (
        "demoted",
        "has(oldObject.status) && has(oldObject.status.demotion) && oldObject.status.demotion.generation == oldObject.metadata.generation",
    ),
    (
        "mayBless",
        "authorizer.group('ledgerops.dev').resource('categorizationrules').namespace(request.namespace).name(request.name).check('bless').allowed()",
    ),
];

const RULES: &[Rule] = &[Rule {
    expression: "!variables.demoted || variables.isController || variables.isCleanup || variables.mayBless",
    message: "deleting a demoted CategorizationRule needs the verb bless, which the ClusterRole ledgerops-approver grants",
    message_expression: "'user ' + variables.user + ' may not delete CategorizationRule ' + request.name + ' in namespace ' + request.namespace + ': it is demoted (a person overrode by hand what ledgerops wrote under it), and deleting it would let its config repository bless it again. Lifting a demotion is an approver\\'s act (the verb bless, ClusterRole ledgerops-approver): bless it again in your own name, or merge a changed rule.'",
}];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may delete a demoted CategorizationRule.",
        match_constraints: resource_rules("ledgerops.dev", &["categorizationrules"], &["DELETE"]),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
