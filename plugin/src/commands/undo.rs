//! `undo PLAN`: creates the plan that reverts an applied plan, and shows its preview.

use std::time::Duration;

use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use serde_json::json;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::describe;
use crate::output::Printer;

pub async fn undo(
    cluster: &Cluster,
    out: &Printer,
    name: &str,
    wait: Duration,
) -> Result<u8, PluginError> {
    let plan: CategorizationPlan = cluster.must_get("CategorizationPlan", name).await?;
    let phase = plan.status.as_ref().and_then(|s| s.phase);
    if !matches!(
        phase,
        Some(PlanPhase::Applied | PlanPhase::PartiallyApplied)
    ) {
        return Err(PluginError::Refused(format!(
            "CategorizationPlan {name} has no applied operation to undo (it is {}): undo a plan once it is Applied or PartiallyApplied",
            phase
                .map(|p| format!("{p:?}"))
                .unwrap_or_else(|| "not reconciled yet".into())
        )));
    }
    let undo_name: String = format!("undo-{name}").chars().take(253).collect();
    // Proposed in your own name, as admission requires.
    let user = cluster.whoami().await?;
    let undo: CategorizationPlan = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
        "metadata": {"name": undo_name, "annotations": {PROPOSED_BY: user}},
        "spec": {
            "budgetRef": plan.spec.budget_ref,
            "undoOf": name,
            "description": format!("Undo of {name}, made with kubectl ledgerops undo"),
        }
    }))
    .map_err(|e| PluginError::Failed(format!("cannot build the undo plan: {e}")))?;
    let action = format!(
        "create CategorizationPlan {undo_name} (undoOf {name}) in namespace {}",
        cluster.namespace()
    );
    cluster.create(action, &undo).await?;
    out.text(&format!(
        "Created CategorizationPlan {undo_name}; previewing…\n"
    ));
    let previewed = cluster
        .wait_for(
            "CategorizationPlan",
            &undo_name,
            wait,
            |p: &CategorizationPlan| {
                let status = p.status.as_ref()?;
                let settled = status.preview.is_some()
                    || matches!(status.phase, Some(PlanPhase::Invalid | PlanPhase::Blocked));
                settled.then(|| p.clone())
            },
        )
        .await?;
    let Some(previewed) = previewed else {
        return Err(PluginError::Failed(format!(
            "CategorizationPlan {undo_name} was not previewed within {}s: look again with kubectl ledgerops show {undo_name}",
            wait.as_secs()
        )));
    };
    out.text(&describe::plan(&previewed, out.style));
    if let Some(request) = previewed
        .status
        .as_ref()
        .and_then(|s| s.approval_request.as_ref())
    {
        out.text(&format!(
            "Approve it with: kubectl ledgerops approve {request} -n {}\n",
            cluster.namespace()
        ));
    }
    out.names("CategorizationPlan", [undo_name.as_str()]);
    out.value(&previewed)?;
    Ok(0)
}
