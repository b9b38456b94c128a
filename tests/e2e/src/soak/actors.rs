//! The actors, each with its own identity and rights: a proposer applying Transactions, plans
//! (some overlapping, some over the policy) and undos as an editor; a Git pusher declaring
//! Transactions in the config repository (which the governor's ConfigRepo applies); an approver approving,
//! rejecting or ignoring requests (some after they expired) with the `approve` verb or with
//! `/agent approve|reject` comments in Gitea; the proposer trying to approve their own, and a
//! reader of the repository trying `/agent approve`; and a "spouse" editing YNAB behind
//! ledgerops' back (categories, memos, reconciling, deleting). Every step is drawn from the
//! soak's generator.

use std::collections::{BTreeMap, HashMap};

use base64::Engine;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::transaction::Transaction;
use ledgerops_testenv::gitea::{Gitea, User};
use reqwest::Method;
use serde_json::{Value, json};
use ynab_sim::{RecordKind, demo, now_ms};

use super::history::{Fault, Intent};
use super::rng::Rng;
use super::setup::{APPROVER, BUDGET, CATEGORIES, GOVERNOR, PROPOSER, REPO_PATH, World};
use crate::gitea_api;
use crate::scenario::category;

/// What the actors did, as the history needs it.
#[derive(Debug, Default)]
pub struct Recorder {
    pub intents: Vec<Intent>,
    /// ApprovalRequest → when the decision the API server took was sent (wall-clock ms).
    pub decided: HashMap<String, u64>,
    /// (ApprovalRequest, who) → when that person last sent a decision, whatever the answer: an
    /// answer lost on the way (a store restarting) may hide a decision that was taken.
    pub sent: HashMap<(String, String), u64>,
    pub faults: Vec<Fault>,
    /// Actions by name, for the report.
    pub actions: BTreeMap<&'static str, u64>,
    /// Purchases that have a Transaction object already.
    taken: Vec<usize>,
    /// Plans named so far (`p-1`, `p-2`, …).
    plans: u64,
    /// Purchases the config repository declares a Transaction for.
    pushed: Vec<usize>,
}

impl Recorder {
    fn count(&mut self, action: &'static str) {
        *self.actions.entry(action).or_default() += 1;
    }
}

/// One step of one actor, drawn by weight.
pub async fn act(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    match rng.below(0, 100) {
        0..25 => propose_transaction(w, rng, rec).await,
        25..30 => push_to_git(w, rng, rec).await,
        30..42 => propose_plan(w, rng, rec).await,
        42..46 => propose_undo(w, rng, rec).await,
        46..70 => decide(w, rng, rec).await,
        70..72 => approve_own(w, rec).await,
        72..73 => approve_in_gitea_without_the_power(w, rec).await,
        73..95 => spouse(w, rng, rec).await,
        _ => {
            w.nudge(&format!("soak-{}", now_ms())).await;
            rec.count("nudge");
        }
    }
}

/// One of the actors' categories, by id.
fn a_category(rng: &mut Rng) -> String {
    let name: &&str = rng.pick(&CATEGORIES);
    category(name)
}

fn proposed(name: &str) -> Value {
    json!({"name": name, "annotations": {PROPOSED_BY: PROPOSER}})
}

async fn propose_transaction(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let i = rng.below(0, w.transactions as u64) as usize;
    if rec.taken.contains(&i) {
        return;
    }
    let target = a_category(rng);
    let name = format!("t-{i}");
    let tx: Transaction = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction", "metadata": proposed(&name),
        "spec": {"budgetRef": {"name": BUDGET}, "transactionId": w.purchase(i), "categoryId": target},
    }))
    .expect("a Transaction");
    let at_ms = now_ms();
    let api: Api<Transaction> = Api::namespaced(w.proposer.clone(), &w.s.ns);
    if created(&api, &tx).await {
        rec.taken.push(i);
        rec.intents.push(Intent {
            subject: format!("Transaction/{name}"),
            proposer: PROPOSER.into(),
            at_ms,
            targets: BTreeMap::from([(w.purchase(i), target)]),
            undo_of: None,
        });
        rec.count("propose-transaction");
    }
}

/// Whether `object` exists after asking to create it: an error may come after the API server
/// stored it (its store restarting, say), and an intent missed would make its writes look
/// undecided. The actors' names are never reused, so one found by name is this one.
async fn created<K>(api: &Api<K>, object: &K) -> bool
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    if api.create(&PostParams::default(), object).await.is_ok() {
        return true;
    }
    let name = object.meta().name.clone().unwrap_or_default();
    for _ in 0..30 {
        match api.get_opt(&name).await {
            Ok(found) => return found.is_some(),
            Err(_) => tokio::time::sleep(std::time::Duration::from_secs(2)).await,
        }
    }
    panic!("the API server did not answer for a minute whether {name} exists");
}

/// The Git pusher declares a purchase's category in the config repository, as a person
/// pushing to `main` would: a new Transaction, or another category for one declared before.
/// What the repository declares is proposed in the governor's name.
async fn push_to_git(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let i = rng.below(0, w.transactions as u64) as usize;
    let declared = rec.pushed.contains(&i);
    if rec.taken.contains(&i) && !declared {
        return; // a Transaction made with kubectl manages it
    }
    let name = format!("g-{i}");
    let target = a_category(rng);
    let document = format!(
        "apiVersion: ledgerops.dev/v1alpha1\nkind: Transaction\nmetadata:\n  name: {name}\nspec:\n  budgetRef:\n    name: {BUDGET}\n  transactionId: {}\n  categoryId: {target}\n",
        w.purchase(i)
    );
    let path = format!("/repos/{}/contents/{REPO_PATH}/{name}.yaml", w.repo);
    let writer = Gitea::shared().writer();
    let content = base64::engine::general_purpose::STANDARD.encode(document);
    let at_ms = now_ms();
    // The intent first: a push that timed out may still land, and its write must have one.
    rec.intents.push(Intent {
        subject: format!("Transaction/{name}"),
        proposer: GOVERNOR.into(),
        at_ms,
        targets: BTreeMap::from([(w.purchase(i), target)]),
        undo_of: None,
    });
    if !declared {
        rec.taken.push(i);
        rec.pushed.push(i);
    }
    let push = async {
        // Whether the file is there decides between an update and a create, whatever the
        // pusher believed (a push that timed out may or may not have landed).
        let body = match gitea_api::try_call(Method::GET, &path, writer, None).await {
            Ok(file) => {
                json!({"content": content, "sha": file["sha"], "message": format!("soak: {name}"), "branch": "main"})
            }
            Err(_) => {
                json!({"content": content, "message": format!("soak: {name}"), "branch": "main"})
            }
        };
        let method = if body.get("sha").is_some() {
            Method::PUT
        } else {
            Method::POST
        };
        gitea_api::try_call(method, &path, writer, Some(body)).await
    };
    match tokio::time::timeout(GITEA_WITHIN, push).await {
        Ok(Ok(_)) => rec.count("git-push"),
        Ok(Err(_)) => rec.count("git-push-failed"),
        Err(_) => rec.count("git-push-timed-out"),
    }
}

/// How long an actor waits for Gitea before it moves on (a wedged Gitea must not stop the run).
const GITEA_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

async fn propose_plan(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let size = rng.below(1, 9);
    let mut targets = BTreeMap::new();
    for _ in 0..size {
        let i = rng.below(0, w.transactions as u64) as usize;
        targets.insert(w.purchase(i), a_category(rng));
    }
    rec.plans += 1;
    let name = format!("p-{}", rec.plans);
    let assignments: Vec<Value> = targets
        .iter()
        .map(|(t, c)| json!({"transactionId": t, "categoryId": c}))
        .collect();
    let spec = json!({"budgetRef": {"name": BUDGET}, "assignments": assignments});
    create_plan(w, rec, &name, spec, targets, None).await;
}

async fn propose_undo(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let plans: Api<CategorizationPlan> = Api::namespaced(w.proposer.clone(), &w.s.ns);
    let Ok(list) = plans.list(&ListParams::default()).await else {
        return;
    };
    let applied: Vec<String> = list
        .items
        .iter()
        .filter(|p| p.spec.undo_of.is_none())
        .filter(|p| p.status.as_ref().and_then(|s| s.phase) == Some(PlanPhase::Applied))
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    if applied.is_empty() {
        return;
    }
    let undone = rng.pick(&applied).clone();
    let name = format!("undo-{undone}");
    let spec = json!({"budgetRef": {"name": BUDGET}, "undoOf": undone});
    create_plan(w, rec, &name, spec, BTreeMap::new(), Some(undone)).await;
}

async fn create_plan(
    w: &World,
    rec: &mut Recorder,
    name: &str,
    spec: Value,
    targets: BTreeMap<String, String>,
    undo_of: Option<String>,
) {
    let plan: CategorizationPlan = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": proposed(name), "spec": spec,
    }))
    .expect("a CategorizationPlan");
    let at_ms = now_ms();
    let api: Api<CategorizationPlan> = Api::namespaced(w.proposer.clone(), &w.s.ns);
    if created(&api, &plan).await {
        let action = if undo_of.is_some() {
            "propose-undo"
        } else {
            "propose-plan"
        };
        rec.intents.push(Intent {
            subject: format!("CategorizationPlan/{name}"),
            proposer: PROPOSER.into(),
            at_ms,
            targets,
            undo_of,
        });
        rec.count(action);
    }
}

/// The approver looks at an undecided request: approves most, rejects some, leaves some to
/// expire, and sometimes answers one that already expired.
async fn decide(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let api: Api<ApprovalRequest> = Api::namespaced(w.approver.clone(), &w.s.ns);
    let Ok(list) = api.list(&ListParams::default()).await else {
        return;
    };
    // One look in ten is at a request that already expired; drawn per look, not per request,
    // so the expired ones piling up do not crowd out the pending.
    let wanted = if rng.percent(10) {
        ApprovalPhase::Expired
    } else {
        ApprovalPhase::Pending
    };
    let open: Vec<&ApprovalRequest> = list
        .items
        .iter()
        .filter(|r| r.spec.decision.is_none())
        .filter(|r| r.status.as_ref().and_then(|s| s.phase) == Some(wanted))
        .collect();
    if open.is_empty() {
        return;
    }
    let request = *rng.pick(&open);
    let name = request.metadata.name.clone().unwrap_or_default();
    let (verdict, action) = match rng.below(0, 100) {
        0..75 => ("Approve", "approve"),
        75..90 => ("Reject", "reject"),
        _ => {
            rec.count("ignore");
            return;
        }
    };
    // Half the decisions come from Gitea: `/agent approve|reject` by a writer of the repository.
    if rng.percent(50) {
        let command = format!("/agent {} {name} soak", verdict.to_lowercase());
        comment_in_gitea(w, Gitea::shared().writer(), &name, &command, rec).await;
        rec.count(if verdict == "Approve" {
            "gitea-approve"
        } else {
            "gitea-reject"
        });
        return;
    }
    let action = send_decision(&api, name, verdict, APPROVER, rec)
        .await
        .unwrap_or(action);
    rec.count(action);
}

/// Comments `command` about request `name` on the soak's issue as `user`, remembering when (the
/// decision, if the controller takes it, is recorded as `gitea:<login>`).
async fn comment_in_gitea(w: &World, user: &User, name: &str, command: &str, rec: &mut Recorder) {
    rec.sent
        .insert((name.to_string(), gitea_person(user)), now_ms());
    let path = format!("/repos/{}/issues/{}/comments", w.repo, w.issue);
    let sent = gitea_api::try_call(Method::POST, &path, user, Some(json!({"body": command})));
    if !matches!(tokio::time::timeout(GITEA_WITHIN, sent).await, Ok(Ok(_))) {
        rec.count("gitea-comment-failed");
    }
}

/// A person acting through Gitea, as the controller names them in a decision.
pub fn gitea_person(user: &User) -> String {
    format!("gitea:{}", user.login())
}

/// A reader of the repository (no write permission) comments `/agent approve`: the controller
/// must refuse it, and the checker holds any decision by them as one without the power.
async fn approve_in_gitea_without_the_power(w: &World, rec: &mut Recorder) {
    let api: Api<ApprovalRequest> = Api::namespaced(w.approver.clone(), &w.s.ns);
    let Some(name) = undecided(&api).await else {
        return;
    };
    let command = format!("/agent approve {name} soak");
    comment_in_gitea(w, Gitea::shared().reader(), &name, &command, rec).await;
    rec.count("gitea-reader-approve");
}

/// The first request without a decision that `api`'s user can list.
async fn undecided(api: &Api<ApprovalRequest>) -> Option<String> {
    let list = api.list(&ListParams::default()).await.ok()?;
    list.items
        .iter()
        .find(|r| r.spec.decision.is_none())
        .and_then(|r| r.metadata.name.clone())
}

/// Writes `by`'s verdict on request `name`, and when the API server took it, remembers when;
/// `Some("decision-refused")` when it did not.
async fn send_decision(
    api: &Api<ApprovalRequest>,
    name: String,
    verdict: &str,
    by: &str,
    rec: &mut Recorder,
) -> Option<&'static str> {
    let patch = json!({"spec": {"decision": {"verdict": verdict, "by": by, "comment": "soak"}}});
    let at_ms = now_ms();
    rec.sent.insert((name.clone(), by.to_string()), at_ms);
    match api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {
            rec.decided.insert(name, at_ms);
            None
        }
        Err(_) => Some("decision-refused"),
    }
}

/// The proposer tries to approve a request of their own: admission must refuse it.
async fn approve_own(w: &World, rec: &mut Recorder) {
    let api: Api<ApprovalRequest> = Api::namespaced(w.proposer.clone(), &w.s.ns);
    let Some(name) = undecided(&api).await else {
        return;
    };
    let action = match send_decision(&api, name, "Approve", PROPOSER, rec).await {
        None => "own-approval-accepted",
        Some(_) => "own-approval-refused",
    };
    rec.count(action);
}

/// The spouse edits a purchase in the app: its category, its memo, reconciles it, or deletes it.
async fn spouse(w: &World, rng: &mut Rng, rec: &mut Recorder) {
    let id = w.purchase(rng.below(0, w.transactions as u64) as usize);
    let control = w.s.sim.control();
    let (edit, action) = match rng.below(0, 100) {
        0..60 => (json!({"category_id": a_category(rng)}), "spouse-category"),
        60..88 => (
            json!({"memo": format!("spouse {}", rng.below(0, 1000))}),
            "spouse-memo",
        ),
        88..96 => (json!({"cleared": "reconciled"}), "spouse-reconcile"),
        _ => {
            if control.delete_transaction(demo::PLAN_ID, &id).await.is_ok() {
                rec.count("spouse-delete");
            }
            return;
        }
    };
    if control
        .edit(demo::PLAN_ID, RecordKind::Transaction, &id, &edit)
        .await
        .is_ok()
    {
        rec.count(action);
    }
}
