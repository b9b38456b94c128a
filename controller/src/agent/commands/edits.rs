//! `/agent approve X except tx-1, tx-2=Groceries`: the commenter's exceptions as the edits a
//! decision records, each category name resolved among the categories the Budget's mirror
//! holds, and checked against the plan as its write will check them.

use kube::Api;

use super::outcome::{Outcome, kube_failed};
use crate::agent::context::AgentContext;
use crate::api::approval::{ApprovalRequest, SubjectKind};
use crate::api::budget::Budget;
use crate::api::common::{CategoryEdit, Edits};
use crate::api::plan::CategorizationPlan;
use crate::logic::job::command::Exception;
use crate::logic::job::decision;
use crate::logic::plan::{category_name, edit};

/// The edits `except` asks for on `request`, and their one-line summary; the outcome to report
/// when they cannot be made.
pub(super) async fn of(
    ctx: &AgentContext,
    request: &ApprovalRequest,
    except: &[Exception],
) -> Result<(Edits, String), Outcome> {
    let name = request.metadata.name.as_deref().unwrap_or_default();
    if request.spec.subject.kind != SubjectKind::CategorizationPlan {
        return Err(Outcome::Rejected(decision::not_a_plan(name)));
    }
    let ns = ctx.store.namespace();
    let client = ctx.store.client().clone();
    let plan_name = &request.spec.subject.name;
    let plan = match Api::<CategorizationPlan>::namespaced(client.clone(), ns)
        .get_opt(plan_name)
        .await
    {
        Ok(Some(p)) => p,
        Ok(None) => {
            return Err(Outcome::Rejected(decision::plan_gone(plan_name, name)));
        }
        Err(e) => return Err(kube_failed("reading the CategorizationPlan", e)),
    };
    let budget_name = &request.spec.budget_ref.name;
    let budget = match Api::<Budget>::namespaced(client, ns).get(budget_name).await {
        Ok(b) => b,
        Err(e) => return Err(kube_failed("reading the Budget", e)),
    };
    let categories = {
        let slot = ctx.budget_links.mirror(ns, budget_name);
        let slot = slot.state.read().await;
        category_name::assignable(&slot.mirror)
    };
    let mut edits = Edits::default();
    for e in except {
        match &e.category {
            None => edits.drop.push(e.transaction_id.clone()),
            Some(typed) => {
                let category_id = category_name::resolve(typed, &categories).map_err(|why| {
                    Outcome::Rejected(decision::bad_exception(&e.transaction_id, &why.to_string()))
                })?;
                edits.set.push(CategoryEdit {
                    transaction_id: e.transaction_id.clone(),
                    category_id,
                });
            }
        }
    }
    edit::check(&edits, &plan, &budget, request.spec.four_eyes)
        .map_err(|why| Outcome::Rejected(decision::not_approving(name, &why.to_string())))?;
    let summary = edit::summary(&edits, |id| category_name::name_of(id, &categories));
    Ok((edits, summary))
}
