//! Creating and answering ApprovalRequests.
//!
//! - only the controller creates them, each for a change it previewed itself;
//! - a decision is added only while the request is Pending (its status phase unset or
//!   `Pending`): never on an Expired, Stale or otherwise finished request, whoever sends it;
//! - a decision is made in the sender's own name (`spec.decision.by` is
//!   `request.userInfo.username`);
//! - only the controller records decisions made through Gitea (`by: gitea:<login>`);
//! - only the controller changes `spec.escalateTo` and sets, changes or removes `ledgerops.dev/*`
//!   labels;
//! - the decider's groups, when recorded (`spec.decision.groups`), are exactly the sender's own,
//!   so the controller may ask the authorizer with them;
//! - deciding needs the custom verb `approve` on `approvalrequests` (ClusterRole
//!   `ledgerops-approver`), checked with the authorizer: `update` or `patch` alone never decides;
//! - four eyes: when the request says so (`spec.fourEyes`, copied from the Budget), the decider is
//!   outside the change's lineage (`spec.proposedBy`, which ledgerops gathers from the subject's
//!   `ledgerops.dev/proposed-by`, admission-kept, and from what the subject came through), and an approver's edits only
//!   drop lines (a category the approver chooses is their own proposal);
//! - only the controller changes owner references and finalizers (Kubernetes' cleanup too, on a
//!   request nobody decided): a decided request is a record, not a dependent to collect.
//!
//! A decision, once made, cannot change: the CRD's rule already refuses that (it runs before any
//! admission policy). Status writes are [`super::status`]'s, deletion [`super::approval_deletion`]'s.

use super::{Definition, Rule, resource_rules, whole};

/// Name of the policy and of its binding.
pub const NAME: &str = "ledgerops-approvalrequests";

const VARIABLES: &[(&str, &str)] = &[
    (
        "name",
        "has(object.metadata.name) ? object.metadata.name : object.metadata.generateName",
    ),
    (
        "decisionAdded",
        "has(object.spec.decision) && (oldObject == null || !has(oldObject.spec.decision))",
    ),
    (
        "by",
        "variables.decisionAdded ? object.spec.decision.by : ''",
    ),
    (
        "groups",
        "variables.decisionAdded && has(object.spec.decision.groups) ? object.spec.decision.groups : []",
    ),
    (
        "senderGroups",
        "has(request.userInfo.groups) ? request.userInfo.groups : []",
    ),
    (
        "oldPhase",
        "oldObject != null && has(oldObject.status) && has(oldObject.status.phase) ? oldObject.status.phase : ''",
    ),
    (
        "oldLabels",
        "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}",
    ),
    (
        "newLabels",
        "has(object.metadata.labels) ? object.metadata.labels : {}",
    ),
    (
        "changedLabels",
        "variables.newLabels.filter(k, k.startsWith('ledgerops.dev/') && (!(k in variables.oldLabels) || variables.oldLabels[k] != variables.newLabels[k])) + variables.oldLabels.filter(k, k.startsWith('ledgerops.dev/') && !(k in variables.newLabels))",
    ),
    (
        "oldEscalateTo",
        "oldObject != null && has(oldObject.spec.escalateTo) ? oldObject.spec.escalateTo : []",
    ),
    (
        "newEscalateTo",
        "has(object.spec.escalateTo) ? object.spec.escalateTo : []",
    ),
    (
        "proposedBy",
        "has(object.spec.proposedBy) ? object.spec.proposedBy : []",
    ),
    (
        "fourEyes",
        "has(object.spec.fourEyes) && object.spec.fourEyes",
    ),
    (
        "mayApprove",
        "authorizer.group('ledgerops.dev').resource('approvalrequests').namespace(request.namespace).name(request.name).check('approve').allowed()",
    ),
    (
        "ownersChanged",
        "oldObject != null && ((has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) != (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : []) || (has(object.metadata.finalizers) ? object.metadata.finalizers : []) != (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []))",
    ),
    (
        "oldDecided",
        "oldObject != null && has(oldObject.spec.decision)",
    ),
];

const RULES: &[Rule] = &[
    Rule {
        expression: "oldObject != null || variables.isController",
        message: "only the ledgerops controller creates ApprovalRequests; apply the CategorizationPlan or Transaction and ledgerops asks for approval itself",
        message_expression: "'user ' + variables.user + ' may not create ApprovalRequest ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') creates ApprovalRequests, each for a change it previewed itself. Apply the CategorizationPlan or Transaction instead; ledgerops opens the request, and you answer it by setting spec.decision.'",
    },
    Rule {
        expression: "!variables.decisionAdded || variables.oldPhase == '' || variables.oldPhase == 'Pending'",
        message: "a decision is taken only while the ApprovalRequest is Pending; answer the newer request ledgerops opens instead",
        message_expression: "'user ' + variables.user + ' may not decide ApprovalRequest ' + variables.name + ': it is ' + variables.oldPhase + ', and a decision is taken only while a request is Pending. Nothing is written for it; answer the newer request ledgerops opens for the same plan or transaction (kubectl get approvalrequests), or change that object to ask again.'",
    },
    Rule {
        expression: "!variables.decisionAdded || variables.by == variables.user || variables.by.startsWith('gitea:')",
        message: "spec.decision.by must be your own user name (the one you are authenticated as)",
        message_expression: "'user ' + variables.user + ' may not record a decision by \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ': spec.decision.by must be your own user name. Set \"by\": \"' + variables.user + '\" to decide yourself, or leave the decision to ' + variables.by + '.'",
    },
    Rule {
        expression: "size(variables.groups) == 0 || (!variables.by.startsWith('gitea:') && variables.groups.all(g, g in variables.senderGroups) && variables.senderGroups.all(g, g in variables.groups))",
        message: "spec.decision.groups must be exactly the groups you are authenticated with (kubectl auth whoami lists them), or left out",
        message_expression: "'user ' + variables.user + ' may not record the groups [' + variables.groups.join(', ') + '] with a decision on ApprovalRequest ' + variables.name + ': spec.decision.groups must be exactly the groups the API server authenticated you with ([' + variables.senderGroups.join(', ') + ']; kubectl auth whoami lists them), or left out (then only roles bound to your user name count). kubectl ledgerops approve records them for you.'",
    },
    Rule {
        expression: "!variables.decisionAdded || variables.isController || variables.mayApprove",
        message: "deciding an ApprovalRequest needs the verb approve on approvalrequests, which the ClusterRole ledgerops-approver grants; editing rights alone never decide",
        message_expression: "'user ' + variables.user + ' may not decide ApprovalRequest ' + variables.name + ' in namespace ' + request.namespace + ': deciding needs the verb approve on approvalrequests, which the ClusterRole ledgerops-approver grants (the edit role and ledgerops-edit propose but never decide). Ask someone bound to ledgerops-approver to decide it.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.fourEyes || !(variables.by in variables.proposedBy)",
        message: "nobody who shaped a change can approve it (four eyes): another approver must decide",
        message_expression: "'user ' + variables.user + ' may not decide ApprovalRequest ' + variables.name + ': ' + variables.by + ' is in the lineage of the change it asks about (spec.proposedBy: ' + variables.proposedBy.join(', ') + '), and the Budget asks for four eyes (spec.approval.fourEyes), so nobody who shaped it can also decide it. Ask another person bound to ledgerops-approver.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !has(object.spec.decision.edits) || object.spec.subject.kind == 'CategorizationPlan'",
        message: "only the approval of a CategorizationPlan carries edits; to change a Transaction, change its spec",
        message_expression: "'user ' + variables.user + ' may not approve ApprovalRequest ' + variables.name + ' with edits: it asks about a ' + object.spec.subject.kind + ', and only the approval of a CategorizationPlan carries edits. Approve or reject it as it is, or change the ' + object.spec.subject.kind + ' itself.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.fourEyes || !has(object.spec.decision.edits) || !has(object.spec.decision.edits.set) || size(object.spec.decision.edits.set) == 0",
        message: "with four eyes, an approver may drop lines from a proposal but not choose categories: a category the approver chooses is their own proposal, which another approver must decide",
        message_expression: "'user ' + variables.user + ' may not approve ApprovalRequest ' + variables.name + ' with edits that set categories: the Budget asks for four eyes (spec.approval.fourEyes), and a category the approver chooses is their own proposal, which they cannot also approve. Drop the lines instead (edits.drop), or change the plan and let another approver decide.'",
    },
    Rule {
        expression: "!variables.ownersChanged || variables.isController || (variables.isCleanup && !variables.oldDecided)",
        message: "only the ledgerops controller adds, changes or removes the owner references and finalizers of an ApprovalRequest; a decided request is a record that outlives what it is about",
        message_expression: "'user ' + variables.user + ' may not change the owner references or finalizers of ApprovalRequest ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') does; ' + (variables.oldDecided ? 'it is decided and records who decided, and it must outlive what it is about.' : 'they tie the request to what it asks about.') + ' Leave metadata.ownerReferences and metadata.finalizers as they are.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.by.startsWith('gitea:') || variables.isController",
        message: "only the ledgerops controller may record a decision made through Gitea (by: gitea:<login>); set by to your own user name, or comment /agent approve in Gitea",
        message_expression: "'user ' + variables.user + ' may not record the Gitea decision \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ': only the ledgerops controller (' + variables.controllerName + ') records decisions made through Gitea. Set \"by\": \"' + variables.user + '\" to decide with kubectl, or comment /agent approve ' + variables.name + ' (or /agent reject) in Gitea.'",
    },
    Rule {
        expression: "!variables.decisionAdded || !variables.by.startsWith('gitea:') || variables.by.matches('^gitea:[A-Za-z0-9][A-Za-z0-9_.-]*$')",
        message: "a Gitea decision must be recorded as by: gitea:<login>, with the commenter's Gitea login",
        message_expression: "'the decision by \"' + variables.by + '\" on ApprovalRequest ' + variables.name + ' is not a valid Gitea decision: write gitea:<login> with the Gitea login of the commenter (letters, digits, -, _ and . only).'",
    },
    Rule {
        expression: "variables.isController || size(variables.changedLabels) == 0",
        message: "only the ledgerops controller may set, change or remove ledgerops.dev/ labels on an ApprovalRequest; leave them as they are",
        message_expression: "'user ' + variables.user + ' may not set, change or remove the label(s) ' + variables.changedLabels.join(', ') + ' on ApprovalRequest ' + variables.name + ': ledgerops.dev/ labels tie the request to what it asks about, and only the ledgerops controller (' + variables.controllerName + ') writes them. Leave them as they are; use a label prefix of your own for your labels.'",
    },
    Rule {
        expression: "oldObject == null || variables.isController || variables.newEscalateTo == variables.oldEscalateTo",
        message: "only the ledgerops controller may change spec.escalateTo of an ApprovalRequest; change spec.approval.escalateTo of the Budget instead",
        message_expression: "'user ' + variables.user + ' may not change spec.escalateTo of ApprovalRequest ' + variables.name + ' from [' + variables.oldEscalateTo.join(', ') + '] to [' + variables.newEscalateTo.join(', ') + ']: ledgerops copies it from the Budget. Change spec.approval.escalateTo of the Budget instead; the next request uses it.'",
    },
];

pub fn definition() -> Definition {
    Definition {
        name: NAME,
        about: "Who may create and decide an ApprovalRequest.",
        match_constraints: resource_rules(
            "ledgerops.dev",
            &["approvalrequests"],
            &["CREATE", "UPDATE"],
        ),
        match_conditions: &[],
        variables: VARIABLES,
        rules: RULES,
        bindings: whole(NAME),
    }
}
