//! Blessing CategorizationRules: a blessing is a person's act, in their own name.
//!
//! - a blessing set or changed names the sender (`spec.blessing.by` is
//!   `request.userInfo.username`); only the controller records one for a rule merged into a
//!   config repo (`by: configrepo:<name>`);
//! - the match or the category of a blessed rule changes only with a new blessing in the
//!   changer's name (or by the controller): otherwise a person's blessing would vouch for a rule
//!   they never saw;
//! - blessing needs the custom verb `bless` on `categorizationrules` (ClusterRole
//!   `ledgerops-approver`), checked with the authorizer;
//! - `ledgerops.dev/proposed-by` lists everyone who created the rule or changed its match or
//!   category (see [`super::proposals`]); a blessing alone does not make the blesser an author;
//! - its owner references and finalizers change only with `bless` (or by the controller, or
//!   Kubernetes' own cleanup): a dangling owner reference would delete a rule through the garbage
//!   collector.
//!
//! Four eyes on rules (the author cannot bless their own rule) depend on the Budget, which
//! admission cannot read: the controller checks them before the rule may speak.

//!
//! Anyone may write a rule without a blessing (a Candidate, which never acts). Status writes
//! are [`super::status`]'s.

use super::proposals::{PROPOSER_RULE, PROPOSER_VARIABLES};
use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-categorizationrules";

const VARIABLES: &[(&str, &str)] = &[
    (
        "name",
        "has(object.metadata.name) ? object.metadata.name : object.metadata.generateName",
    ),
    (
        "blessingSet",
        "has(object.spec.blessing) && (oldObject == null || !has(oldObject.spec.blessing) || oldObject.spec.blessing != object.spec.blessing)",
    ),
    ("by", "variables.blessingSet ? object.spec.blessing.by : ''"),
    (
        "mayBless",
        "authorizer.group('ledgerops.dev').resource('categorizationrules').namespace(request.namespace).name(request.name).check('bless').allowed()",
    ),
    PROPOSER_VARIABLES[0],
    PROPOSER_VARIABLES[1],
    PROPOSER_VARIABLES[2],
    // A blessing alone does not make the blesser the rule's author.
    (
        "proposalChanged",
        "oldObject == null || object.spec.match != oldObject.spec.match || object.spec.categoryId != oldObject.spec.categoryId",
    ),
    // An owner reference (to a missing object, say) would have the garbage collector delete the
    // rule, and a finalizer would keep a deleted one acting: both take what deleting takes.
    (
        "ownersChanged",
        "oldObject != null && ((has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) != (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []) || (has(object.metadata.finalizers) ? object.metadata.finalizers : []) != (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []))",
    ),
    (
        "ruleChanged",
        "oldObject != null && (object.spec.match != oldObject.spec.match || object.spec.categoryId != oldObject.spec.categoryId)",
    ),
];

const RULES: &[Rule] = &[
    Rule {
        expression: "!variables.blessingSet || !variables.by.startsWith('configrepo:') || variables.isController",
        message: "only the ledgerops controller records a blessing by a config repo (by: configrepo:<name>); bless the rule in your own name instead",
        message_expression: "'user ' + variables.user + ' may not record the blessing \"' + variables.by + '\" on CategorizationRule ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') records blessings of rules merged into a config repo. Set spec.blessing.by to \"' + variables.user + '\" to bless it yourself, or merge the rule into the config repo.'",
    },
    Rule {
        expression: "!variables.blessingSet || variables.isController || variables.mayBless",
        message: "blessing a CategorizationRule needs the verb bless on categorizationrules, which the ClusterRole ledgerops-approver grants",
        message_expression: "'user ' + variables.user + ' may not bless CategorizationRule ' + variables.name + ' in namespace ' + request.namespace + ': blessing needs the verb bless on categorizationrules, which the ClusterRole ledgerops-approver grants (the edit role and ledgerops-edit write rules but never bless them). Leave spec.blessing out; the rule stays a Candidate until an approver blesses it.'",
    },
    Rule {
        expression: "!variables.blessingSet || variables.by == variables.user || variables.isController",
        message: "spec.blessing.by must be your own user name (the one you are authenticated as)",
        message_expression: "'user ' + variables.user + ' may not bless CategorizationRule ' + variables.name + ' in the name of \"' + variables.by + '\": spec.blessing.by must be your own user name. Set \"by\": \"' + variables.user + '\" to bless it yourself, or ask ' + variables.by + ' to.'",
    },
    Rule {
        expression: "!has(object.spec.blessing) || !variables.ruleChanged || variables.blessingSet || variables.isController",
        message: "the match or category of a blessed rule changes only with a new blessing in your own name; set spec.blessing (by: you, a new at) in the same change, or remove the blessing",
        message_expression: "'user ' + variables.user + ' may not change the match or category of CategorizationRule ' + variables.name + ' under the blessing of ' + object.spec.blessing.by + ': a blessing vouches for the rule as it was blessed. Bless it again in the same change (spec.blessing.by \"' + variables.user + '\", a new spec.blessing.at), or remove spec.blessing and let someone bless it.'",
    },
    Rule {
        expression: "!variables.ownersChanged || variables.isController || variables.isCleanup || variables.mayBless",
        message: "changing a CategorizationRule's owner references or finalizers needs the verb bless on categorizationrules: they decide when the garbage collector deletes it",
        message_expression: "'user ' + variables.user + ' may not change the owner references or finalizers of CategorizationRule ' + variables.name + ' in namespace ' + request.namespace + ': an owner reference lets the garbage collector delete the rule (a demotion or blessing undone without anyone holding bless), so it needs the verb bless on categorizationrules, which the ClusterRole ledgerops-approver grants. Leave metadata.ownerReferences and metadata.finalizers as they are, or ask an approver.'",
    },
    PROPOSER_RULE,
];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may bless a CategorizationRule, and change a blessed one.",
        match_constraints: resource_rules(
            "ledgerops.dev",
            &["categorizationrules"],
            &["CREATE", "UPDATE"],
        ),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
