//! Bringing a Budget's mirror up to date with one delta request, and telling the reconcilers
//! which transactions changed. Every sync goes through here, whoever asks for it.

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
/// time), applies it, and announces the transactions it touched. The caller holds the Budget's
/// `turn`, so nothing else moves the knowledge between the read and the apply; the state is
/// locked only for those two moments, not during the request.
pub async fn sync(
    client: &YnabClient,
    plan_id: &str,
    cell: &MirrorCell,
    key: &MirrorKey,
    priority: Priority,
) -> Result<Changes, YnabError> {
    let since = {
        let slot = cell.state.read().await;
        (slot.mirror.server_knowledge > 0).then_some(slot.mirror.server_knowledge)
    };
    let data = client.plan(plan_id, since, priority).await?;
    let (transaction_ids, changes) = {
        let mut slot = cell.state.write().await;
        let ids = slot.mirror.changed_transactions(&data.plan);
        (ids, slot.mirror.apply(data.plan, data.server_knowledge))
    };
    key.budget_links.announce(MirrorChange {
        namespace: key.namespace.clone(),
        budget: key.budget.clone(),
        transaction_ids,
    });
    Ok(changes)
}
