//! The per-Budget rule controller. First learning: it counts what the decisions recorded on the
//! Budget's plans and Transactions say about its CategorizationRules, demotes a Blessed rule a
//! person overrode by hand, and creates a Candidate for what no rule explains. Learning writes
//! only CategorizationRules (never YNAB), and everything it writes is counted afresh from what
//! the cluster holds, so a pass repeated, or run after a restart, writes the same. Then the
//! autopilot's pass ([`super::autopilot`]), which sees the demotions just recorded.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::Controller;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, ResourceExt};
use serde_json::json;
use tokio_stream::wrappers::BroadcastStream;

use super::budget_scoped::{BudgetScoped, of_budget};
use super::{Context, Error, autopilot};
use crate::api::budget::Budget;
use crate::api::common::PROPOSED_BY;
use crate::api::plan::CategorizationPlan;
use crate::api::rule::{CategorizationRule, CategorizationRuleSpec, Demotion};
use crate::api::transaction::Transaction;
use crate::k8s::status;
use crate::k8s::watches::Watches;
use crate::logic::approval::lineage;
use crate::logic::budget::mirror::Mirror;
use crate::logic::rule::learn::{self, RuleView};
use crate::logic::rule::{acting_since, decisions};

/// How long the changes to one Budget's objects are gathered before a pass: thousands of
/// Transactions written in a row make a few passes, not thousands.
const GATHER: Duration = Duration::from_secs(2);

/// What a pass reads besides the Budget: the shared caches.
struct Caches {
    ctx: Arc<Context>,
    plans: Store<CategorizationPlan>,
    transactions: Store<Transaction>,
    rules: Store<CategorizationRule>,
}

impl BudgetScoped for CategorizationRule {
    fn budget_name(&self) -> &str {
        &self.spec.budget_ref.name
    }
}

/// Subscribes to the shared watches at once; the returned future runs the learning controller.
/// A Budget is looked at when it, or one of its plans, Transactions or rules changes, and when
/// a sync finds its transactions changed in YNAB (a person's edit there).
pub fn run(ctx: Arc<Context>, watches: &Watches) -> impl Future<Output = ()> + use<> {
    let budgets = watches.budgets.store();
    let caches = Arc::new(Caches {
        ctx: ctx.clone(),
        plans: watches.plans.store(),
        transactions: watches.transactions.store(),
        rules: watches.rules.store(),
    });
    // Nothing is learned before every kind it reads is known: a rule not listed yet would be
    // learned again as a Candidate.
    let listed = (
        watches.budgets.listed(),
        watches.plans.listed(),
        watches.transactions.listed(),
        watches.rules.listed(),
    );
    let changes = watches.budgets.subscribe();
    let stream = futures::stream::once(async move {
        futures::join!(
            listed.0.wait(),
            listed.1.wait(),
            listed.2.wait(),
            listed.3.wait()
        );
        changes
    })
    .flatten();
    let in_ynab = BroadcastStream::new(ctx.budget_links.subscribe()).filter_map(|change| {
        futures::future::ready(
            change
                .ok()
                .map(|c| ObjectRef::<Budget>::new(&c.budget).within(&c.namespace)),
        )
    });
    let controller = Controller::for_shared_stream(stream, budgets)
        .watches_shared_stream(watches.plans.subscribe(), |p| {
            budget_of(p.as_ref(), &p.spec.budget_ref.name)
        })
        .watches_shared_stream(watches.transactions.subscribe(), |t| {
            budget_of(t.as_ref(), &t.spec.budget_ref.name)
        })
        .watches_shared_stream(watches.rules.subscribe(), |r| {
            budget_of(r.as_ref(), &r.spec.budget_ref.name)
        })
        .reconcile_on(in_ynab)
        // A rule starts or stops acting with the admission policies.
        .reconcile_all_on(ctx.admission.verified_again())
        .with_config(Config::default().debounce(GATHER))
        .graceful_shutdown_on(ctx.shutdown.requested());
    super::drain(controller.run(reconcile, error_policy, caches))
}

fn budget_of<K: ResourceExt>(object: &K, budget: &str) -> Option<ObjectRef<Budget>> {
    Some(ObjectRef::new(budget).within(&object.namespace()?))
}

fn error_policy(budget: Arc<Budget>, error: &Error, caches: Arc<Caches>) -> Action {
    super::error_policy(budget, error, caches.ctx.clone())
}

async fn reconcile(budget: Arc<Budget>, caches: Arc<Caches>) -> Result<Action, Error> {
    let ctx = &caches.ctx;
    let _measure = super::measure::<CategorizationRule>(ctx);
    let namespace = budget.namespace().unwrap_or_default();
    let name = budget.name_any();
    let plans = of_budget(&caches.plans, &namespace, &name);
    let transactions = of_budget(&caches.transactions, &namespace, &name);
    let rules = of_budget(&caches.rules, &namespace, &name);
    if plans.is_empty() && transactions.is_empty() && rules.is_empty() {
        return Ok(Action::await_change());
    }
    let slot = ctx.budget_links.mirror(&namespace, &name);
    let (learned, names) = {
        let slot = slot.state.read().await;
        if !slot.synced_for(&budget.spec.plan_id) {
            // Not synced yet: what YNAB shows now is not known. The sync wakes this Budget.
            return Ok(Action::await_change());
        }
        let plans: Vec<&CategorizationPlan> = plans.iter().map(AsRef::as_ref).collect();
        let transactions: Vec<&Transaction> = transactions.iter().map(AsRef::as_ref).collect();
        let busy = decisions::busy(&plans, &transactions);
        let mut all = decisions::of_plans(&plans, &slot.mirror, &busy);
        all.extend(decisions::of_transactions(
            &transactions,
            &slot.mirror,
            &busy,
        ));
        let views: Vec<RuleView> = rules
            .iter()
            .map(|r| RuleView {
                name: r.metadata.name.as_deref().unwrap_or_default(),
                spec: &r.spec,
                generation: r.metadata.generation.unwrap_or_default(),
                acting_since: acting_since(r),
            })
            .collect();
        let learned = learn::learn(&name, &views, &all, Timestamp::now());
        let names = CategoryNames::of(&slot.mirror, &learned.demotions);
        (learned, names)
    };
    for rule in &rules {
        let rule_name = rule.name_any();
        let Some(learning) = learned.learning.get(&rule_name) else {
            continue;
        };
        let status = rule.status.clone().unwrap_or_default();
        let demotion = learned.demotions.get(&rule_name);
        let kept = demotion.or(status.demotion.as_ref());
        // A rule nothing was learned about yet needs no write.
        let known = status.learning.clone().unwrap_or_default();
        if known == *learning && demotion.is_none() {
            continue;
        }
        let owned = json!({"learning": learning, "demotion": kept});
        status::apply_as(
            &ctx.client,
            rule.as_ref(),
            &owned,
            status::LEARNING_FIELD_MANAGER,
            true,
        )
        .await?;
        if let Some(d) = demotion {
            ctx.events
                .publish(rule.as_ref(), true, "Demoted", "Learn", names.note(d))
                .await;
        }
    }
    let api = Api::<CategorizationRule>::namespaced(ctx.client.clone(), &namespace);
    for (candidate, spec) in learned.candidates {
        if rules.iter().any(|r| r.name_any() == candidate) {
            continue;
        }
        // The people whose decisions taught it shaped it: none of them blesses it.
        let mut lineage = vec!["ledgerops:learning".to_owned()];
        let taught_by = learned.taught_by.get(&candidate).cloned();
        lineage::extend(&mut lineage, taught_by.into_iter().flatten());
        create_candidate(ctx, &api, &namespace, candidate, spec, &lineage).await?;
    }
    // The cached rules do not show the demotions just recorded yet: leave those out.
    let acting: Vec<Arc<CategorizationRule>> = rules
        .iter()
        .filter(|r| !learned.demotions.contains_key(&r.name_any()))
        .cloned()
        .collect();
    let input = autopilot::Inputs {
        budget: &budget,
        plans: &plans,
        transactions: &transactions,
        rules: &acting,
    };
    autopilot::pass(ctx, input).await?;
    Ok(Action::await_change())
}

/// Creates a learned Candidate; one created meanwhile (by another replica) is left as it is.
async fn create_candidate(
    ctx: &Context,
    api: &Api<CategorizationRule>,
    namespace: &str,
    name: String,
    spec: CategorizationRuleSpec,
    lineage: &[String],
) -> Result<(), Error> {
    let rule = CategorizationRule {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace.to_owned()),
            labels: Some(
                [(
                    "app.kubernetes.io/managed-by".to_owned(),
                    "ledgerops".to_owned(),
                )]
                .into(),
            ),
            annotations: Some([(PROPOSED_BY.to_owned(), lineage::render(lineage))].into()),
            ..ObjectMeta::default()
        },
        spec,
        status: None,
    };
    let params = PostParams {
        field_manager: Some(status::LEARNING_FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    match api.create(&params, &rule).await {
        Ok(created) => {
            let note = format!(
                "learned from approved writes: payee {} → category {}; it does not act until a person blesses it",
                created
                    .spec
                    .matches
                    .payee_normalised
                    .as_deref()
                    .unwrap_or_default(),
                created.spec.category_id
            );
            ctx.events
                .publish(&created, false, "Learned", "Learn", note)
                .await;
            Ok(())
        }
        Err(e) if crate::k8s::is_conflict(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The names of the categories demotions mention, read from the mirror while it is locked.
struct CategoryNames(std::collections::HashMap<String, String>);

impl CategoryNames {
    fn of<'a>(
        mirror: &Mirror,
        demotions: impl IntoIterator<Item = (&'a String, &'a Demotion)>,
    ) -> Self {
        let mut names = std::collections::HashMap::new();
        for (_, d) in demotions {
            for id in [Some(&d.written_category_id), d.current_category_id.as_ref()]
                .into_iter()
                .flatten()
            {
                if let Some(c) = mirror.categories.get(id) {
                    names.insert(id.clone(), c.name.clone());
                }
            }
        }
        Self(names)
    }

    fn name(&self, id: Option<&str>) -> String {
        match id {
            None => "uncategorised".to_owned(),
            Some(id) => match self.0.get(id) {
                Some(name) => format!("{name} ({id})"),
                None => id.to_owned(),
            },
        }
    }

    /// The demotion's Event: the transaction, both categories, and the blessing withdrawn.
    fn note(&self, d: &Demotion) -> String {
        format!(
            "transaction {} was recategorised by hand from {} to {} after ledgerops wrote it ({}): the blessing of {} is withdrawn",
            d.transaction_id,
            self.name(Some(&d.written_category_id)),
            self.name(d.current_category_id.as_deref()),
            d.source,
            d.blessing.by
        )
    }
}
