//! `/agent rules`: the namespace's rules from the shared cache, with category names from the
//! mirrors of the namespace's Budgets (the report is
//! [`crate::logic::job::rules_report::rules_report`]).

use std::collections::HashMap;

use kube::api::ListParams;
use kube::{Api, ResourceExt};

use super::outcome::{Outcome, kube_failed};
use crate::agent::context::AgentContext;
use crate::api::budget::Budget;
use crate::api::rule::CategorizationRule;
use crate::logic::job::rules_report::rules_report;

pub(super) async fn run(ctx: &AgentContext) -> Outcome {
    let ns = ctx.store.namespace();
    let budgets = match Api::<Budget>::namespaced(ctx.store.client().clone(), ns)
        .list(&ListParams::default())
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Budgets", e),
    };
    ctx.rules_listed.clone().wait().await;
    let all = ctx.rules.state();
    let here: Vec<&CategorizationRule> = all
        .iter()
        .map(AsRef::as_ref)
        .filter(|r| r.metadata.namespace.as_deref() == Some(ns))
        .collect();
    let mut names: HashMap<(String, String), String> = HashMap::new();
    for budget in budgets.iter().map(ResourceExt::name_any) {
        let slot = ctx.budget_links.mirror(ns, &budget);
        let slot = slot.state.read().await;
        for r in here.iter().filter(|r| r.spec.budget_ref.name == budget) {
            if let Some(c) = slot.mirror.categories.get(&r.spec.category_id) {
                names.insert((budget.clone(), r.spec.category_id.clone()), c.name.clone());
            }
        }
    }
    let category = |budget: &str, id: &str| names.get(&(budget.to_owned(), id.to_owned())).cloned();
    Outcome::Completed(rules_report(&here, ns, &category))
}
