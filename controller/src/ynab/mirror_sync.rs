//! Bringing a Budget's mirror up to date with one delta request, and telling the reconcilers
//! which transactions changed. Every sync goes through here, whoever asks for it.

use std::collections::HashSet;

use k8s_openapi::jiff::Timestamp;

use super::budget_links::{BudgetLinks, MirrorCell, MirrorChange};
use super::client::YnabClient;
use super::error::YnabError;
use crate::logic::budget::mirror::Changes;
use crate::logic::runtime::request_priority::Priority;

/// Which Budget a mirror belongs to, and where to announce its changes.
#[derive(Clone)]
pub struct MirrorKey {
    pub namespace: String,
    pub budget: String,
    pub budget_links: std::sync::Arc<BudgetLinks>,
}

/// Asks YNAB for what changed since the mirror's `server_knowledge` (everything, the first
/// time), applies it, and announces the transactions it touched. With `back_to`, a knowledge
/// older than the mirror's history, it reads back to that instead, so that the mirror can tell
/// what changed since (see [`Mirror::changed_since`]). The caller holds the Budget's `turn`, so
/// nothing else moves the knowledge between the read and the apply; the state is locked only
/// for those two moments, not during the request.
///
/// Any read serves as the Budget's periodic sync: the next one counts its interval from it. In
/// the hour-long soak, periodic syncs a minute after a batch's own read took half of the
/// requests paced for nobody in particular, and found nothing that read had not.
///
/// [`Mirror::changed_since`]: crate::logic::budget::mirror::Mirror::changed_since
pub async fn sync(
    client: &YnabClient,
    plan_id: &str,
    cell: &MirrorCell,
    key: &MirrorKey,
    priority: Priority,
    back_to: Option<i64>,
) -> Result<Changes, YnabError> {
    let since = {
        let slot = cell.state.read().await;
        let mirror = &slot.mirror;
        let now = mirror.has_read().then_some(mirror.server_knowledge);
        match (now, back_to) {
            (Some(now), Some(back)) if !mirror.remembers(back) => Some(back.min(now)),
            (now, _) => now,
        }
    };
    let started = std::time::Instant::now();
    let data = client.plan(plan_id, since, priority).await?;
    let (transaction_ids, changes) = {
        let mut slot = cell.state.write().await;
        if let Some((at, _)) = slot.synced.as_mut() {
            *at = started.max(*at);
        }
        let ids = slot.mirror.changed_transactions(&data.plan);
        if let Some(since) = since {
            let changed: HashSet<String> = data
                .plan
                .transactions
                .iter()
                .map(|t| t.id.clone())
                .collect();
            let answered = data.server_knowledge;
            slot.mirror.learn_unchanged_since(since, &changed, answered);
        }
        (ids, slot.mirror.apply(data.plan, data.server_knowledge))
    };
    key.budget_links.announce(MirrorChange {
        namespace: key.namespace.clone(),
        budget: key.budget.clone(),
        transaction_ids,
    });
    Ok(changes)
}

/// Makes the mirror able to tell what changed since `knowledge`, the one a write was decided
/// on, when an earlier run left that write unsettled: one read back to it, unless the mirror
/// already remembers that far. Takes the Budget's turn, as every sync.
pub async fn reach_back(
    client: &YnabClient,
    plan_id: &str,
    cell: &MirrorCell,
    key: &MirrorKey,
    knowledge: i64,
    priority: Priority,
) -> Result<(), YnabError> {
    let held = cell.read_back_held.lock().map(|h| h.clone()).ok().flatten();
    if let Some(held) = held.filter(|e| e.held_until() > Some(Timestamp::now())) {
        return Err(held);
    }
    let _turn = cell.turn.lock().await;
    // Twice at most: a mirror not synced yet reads everything first, which remembers nothing.
    for _ in 0..2 {
        if cell.state.read().await.mirror.remembers(knowledge) {
            break;
        }
        let reading = sync(client, plan_id, cell, key, priority, Some(knowledge)).await;
        if let Err(error) = &reading
            && error.held_until().is_some()
            && let Ok(mut held) = cell.read_back_held.lock()
        {
            *held = Some(error.clone());
        }
        reading?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "mirror_sync_tests.rs"]
mod tests;
