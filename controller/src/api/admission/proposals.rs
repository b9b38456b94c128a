//! Who proposed an object, made truthful: on every create, and on every change of its spec, the
//! annotation `ledgerops.dev/proposed-by` must name the sender, and nobody but the sender may put
//! their own name there. Four eyes rest on it: the proposer of a change cannot approve it, and a
//! Budget or ConfigRepo acts with the authority of whoever last changed it. Changes of metadata
//! alone (labels, other annotations) keep the proposer.
//!
//! Covers Transactions, CategorizationPlans, Budgets and ConfigRepos; CategorizationRules have
//! the same rule in [`super::rules`], where a blessing alone does not make the blesser the
//! rule's author.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-proposals";

/// The kinds whose spec names what is proposed.
pub const RESOURCES: &[&str] = &[
    "transactions",
    "categorizationplans",
    "budgets",
    "configrepos",
];

/// The proposer an object names, and the one it named before (`''`: none, or a create).
pub const PROPOSER_VARIABLES: &[(&str, &str)] = &[
    (
        "proposer",
        "has(object.metadata.annotations) && 'ledgerops.dev/proposed-by' in object.metadata.annotations ? object.metadata.annotations['ledgerops.dev/proposed-by'] : ''",
    ),
    (
        "oldProposer",
        "oldObject != null && has(oldObject.metadata.annotations) && 'ledgerops.dev/proposed-by' in oldObject.metadata.annotations ? oldObject.metadata.annotations['ledgerops.dev/proposed-by'] : ''",
    ),
];

/// The rule, once `variables.proposalChanged` says whether what is proposed changed.
pub const PROPOSER_RULE: Rule = Rule {
    expression: "variables.isController || !(variables.proposalChanged || variables.proposer != variables.oldProposer) || variables.proposer == variables.user",
    message: "the annotation ledgerops.dev/proposed-by must name you (the user you are authenticated as) when you create or change what an object proposes",
    message_expression: "'user ' + variables.user + ' may not ' + variables.verb + ' ' + request.kind.kind + ' ' + variables.name + ' with ledgerops.dev/proposed-by \"' + variables.proposer + '\": whoever creates or changes what it proposes must name themselves. Set metadata.annotations[\"ledgerops.dev/proposed-by\"] to \"' + variables.user + '\" (kubectl ledgerops apply does it for you); ledgerops uses it for four eyes, so that nobody approves their own proposal.'",
};

const VARIABLES: &[(&str, &str)] = &[
    (
        "name",
        "has(object.metadata.name) ? object.metadata.name : object.metadata.generateName",
    ),
    PROPOSER_VARIABLES[0],
    PROPOSER_VARIABLES[1],
    (
        "proposalChanged",
        "oldObject == null || object.spec != oldObject.spec",
    ),
];

const RULES: &[Rule] = &[PROPOSER_RULE];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who proposed a Transaction, plan, Budget or ConfigRepo: the sender, always.",
        match_constraints: resource_rules("ledgerops.dev", RESOURCES, &["CREATE", "UPDATE"]),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
