//! AgentJobs: the controller creates one for each `/agent` comment it receives from Gitea and
//! evolves it; nobody else creates, changes or deletes them (Kubernetes' garbage collector and
//! namespace cleanup aside). A job made by hand would otherwise become a decision in the name of
//! whoever it says commented. Its status is [`super::status`]'s.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-agentjobs";

// On DELETE `object` is null.
const VARIABLES: &[(&str, &str)] = &[(
    "name",
    "object != null ? (has(object.metadata.name) ? object.metadata.name : object.metadata.generateName) : oldObject.metadata.name",
)];

const RULES: &[Rule] = &[Rule {
    expression: "variables.isController || variables.isCleanup",
    message: "only the ledgerops controller creates, changes and deletes AgentJobs; comment /agent approve (or /agent reject) in Gitea instead",
    message_expression: "'user ' + variables.user + ' may not ' + variables.verb + ' AgentJob ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') creates and changes AgentJobs, one for each /agent comment it receives from Gitea. Comment /agent approve <request> (or /agent reject <request> <why>) on the Gitea pull request instead.'",
}];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may create, change and delete AgentJobs.",
        match_constraints: resource_rules(
            "ledgerops.dev",
            &["agentjobs"],
            &["CREATE", "UPDATE", "DELETE"],
        ),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
