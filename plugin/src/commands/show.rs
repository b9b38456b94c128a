//! `show REQUEST|PLAN` and `diff PLAN`.

use ledgerops::api::approval::{ApprovalRequest, SubjectKind};
use ledgerops::api::plan::CategorizationPlan;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::{describe, difference};
use crate::output::Printer;

/// The plan a request asks about, when it asks about a plan that still exists.
pub async fn subject_plan(
    cluster: &Cluster,
    request: &ApprovalRequest,
) -> Result<Option<CategorizationPlan>, PluginError> {
    if request.spec.subject.kind != SubjectKind::CategorizationPlan {
        return Ok(None);
    }
    cluster
        .get("CategorizationPlan", &request.spec.subject.name)
        .await
}

pub async fn show(cluster: &Cluster, out: &Printer, name: &str) -> Result<u8, PluginError> {
    if let Some(request) = cluster
        .get::<ApprovalRequest>("ApprovalRequest", name)
        .await?
    {
        let plan = subject_plan(cluster, &request).await?;
        out.text(&describe::request(
            &request,
            plan.as_ref(),
            super::now(),
            out.style,
        ));
        out.names("ApprovalRequest", [name]);
        out.value(&request)?;
        return Ok(0);
    }
    let plan: Option<CategorizationPlan> = cluster.get("CategorizationPlan", name).await?;
    let Some(plan) = plan else {
        return Err(PluginError::Failed(format!(
            "there is no ApprovalRequest or CategorizationPlan {name} in namespace {}: check the name (kubectl ledgerops queue lists the waiting requests) or pass -n NAMESPACE",
            cluster.namespace()
        )));
    };
    out.text(&describe::plan(&plan, out.style));
    out.names("CategorizationPlan", [name]);
    out.value(&plan)?;
    Ok(0)
}

/// Exits as `kubectl diff` does: 0 nothing would change, 1 something would (errors exit 2 or
/// more, see the library's `parse_and_run`).
pub async fn diff(cluster: &Cluster, out: &Printer, name: &str) -> Result<u8, PluginError> {
    let plan: CategorizationPlan = cluster.must_get("CategorizationPlan", name).await?;
    let difference = difference::of(&plan).map_err(PluginError::Failed)?;
    out.text(&describe::plan(&plan, out.style));
    out.text(&format!("\n{}", difference.sentence()));
    out.names("CategorizationPlan", [name]);
    out.value(&plan.status.as_ref().and_then(|s| s.preview.as_ref()))?;
    Ok(difference.exit_code())
}
