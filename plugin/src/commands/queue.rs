//! `queue`: the waiting ApprovalRequests, oldest first; with `--watch`, again at each change.

use std::time::Duration;

use futures::StreamExt;
use ledgerops::api::approval::ApprovalRequest;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::{queue, table};
use crate::output::Printer;

/// Changes closer together than this are printed once (a decision and its status write).
const SETTLE: Duration = Duration::from_millis(300);

pub async fn queue(
    cluster: &Cluster,
    out: &Printer,
    all: bool,
    watch: bool,
) -> Result<u8, PluginError> {
    if !watch {
        let requests: Vec<ApprovalRequest> = cluster.list("ApprovalRequests").await?;
        print(cluster, out, all, requests)?;
        return Ok(0);
    }
    let (store, mut changes) = cluster.watch_requests();
    let mut shown: Option<Vec<String>> = None;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(0),
            change = changes.next() => {
                if change.is_none() {
                    return Err(PluginError::Failed("the watch of ApprovalRequests ended".into()));
                }
            }
        }
        tokio::time::sleep(SETTLE).await;
        while let Some(Some(())) = futures::FutureExt::now_or_never(changes.next()) {}
        let requests: Vec<ApprovalRequest> = store.state().iter().map(|r| (**r).clone()).collect();
        // Printed again only when what a person sees changed: the rows, not their ages.
        let names = waiting_names(&requests);
        if shown.as_ref() != Some(&names) {
            if shown.is_some() {
                out.text("\n");
            }
            print(cluster, out, all, requests)?;
            shown = Some(names);
        }
    }
}

fn waiting_names(requests: &[ApprovalRequest]) -> Vec<String> {
    queue::waiting(requests.to_vec(), super::now())
        .iter()
        .filter_map(|r| r.metadata.name.clone())
        .collect()
}

fn print(
    cluster: &Cluster,
    out: &Printer,
    all: bool,
    requests: Vec<ApprovalRequest>,
) -> Result<(), PluginError> {
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
    Ok(())
}
