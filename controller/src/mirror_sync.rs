//! Bringing a Budget's mirror up to date with one delta request, and telling the reconcilers
//! which transactions changed. Every sync goes through here, whoever asks for it.

use crate::logic::mirror::{Changes, Mirror};
use crate::registry::{MirrorChange, Registry};
use crate::ynab::client::YnabClient;
use crate::ynab::error::YnabError;

/// Which Budget a mirror belongs to, and where to announce its changes.
#[derive(Clone)]
pub struct MirrorKey {
    pub namespace: String,
    pub budget: String,
    pub registry: std::sync::Arc<Registry>,
}

/// Asks YNAB for what changed since the mirror's `server_knowledge` (everything, the first
/// time), applies it, and announces the transactions it touched.
pub async fn sync(
    client: &YnabClient,
    plan_id: &str,
    mirror: &mut Mirror,
    key: &MirrorKey,
) -> Result<Changes, YnabError> {
    let since = (mirror.server_knowledge > 0).then_some(mirror.server_knowledge);
    let data = client.plan(plan_id, since).await?;
    let transaction_ids = mirror.changed_transactions(&data.plan);
    let changes = mirror.apply(data.plan, data.server_knowledge);
    key.registry.announce(MirrorChange {
        namespace: key.namespace.clone(),
        budget: key.budget.clone(),
        transaction_ids,
    });
    Ok(changes)
}
