//! A namespace on a control plane and a YNAB simulator (the ground of every test's
//! [`crate::world::World`]), with helpers to declare Budgets, Transactions, plans and rules
//! against them and to read what YNAB saw.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::autopilot::AUTOPILOT_LABEL;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::api::rule::{CategorizationRule, RulePhase};
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::values::payee::normalise_payee;
use ledgerops::ynab_model::TransactionDetail;
use ledgerops_testenv::ControlPlane;
use serde_json::{Value, json};
use ynab_sim::{
    DropFault, Fixture, RecordKind, RequestMatch, RunningSim, SimConfig, Simulator, demo,
};

use crate::{install_crds, install_crds_only, wait};

/// The ceiling of every poll for a state the controller reaches: a poll ends as soon as the
/// state holds, so a passing test waits no longer for it. 90 s, what the slowest suites needed on
/// a loaded machine.
pub const WAIT: Duration = Duration::from_secs(90);

/// A namespace (`ns`, with an admin's client) and a simulator of its own.
pub struct Scenario {
    pub client: Client,
    pub ns: String,
    pub sim: RunningSim,
}

impl Scenario {
    /// A fresh namespace on `plane` (CRDs and admission policies installed) and a simulator
    /// loaded with `fixture`.
    pub async fn new(plane: &ControlPlane, prefix: &str, fixture: Fixture) -> Self {
        let client = plane.client().await.expect("admin client");
        install_crds(&client).await;
        Self::in_namespace(plane, client, prefix, fixture).await
    }

    /// Like [`Scenario::new`] on a cluster that has the CRDs but none of the admission policies.
    pub async fn without_admission(plane: &ControlPlane, prefix: &str, fixture: Fixture) -> Self {
        let client = plane.client().await.expect("admin client");
        install_crds_only(&client).await;
        Self::in_namespace(plane, client, prefix, fixture).await
    }

    async fn in_namespace(
        plane: &ControlPlane,
        client: Client,
        prefix: &str,
        fixture: Fixture,
    ) -> Self {
        let ns = plane.namespace(prefix).await.expect("namespace");
        let sim = Simulator::start(SimConfig {
            fixture: Some(fixture),
            ..Default::default()
        })
        .await
        .expect("simulator");
        Self { client, ns, sim }
    }

    pub fn api<K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>>(
        &self,
    ) -> Api<K> {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// A Secret holding `token` (labelled as a YNAB token) and a Budget on the simulator's demo
    /// plan; `spec` is merged over the defaults.
    pub async fn create_budget(&self, name: &str, token: &str, spec: Value) {
        let secret = token_secret(&format!("{name}-token"), token);
        self.api::<Secret>()
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        self.create_budget_only(name, json!({"name": format!("{name}-token")}), spec)
            .await;
    }

    /// Like [`Scenario::create_budget`], in the documented layout: the token Secret in
    /// `token_ns` (which must exist), granting this namespace.
    pub async fn create_budget_with_token_in(
        &self,
        name: &str,
        token_ns: &str,
        token: &str,
        spec: Value,
    ) {
        let secret = granted_token_secret(&format!("{name}-token"), token, &self.ns);
        Api::<Secret>::namespaced(self.client.clone(), token_ns)
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        let reference = json!({"name": format!("{name}-token"), "namespace": token_ns});
        self.create_budget_only(name, reference, spec).await;
    }

    /// A Budget `name` whose `tokenSecretRef` is `reference`, `spec` merged over the defaults.
    pub async fn create_budget_only(&self, name: &str, reference: Value, spec: Value) {
        // The suites' admin both proposes and decides, as a household of one would: four eyes
        // off unless a test asks for them (tests/attacks/authority.rs does).
        let mut full = json!({"planId": demo::PLAN_ID, "tokenSecretRef": reference, "apiUrl": self.sim.api_url(),
                              "approval": {"fourEyes": false}});
        merge(&mut full, spec);
        let budget: Budget = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget", "metadata": by_admin(name), "spec": full
        }))
        .unwrap();
        self.api::<Budget>()
            .create(&PostParams::default(), &budget)
            .await
            .unwrap();
    }

    /// A Budget that writes without asking anyone (for tests about the write path itself).
    pub async fn create_writing_budget(&self, name: &str, extra: Value) {
        let mut spec = json!({
            "writes": {"enabled": true, "batchWindow": "300ms", "maxBatchSize": 1000},
            "approval": {"autoApproveBelow": "100000", "askOnNewPayee": false}
        });
        merge(&mut spec, extra);
        self.create_budget(name, demo::TOKEN, spec).await;
    }

    pub async fn wait_budget(&self, name: &str, phase: BudgetPhase) -> Budget {
        wait::until(&self.api::<Budget>(), name, WAIT, |b| {
            b.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    /// A Transaction named `name` for YNAB transaction `id` with `spec` (budgetRef added).
    pub async fn create_transaction(&self, name: &str, budget: &str, id: &str, spec: Value) {
        let mut full = json!({"budgetRef": {"name": budget}, "transactionId": id});
        merge(&mut full, spec);
        let tx: Transaction = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction", "metadata": by_admin(name), "spec": full
        }))
        .unwrap();
        self.api::<Transaction>()
            .create(&PostParams::default(), &tx)
            .await
            .unwrap();
    }

    /// The Transaction `bakery`: the demo's bakery purchase (tx-048) in Groceries, on the
    /// Budget `household`.
    pub async fn bakery_to_groceries(&self) {
        let spec = json!({"categoryId": category("Groceries")});
        self.create_transaction("bakery", "household", "tx-048", spec)
            .await;
    }

    /// A CategorizationPlan named `name` with `spec` (budgetRef added).
    pub async fn create_plan(&self, name: &str, budget: &str, spec: Value) {
        let mut full = json!({"budgetRef": {"name": budget}});
        merge(&mut full, spec);
        let plan: CategorizationPlan = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan", "metadata": by_admin(name), "spec": full
        }))
        .unwrap();
        self.api::<CategorizationPlan>()
            .create(&PostParams::default(), &plan)
            .await
            .unwrap();
    }

    /// Adds to the plan `plan` made of [`bakery_and_train_plan`] one assignment of transaction
    /// `id` to the category called `name`, as a person editing the plan would: its preview
    /// changes.
    pub async fn add_assignment(&self, plan: &str, id: &str, name: &str) {
        let mut more = bakery_and_train_plan();
        more["assignments"]
            .as_array_mut()
            .expect("assignments")
            .push(json!({"transactionId": id, "categoryId": category(name)}));
        self.api::<CategorizationPlan>()
            .patch(
                plan,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": by_admin(plan), "spec": more})),
            )
            .await
            .unwrap();
    }

    pub async fn wait_plan(&self, name: &str, phase: PlanPhase) -> CategorizationPlan {
        wait::until(&self.api::<CategorizationPlan>(), name, WAIT, |p| {
            p.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    pub async fn wait_transaction(&self, name: &str, phase: TransactionPhase) -> Transaction {
        wait::until(&self.api::<Transaction>(), name, WAIT, |t| {
            t.status.as_ref().and_then(|s| s.phase) == Some(phase)
        })
        .await
    }

    /// The next bulk update lands in YNAB, but its answer is held back for a minute and then the
    /// connection is dropped (a crash test kills the controller meanwhile).
    pub async fn hold_next_patch(&self) {
        self.hold_next_patch_for(Duration::from_secs(60)).await;
    }

    /// Like [`Scenario::hold_next_patch`], the answer held back for `hold`. Under the YNAB
    /// client's timeout, the controller sees the connection drop, reads YNAB again and finds
    /// the write landed.
    pub async fn hold_next_patch_for(&self, hold: Duration) {
        let fault = DropFault {
            count: 1,
            hold_ms: u64::try_from(hold.as_millis()).unwrap_or(u64::MAX),
            only: RequestMatch {
                method: Some("PATCH".into()),
                path: None,
                body_contains: None,
            },
        };
        self.sim.control().drop_after_write(&fault).await.unwrap();
    }

    /// A Transaction for each of the first `n` load transactions ([`load_id`], also its name),
    /// asking for `category`, on the Budget `household`.
    pub async fn create_loads(&self, n: usize, category_name: &str) {
        for i in 0..n {
            let spec = json!({"categoryId": category(category_name)});
            self.create_transaction(&load_id(i), "household", &load_id(i), spec)
                .await;
        }
    }

    /// Waits (at most [`WAIT`]) until YNAB has seen `n` bulk updates.
    pub async fn wait_patches(&self, n: u64) {
        wait::eventually("the bulk update", WAIT, async || {
            self.requests(PATCH).await == n
        })
        .await;
    }

    /// Waits (at most [`WAIT`]) until every Transaction of the namespace is in `phase`.
    pub async fn wait_all(&self, phase: TransactionPhase) {
        let what = format!("every Transaction {phase:?}");
        wait::eventually(&what, WAIT, async || {
            self.transaction_phases()
                .await
                .iter()
                .all(|p| *p == Some(phase))
        })
        .await;
    }

    /// The phase of every Transaction in the namespace.
    pub async fn transaction_phases(&self) -> Vec<Option<TransactionPhase>> {
        let list = self
            .api::<Transaction>()
            .list(&Default::default())
            .await
            .unwrap();
        list.items
            .iter()
            .map(|t| t.status.as_ref().and_then(|s| s.phase))
            .collect()
    }

    /// Waits (at most [`WAIT`]) for an Event of the namespace with `reason`, about the object
    /// named `about` when given (as `kubectl describe` shows it).
    pub async fn wait_event(&self, reason: &str, about: Option<&str>) -> Event {
        let mut found = None;
        wait::eventually(&format!("an Event {reason}"), WAIT, async || {
            let events = self.api::<Event>().list(&ListParams::default()).await;
            found = events.ok().and_then(|l| {
                l.items.into_iter().find(|e| {
                    e.reason.as_deref() == Some(reason)
                        && about.is_none_or(|name| {
                            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
                        })
                })
            });
            found.is_some()
        })
        .await;
        found.expect("found")
    }

    /// Sets one annotation on a resource, as a person would with `kubectl annotate`.
    pub async fn annotate<K>(&self, name: &str, key: &str, value: &str)
    where
        K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let patch = json!({"metadata": {"annotations": {key: value}}});
        self.api::<K>()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }

    /// Decides `request` as `admin` once ledgerops has issued it (`status.issuedFor`): a
    /// decision made before the issuance is, by design, not followed (it could be a forged early
    /// approval), and the plan asks again under the next name.
    pub async fn decide(&self, request: &str, verdict: &str, comment: &str) {
        wait::until(&self.api::<ApprovalRequest>(), request, WAIT, |r| {
            r.status.as_ref().is_some_and(|st| st.issued_for.is_some())
        })
        .await;
        let patch =
            json!({"spec": {"decision": {"verdict": verdict, "by": "admin", "comment": comment}}});
        self.api::<ApprovalRequest>()
            .patch(request, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }

    /// The name of the request plan `plan` waits on, once it waits.
    pub async fn plan_request(&self, plan: &str) -> String {
        self.wait_plan(plan, PlanPhase::AwaitingApproval).await;
        self.approval_requests()
            .await
            .into_iter()
            .find(|r| r.spec.subject.name == plan)
            .and_then(|r| r.metadata.name)
            .expect("the plan's request")
    }

    /// Approves the one request of plan `plan` as `admin` and waits for the plan to be applied.
    pub async fn approve_plan(&self, plan: &str) -> CategorizationPlan {
        let request = self.plan_request(plan).await;
        self.decide(&request, "Approve", "yes").await;
        self.wait_plan(plan, PlanPhase::Applied).await
    }

    /// A CategorizationRule `name` of Budget `household` matching `payee_normalised`, leading to
    /// category `category` (by name), blessed by `admin` at `at` when given; waits until
    /// ledgerops reports it Blessed or Candidate.
    pub async fn create_rule(
        &self,
        name: &str,
        payee_normalised: &str,
        category_name: &str,
        blessed_at: Option<&str>,
    ) {
        let mut spec = json!({
            "budgetRef": {"name": "household"},
            "match": {"payeeNormalised": payee_normalised},
            "categoryId": category(category_name)
        });
        if let Some(at) = blessed_at {
            spec["blessing"] = json!({"by": "admin", "at": at});
        }
        let rule: CategorizationRule = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationRule",
            "metadata": by_admin(name), "spec": spec
        }))
        .unwrap();
        self.api::<CategorizationRule>()
            .create(&PostParams::default(), &rule)
            .await
            .unwrap();
        let want = if blessed_at.is_some() {
            RulePhase::Blessed
        } else {
            RulePhase::Candidate
        };
        wait::until(&self.api::<CategorizationRule>(), name, WAIT, |r| {
            r.status.as_ref().and_then(|s| s.phase) == Some(want)
        })
        .await;
    }

    /// The plans the autopilot made for Budget `household`, oldest first.
    pub async fn autopilot_plans(&self) -> Vec<CategorizationPlan> {
        let selector = format!("{AUTOPILOT_LABEL}=household");
        let mut plans = self
            .api::<CategorizationPlan>()
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap()
            .items;
        plans.sort_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0));
        plans
    }

    /// Someone moves transaction `id` to category `name` in the YNAB app, and the Budget
    /// `household` is asked to sync, as a person would with `kubectl annotate`.
    pub async fn recategorise_in_ynab(&self, id: &str, name: &str) {
        let edit = json!({"category_id": category(name)});
        self.sim
            .control()
            .edit(demo::PLAN_ID, RecordKind::Transaction, id, &edit)
            .await
            .unwrap();
        let nonce = format!("{id}-{name}");
        self.annotate::<Budget>("household", "ledgerops.dev/sync-requested-at", &nonce)
            .await;
    }

    /// Requests the simulator saw for `endpoint` (such as `PATCH /v1/plans/{plan_id}/transactions`).
    pub async fn requests(&self, endpoint: &str) -> u64 {
        self.sim
            .control()
            .counters()
            .await
            .unwrap()
            .endpoint(endpoint)
    }

    /// Requests that could have changed something in YNAB (POST, PUT, PATCH, DELETE).
    pub async fn writes(&self) -> u64 {
        self.sim.control().counters().await.unwrap().writes()
    }

    /// The ApprovalRequests of the namespace, oldest first.
    pub async fn approval_requests(&self) -> Vec<ApprovalRequest> {
        let mut items = self
            .api::<ApprovalRequest>()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        items.sort_by_key(|r| r.metadata.creation_timestamp.clone().map(|t| t.0));
        items
    }

    pub async fn total_requests(&self) -> u64 {
        self.sim.control().counters().await.unwrap().total
    }

    /// The category YNAB holds for transaction `id` now, read through the controls (uncounted).
    pub async fn ynab_category(&self, id: &str) -> Option<String> {
        self.sim
            .control()
            .transaction(demo::PLAN_ID, id)
            .await
            .expect("transaction in the simulator")
            .summary
            .category_id
    }
}

/// Metadata naming `name`, proposed by the suites' `admin` (`ledgerops.dev/proposed-by`, which
/// admission requires of everyone but the controller's user).
pub fn by_admin(name: &str) -> Value {
    json!({"name": name, "annotations": {PROPOSED_BY: "admin"}})
}

/// The id of the demo plan's category called `name`.
pub fn category(name: &str) -> String {
    demo::category(name)
}

/// A Secret named `name` holding `token` under the key `token`, opted in with the label
/// `ledgerops.dev/ynab-token: "true"` as the README says.
pub fn token_secret(name: &str, token: &str) -> Secret {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"ledgerops.dev/ynab-token": "true"}},
        "stringData": {"token": token}
    }))
    .expect("a Secret")
}

/// A token Secret that Budgets of namespace `granted` may use from another namespace.
pub fn granted_token_secret(name: &str, token: &str, granted: &str) -> Secret {
    let mut secret = token_secret(name, token);
    secret.metadata.annotations = Some(
        [(
            "ledgerops.dev/allowed-namespaces".to_owned(),
            granted.to_owned(),
        )]
        .into(),
    );
    secret
}

/// A fresh namespace on the shared control plane, the shared `ledgerops run`, and a Budget
/// `household` on the demo plan with `budget` merged over the defaults, synced.
pub async fn household(prefix: &str, budget: Value) -> Scenario {
    let s = Scenario::new(ControlPlane::shared(), prefix, demo::generate()).await;
    crate::controller::Ledgerops::shared().await;
    s.create_budget("household", demo::TOKEN, budget).await;
    s.wait_budget("household", BudgetPhase::Ready).await;
    s
}

/// The spec of the plan of `examples/categorization-plan.yaml` (the README's seed 002): the
/// demo's bakery purchase (tx-048) to Groceries, its train ticket (tx-049) to Transport.
pub fn bakery_and_train_plan() -> Value {
    json!({"assignments": [
        {"transactionId": "tx-048", "categoryId": category("Groceries")},
        {"transactionId": "tx-049", "categoryId": category("Transport")}
    ]})
}

/// The bulk-update endpoint, as the simulator counts it.
pub const PATCH: &str = "PATCH /v1/plans/{plan_id}/transactions";

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o,
    }
}

/// The id of the `i`th transaction [`demo_with_uncategorised`] adds.
pub fn load_id(i: usize) -> String {
    format!("load-{i:05}")
}

/// The demo fixture with `extra` more uncategorized, unreconciled transactions
/// ([`load_id`]: `load-00000`…), for tests and benchmarks at scale.
pub fn demo_with_uncategorised(extra: usize) -> Fixture {
    let mut fixture = demo::generate();
    let plan = &mut fixture.plans[0];
    for i in 0..extra {
        plan.transactions
            .push(uncategorised(&plan.transactions, &load_id(i)));
    }
    fixture
}

/// A copy of the demo's bakery purchase (`tx-048`: uncategorised, unreconciled, on budget)
/// with id `id` and no import id, to add to a fixture.
pub fn uncategorised(transactions: &[TransactionDetail], id: &str) -> TransactionDetail {
    let mut t = transactions
        .iter()
        .find(|t| t.summary.id == "tx-048")
        .expect("tx-048")
        .clone();
    t.summary.id = id.to_owned();
    t.summary.import_id = None;
    t
}

/// The merchant with the most uncategorised purchases in the demo, and those purchases oldest
/// first (as the autopilot orders them).
pub fn most_uncategorised_merchant() -> (String, Vec<String>) {
    let fixture = demo::generate();
    let plan = &fixture.plans[0];
    let payee = |id: &Option<String>| {
        plan.payees
            .iter()
            .find(|p| Some(&p.id) == id.as_ref())
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let mut by_merchant: std::collections::BTreeMap<String, Vec<(String, String)>> =
        Default::default();
    for t in plan.transactions.iter().map(|t| &t.summary) {
        let on_budget = plan
            .accounts
            .iter()
            .any(|a| a.id == t.account_id && a.on_budget);
        if t.category_id.is_none() && !t.deleted && t.transfer_account_id.is_none() && on_budget {
            by_merchant
                .entry(normalise_payee(&payee(&t.payee_id)))
                .or_default()
                .push((t.date.clone(), t.id.clone()));
        }
    }
    let (merchant, mut found) = by_merchant
        .into_iter()
        .filter(|(m, _)| !m.is_empty())
        .max_by_key(|(_, found)| found.len())
        .expect("uncategorised purchases");
    found.sort();
    (merchant, found.into_iter().map(|(_, id)| id).collect())
}
