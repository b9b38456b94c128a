//! `status`: Budgets and their request budget, Transactions that need a person, and the queue.

use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::Budget;
use ledgerops::api::transaction::Transaction;
use serde_json::json;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::{health, queue, table};
use crate::output::Printer;

pub async fn status(cluster: &Cluster, out: &Printer) -> Result<u8, PluginError> {
    let budgets: Vec<Budget> = cluster.list("Budgets").await?;
    let transactions: Vec<Transaction> = cluster.list("Transactions").await?;
    let requests: Vec<ApprovalRequest> = cluster.list("ApprovalRequests").await?;
    let now = super::now();
    let budget_rows: Vec<Vec<String>> =
        budgets.iter().map(|b| health::budget_row(b, now)).collect();
    let stuck = health::needing_a_person(&transactions);
    let waiting: Vec<queue::Row> = queue::waiting(requests, now)
        .iter()
        .map(|r| queue::row(r, now))
        .collect();
    out.text(&table::render(
        &health::BUDGET_HEADERS,
        &budget_rows,
        out.style,
    ));
    if stuck.is_empty() {
        out.text("\nNo Transaction needs a person.\n");
    } else {
        out.text("\n");
        out.text(&table::render(
            &health::TRANSACTION_HEADERS,
            &stuck,
            out.style,
        ));
    }
    match waiting.first() {
        None => out.text("\nNo ApprovalRequest waits for a decision.\n"),
        Some(oldest) => out.text(&format!(
            "\n{} ApprovalRequests wait for a decision, the oldest {} ({}): kubectl ledgerops queue\n",
            waiting.len(),
            oldest.name,
            oldest.age
        )),
    }
    out.names(
        "Budget",
        budgets.iter().filter_map(|b| b.metadata.name.as_deref()),
    );
    // The rows' second cell is the Transaction's name (TRANSACTION_HEADERS).
    out.names("Transaction", stuck.iter().map(|row| row[1].as_str()));
    out.names("ApprovalRequest", waiting.iter().map(|r| r.name.as_str()));
    out.value(&json!({
        "budgets": budgets,
        "transactionsNeedingAPerson": stuck,
        "waitingRequests": waiting,
    }))?;
    Ok(0)
}
