//! `/agent undo <plan>`: a plan with `undoOf` that reverts what `plan` wrote, proposed as a pull
//! request; merging it previews the revert and asks for approval.

use kube::Api;

use super::outcome::{Outcome, kube_failed};
use super::plan_branch::open_pull_request;
use super::reporter::Reporter;
use crate::agent::context::AgentContext;
use crate::api::agent_job::AgentJob;
use crate::api::plan::CategorizationPlan;
use crate::logic::job::plan_pull_request::{
    no_plan, plan_file, plan_yaml, undo_name, undo_of_undo, undo_pull_request, undo_spec, undone,
};

pub(super) async fn run(
    ctx: &AgentContext,
    job: &AgentJob,
    plan: &str,
    reporter: &Reporter<'_>,
) -> Outcome {
    let api: Api<CategorizationPlan> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let original = match api.get_opt(plan).await {
        Ok(Some(p)) => p,
        Ok(None) => return Outcome::Rejected(no_plan(plan, ctx.store.namespace())),
        Err(e) => return kube_failed("reading the CategorizationPlan", e),
    };
    if original.spec.undo_of.is_some() {
        return Outcome::Rejected(undo_of_undo(plan));
    }
    let name = undo_name(plan);
    let spec = undo_spec(&original.spec.budget_ref, plan, &job.spec.author);
    let yaml = match plan_yaml(&name, ctx.store.namespace(), &spec) {
        Ok(y) => y,
        Err(e) => return Outcome::Failed(e),
    };
    let file = plan_file(&ctx.plans_dir, &name);
    let (title, body) = undo_pull_request(plan, &name);
    match open_pull_request(ctx, job, reporter, &file, &yaml, &title, &body).await {
        Ok(url) => Outcome::Completed(undone(&url, plan)),
        Err(o) => o,
    }
}
