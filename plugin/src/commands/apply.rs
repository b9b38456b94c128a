//! `apply -f FILE…`: proposes what the files declare, in your own name. Each document's
//! `ledgerops.dev/proposed-by` is the object's lineage with you added (the admission policy
//! requires it, so that nobody approves a change they helped propose) and it is server-side
//! applied as `kubectl-ledgerops`.

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::propose;
use crate::output::{self, Printer};
use ledgerops::api::common::PROPOSED_BY;

pub async fn apply(cluster: &Cluster, out: &Printer, files: &[String]) -> Result<u8, PluginError> {
    let user = cluster.whoami().await?;
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| PluginError::Usage(format!("cannot read {file}: {e}")))?;
        all.extend(
            propose::proposals(file, &text, &user, cluster.namespace())
                .map_err(PluginError::Usage)?,
        );
    }
    let mut applied = Vec::new();
    for p in &mut all {
        let live = cluster.live_annotation(p, PROPOSED_BY).await?;
        let lineage = propose::with_lineage(p, live.as_deref(), &user);
        let object = cluster.apply_dynamic(p).await?;
        out.text(&format!(
            "{} applied in namespace {} (proposed by {lineage})\n",
            output::object_name(&p.kind, &p.name),
            p.namespace
        ));
        out.names(&p.kind, [p.name.as_str()]);
        applied.push(object);
    }
    out.value(&applied)?;
    Ok(0)
}
