//! `queue`: the waiting ApprovalRequests, oldest first.

use ledgerops::api::approval::ApprovalRequest;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::{queue, table};
use crate::output::Printer;

pub async fn queue(cluster: &Cluster, out: &Printer, all: bool) -> Result<u8, PluginError> {
    let requests: Vec<ApprovalRequest> = cluster.list("ApprovalRequests").await?;
    let now = super::now();
    let rows: Vec<queue::Row> = queue::waiting(requests, now)
        .iter()
        .map(|r| queue::row(r, now))
        .collect();
    if rows.is_empty() {
        let place = if all {
            "any namespace".to_owned()
        } else {
            format!("namespace {}", cluster.namespace())
        };
        out.text(&format!(
            "No ApprovalRequest waits for a decision in {place}.\n"
        ));
    } else {
        let (headers, cells) = queue::table(&rows, all);
        out.text(&table::render(&headers, &cells, out.style));
    }
    out.names("ApprovalRequest", rows.iter().map(|r| r.name.as_str()));
    out.value(&rows)?;
    Ok(0)
}
