//! `resolve TRANSACTION ours|theirs` and `sync BUDGET`: set the annotation ledgerops acts on,
//! then wait until it has.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ledgerops::api::budget::Budget;
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::transaction::{Transaction, TransactionPhase};
use ledgerops::logic::transaction::step::RESOLVE;
use serde_json::json;

use crate::cli::Side;
use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::propose;
use crate::output::Printer;

/// The annotation the controller reads (README: Budgets).
const SYNC_REQUESTED: &str = "ledgerops.dev/sync-requested-at";

pub async fn resolve(
    cluster: &Cluster,
    out: &Printer,
    name: &str,
    side: Side,
    wait: Duration,
) -> Result<u8, PluginError> {
    let tx: Transaction = cluster.must_get("Transaction", name).await?;
    let phase = tx.status.as_ref().and_then(|s| s.phase);
    if phase != Some(TransactionPhase::Diverged) {
        return Err(PluginError::Refused(format!(
            "Transaction {name} is {}, not Diverged: there is nothing to resolve",
            phase
                .map(|p| format!("{p:?}"))
                .unwrap_or_else(|| "not reconciled yet".into())
        )));
    }
    let action = format!(
        "annotate Transaction {name} in namespace {}",
        cluster.namespace()
    );
    let user = cluster.whoami().await?;
    let lineage = tx
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROPOSED_BY));
    let patch = propose::resolution(lineage.map(String::as_str), &user, side.as_str());
    cluster
        .merge::<Transaction>(action, name, None, patch)
        .await?;
    out.text(&format!(
        "Asked ledgerops to resolve Transaction {name} with {}…\n",
        side.as_str()
    ));
    let handled = cluster
        .wait_for("Transaction", name, wait, |t: &Transaction| {
            let pending = t
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(RESOLVE));
            // `ours` writes over an edit: that waits for a person's approval, not for us.
            let asked =
                t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::AwaitingApproval);
            (!pending || asked).then(|| t.clone())
        })
        .await?;
    let Some(handled) = handled else {
        return Err(PluginError::Failed(format!(
            "ledgerops has not handled the resolution of Transaction {name} within {}s; look again with kubectl get transaction {name}",
            wait.as_secs()
        )));
    };
    let phase = handled.status.as_ref().and_then(|s| s.phase);
    out.text(&format!("Transaction {name} is now {phase:?}.\n"));
    if phase == Some(TransactionPhase::AwaitingApproval) {
        out.text("Writing the spec over the edit in YNAB waits for a person's approval: kubectl ledgerops queue lists it.\n");
    }
    out.names("Transaction", [name]);
    out.value(&handled)?;
    Ok(0)
}

/// What a sync changes in a Budget's status: its time, to the second, and the requests it made
/// (a sync within the second of the one before shows only in the count).
fn sync_mark(budget: &Budget) -> (Option<Time>, Option<u32>) {
    let status = budget.status.as_ref();
    (
        status.and_then(|s| s.last_sync_time.clone()),
        status
            .and_then(|s| s.requests.as_ref())
            .map(|r| r.used_last_hour),
    )
}

pub async fn sync(
    cluster: &Cluster,
    out: &Printer,
    name: &str,
    wait: Duration,
) -> Result<u8, PluginError> {
    let before: Budget = cluster.must_get("Budget", name).await?;
    let last = sync_mark(&before);
    let action = format!(
        "annotate Budget {name} in namespace {}",
        cluster.namespace()
    );
    let patch = json!({"metadata": {"annotations": {SYNC_REQUESTED: super::now().to_string()}}});
    cluster.merge::<Budget>(action, name, None, patch).await?;
    out.text(&format!("Asked Budget {name} to sync…\n"));
    let synced = cluster
        .wait_for("Budget", name, wait, |b: &Budget| {
            let now = sync_mark(b);
            (now.0.is_some() && now != last).then(|| b.clone())
        })
        .await?;
    let Some(synced) = synced else {
        return Err(PluginError::Failed(format!(
            "Budget {name} did not sync within {}s: kubectl describe budget {name} says why",
            wait.as_secs()
        )));
    };
    let status = synced.status.clone().unwrap_or_default();
    out.text(&format!(
        "Budget {name} synced: {:?}, server knowledge {}, {} of {} requests used in the last hour.\n",
        status.phase,
        status.server_knowledge.unwrap_or_default(),
        status.requests.as_ref().map(|r| r.used_last_hour).unwrap_or_default(),
        status.requests.as_ref().map(|r| r.limit_per_hour).unwrap_or_default(),
    ));
    out.names("Budget", [name]);
    out.value(&synced)?;
    Ok(0)
}
