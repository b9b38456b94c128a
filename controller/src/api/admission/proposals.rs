//! Who shaped an object, made truthful: the annotation `ledgerops.dev/proposed-by` is its
//! **lineage**, a comma-separated list of everyone who created it or changed what it proposes.
//! Admission keeps it so, without trusting anyone's word:
//!
//! - whoever creates an object, or changes what it proposes, is on its list (they add their own
//!   name if it is not there yet);
//! - a person adds only their own name, and nobody but the controller removes one: a later
//!   change, a no-op edit or a deleted request never drops a proposer;
//! - changes of metadata alone (labels, other annotations) need not add the sender, but for a
//!   Transaction's `ledgerops.dev/resolve`: `ours` asks to write the spec over someone's edit,
//!   and whoever asks that shaped the write.
//!
//! Four eyes rest on it: nobody on a change's lineage approves it, and a Budget or ConfigRepo
//! acts with the authority of everyone who shaped it, never more.
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

/// The lineage an object names, the one it named before (`[]`: none, or a create), and the one
/// the sender must write when they change what it proposes.
pub const PROPOSER_VARIABLES: &[(&str, &str)] = &[
    (
        "lineage",
        "has(object.metadata.annotations) && 'ledgerops.dev/proposed-by' in object.metadata.annotations ? object.metadata.annotations['ledgerops.dev/proposed-by'].split(',').map(p, p.trim()).filter(p, p != '') : []",
    ),
    (
        "oldLineage",
        "oldObject != null && has(oldObject.metadata.annotations) && 'ledgerops.dev/proposed-by' in oldObject.metadata.annotations ? oldObject.metadata.annotations['ledgerops.dev/proposed-by'].split(',').map(p, p.trim()).filter(p, p != '') : []",
    ),
    (
        "expectedLineage",
        "(variables.user in variables.oldLineage ? variables.oldLineage : variables.oldLineage + [variables.user]).join(',')",
    ),
];

/// The rule, once `variables.proposalChanged` says whether what is proposed changed.
pub const PROPOSER_RULE: Rule = Rule {
    expression: "variables.isController || (variables.oldLineage.all(p, p in variables.lineage) && variables.lineage.all(p, p in variables.oldLineage || p == variables.user) && (!variables.proposalChanged || variables.user in variables.lineage))",
    message: "the annotation ledgerops.dev/proposed-by lists everyone who shaped the object: keep every name it has, and add your own (the user you are authenticated as) when you create or change what it proposes",
    message_expression: "'user ' + variables.user + ' may not ' + variables.verb + ' ' + request.kind.kind + ' ' + variables.name + ' with ledgerops.dev/proposed-by \"' + variables.lineage.join(',') + '\": it lists everyone who shaped the object (its lineage), so keep every name it had and add only your own. Set metadata.annotations[\"ledgerops.dev/proposed-by\"] to \"' + variables.expectedLineage + '\" (kubectl ledgerops apply does it for you); ledgerops uses it for four eyes, so that nobody approves a change they helped propose.'",
};

const VARIABLES: &[(&str, &str)] = &[
    (
        "name",
        "has(object.metadata.name) ? object.metadata.name : object.metadata.generateName",
    ),
    PROPOSER_VARIABLES[0],
    PROPOSER_VARIABLES[1],
    PROPOSER_VARIABLES[2],
    (
        "proposalChanged",
        "oldObject == null || object.spec != oldObject.spec || (has(object.metadata.annotations) && 'ledgerops.dev/resolve' in object.metadata.annotations ? object.metadata.annotations['ledgerops.dev/resolve'] : '') != (has(oldObject.metadata.annotations) && 'ledgerops.dev/resolve' in oldObject.metadata.annotations ? oldObject.metadata.annotations['ledgerops.dev/resolve'] : '')",
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
