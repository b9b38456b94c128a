//! `/agent suggest [month]`: a plan that categorizes the uncategorized transactions of the
//! namespace's Budget, from its Blessed rules (only while the admission policies are in force)
//! or else the payees' history ([`crate::logic::job::classify`]), proposed as a pull request.

use kube::api::ListParams;
use kube::{Api, ResourceExt};

use super::outcome::{Outcome, kube_failed};
use super::plan_branch::open_pull_request;
use super::reporter::Reporter;
use crate::agent::context::AgentContext;
use crate::api::agent_job::AgentJob;
use crate::api::budget::Budget;
use crate::logic::job::classify;
use crate::logic::job::plan_pull_request::{
    no_budget, no_rule_used, not_synced, nothing_suggested, plan_file, plan_yaml, scope, suggested,
    suggestion_name, suggestion_pull_request, suggestion_spec, suggestion_table,
};
use crate::logic::rule::RuleBook;

pub(super) async fn run(
    ctx: &AgentContext,
    job: &AgentJob,
    month: Option<&str>,
    reporter: &Reporter<'_>,
) -> Outcome {
    let _ = reporter.progress("reading the budget mirror").await;
    let budget = match pick_budget(ctx).await {
        Ok(Some(b)) => b,
        Ok(None) => return Outcome::Rejected(no_budget(ctx.store.namespace())),
        Err(e) => return kube_failed("listing Budgets", e),
    };
    let budget_name = budget.name_any();
    // Without the admission policies anyone could have blessed a rule: use none (fail closed).
    let (book, unused) = match ctx.admission.verified() {
        Ok(()) => {
            ctx.rules_listed.clone().wait().await;
            let rules = ctx.rules.state();
            let book = RuleBook::of_budget(
                rules.iter().map(AsRef::as_ref),
                ctx.store.namespace(),
                &budget_name,
            );
            (book, String::new())
        }
        Err(why) => (RuleBook::default(), no_rule_used(&why.to_string())),
    };
    let (suggestions, digits) = {
        let slot = ctx.budget_links.mirror(ctx.store.namespace(), &budget_name);
        let slot = slot.state.read().await;
        // A mirror of another plan (the Budget's planId changed) says nothing about this one.
        if !slot.synced_for(&budget.spec.plan_id) {
            return Outcome::Rejected(not_synced(&budget_name));
        }
        let digits = slot.mirror.decimal_digits();
        (classify::suggest(&slot.mirror, &book, month), digits)
    };
    let scope = scope(month);
    if suggestions.is_empty() {
        return Outcome::Completed(nothing_suggested(&scope, &budget_name, &unused));
    }
    let name = suggestion_name(month, &job.name_any());
    let spec = suggestion_spec(&budget_name, &suggestions, &job.spec.author, &scope);
    let yaml = match plan_yaml(&name, ctx.store.namespace(), &spec) {
        Ok(y) => y,
        Err(e) => return Outcome::Failed(e),
    };
    let table = suggestion_table(&suggestions, digits);
    let file = plan_file(&ctx.plans_dir, &name);
    let count = suggestions.len();
    let (title, body) = suggestion_pull_request(&name, &budget_name, count, &scope, &table);
    match open_pull_request(ctx, job, reporter, &file, &yaml, &title, &body).await {
        Ok(url) => Outcome::Completed(suggested(
            count,
            &scope,
            &budget_name,
            &url,
            &table,
            &unused,
        )),
        Err(o) => o,
    }
}

/// The Budget a suggestion is for: the only one in the namespace, or the first by name.
async fn pick_budget(ctx: &AgentContext) -> Result<Option<Budget>, kube::Error> {
    let api: Api<Budget> = Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let mut budgets = api.list(&ListParams::default()).await?.items;
    budgets.sort_by_key(|b| b.name_any());
    Ok(budgets.into_iter().next())
}
