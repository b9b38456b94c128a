//! Reading YNAB back to the knowledge an unsettled write was decided on, so that what changed
//! since can be told apart from what never moved: shared by the Transaction and plan
//! reconcilers, which settle writes an earlier run left without an outcome.

use kube::ResourceExt;

use super::Context;
use crate::api::budget::Budget;
use crate::logic::runtime::request_priority::Priority;
use crate::ynab::mirror_sync;

/// Has `budget`'s mirror read back to `knowledge` if it does not remember that far: one
/// request, spent as a person's approved write is, since a write waits on it. It reads back to
/// the oldest unsettled write of the Budget the watches know of, if older: a new leader finds
/// several, and one read then settles them all. A failure is
/// logged (a wait for the request window only at debug: every unsettled write of the Budget waits on
/// the same read, which is not asked for again before its turn); the caller then finds the mirror still cannot tell, and waits.
pub async fn reach_back(ctx: &Context, budget: &Budget, knowledge: i64) {
    let namespace = budget.namespace().unwrap_or_default();
    let cell = ctx.budget_links.mirror(&namespace, &budget.name_any());
    {
        let slot = cell.state.read().await;
        if !slot.synced_for(&budget.spec.plan_id) || slot.mirror.remembers(knowledge) {
            return;
        }
    }
    let Some(to) = ctx.destination(&namespace, budget) else {
        return;
    };
    let oldest = ctx.oldest_open_write(&namespace, &budget.name_any());
    let knowledge = oldest.map_or(knowledge, |oldest| oldest.min(knowledge));
    let priority = Priority::Approved;
    let reading =
        mirror_sync::reach_back(&to.client, &to.plan_id, &cell, &to.key, knowledge, priority);
    match reading.await {
        Ok(()) => {}
        // Waiting for its turn is no failure: the caller's status says it waits.
        Err(error) if error.held_until().is_some() => {
            tracing::debug!(budget = %budget.name_any(), %error, knowledge, "the read back to settle a write waits for its turn");
        }
        Err(error) => {
            tracing::warn!(budget = %budget.name_any(), %error, knowledge, "could not read YNAB back to settle a write");
        }
    }
}
