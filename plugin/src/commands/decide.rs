//! `approve` and `reject`: decide a waiting request in your own name.

use std::time::Duration;

use ledgerops::api::approval::{ApprovalRequest, Decision, Verdict};
use ledgerops::api::budget::{Budget, NamedCategory};
use ledgerops::api::common::Edits;
use ledgerops::api::plan::CategorizationPlan;
use serde_json::json;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::outcome::{self, Outcome};
use crate::logic::{approvable, describe, edits};
use crate::output::{self, Printer};

use super::show::subject_plan;

/// Reads the request and refuses, with the reason, one that cannot be decided now.
async fn decidable(cluster: &Cluster, name: &str) -> Result<ApprovalRequest, PluginError> {
    let request: ApprovalRequest = cluster.must_get("ApprovalRequest", name).await?;
    approvable::check(&request, super::now()).map_err(|r| PluginError::Refused(r.0))?;
    Ok(request)
}

/// Records `verdict` by the authenticated user (with their groups) on `request`, as it was read (a request that
/// changed meanwhile is refused by its resourceVersion).
async fn record(
    cluster: &Cluster,
    request: &ApprovalRequest,
    verdict: Verdict,
    (by, groups): (String, Vec<String>),
    comment: Option<String>,
    edits: Option<Edits>,
) -> Result<ApprovalRequest, PluginError> {
    let name = request.metadata.name.clone().unwrap_or_default();
    let decision = Decision {
        verdict,
        by,
        groups,
        comment,
        edits,
    };
    let action = format!(
        "{} ApprovalRequest {name} in namespace {}",
        if verdict == Verdict::Approve {
            "approve"
        } else {
            "reject"
        },
        cluster.namespace()
    );
    cluster
        .merge(
            action,
            &name,
            request.metadata.resource_version.clone(),
            json!({"spec": {"decision": decision}}),
        )
        .await
}

/// What `approve` was asked: the comment, the confirmation, how long to wait, and the edits.
pub struct Asked {
    pub comment: Option<String>,
    pub yes: bool,
    pub wait: Duration,
    pub drop: Vec<String>,
    pub set: Vec<String>,
}

/// The edits the flags ask for, checked against the plan and the Budget, or `None` without
/// any.
async fn edits_of(
    cluster: &Cluster,
    request: &ApprovalRequest,
    plan: Option<&CategorizationPlan>,
    asked: &Asked,
) -> Result<Option<(Edits, Vec<NamedCategory>)>, PluginError> {
    if asked.drop.is_empty() && asked.set.is_empty() {
        return Ok(None);
    }
    let budget: Budget = cluster
        .must_get("Budget", &request.spec.budget_ref.name)
        .await?;
    let categories = budget
        .status
        .as_ref()
        .map(|s| s.categories.clone())
        .unwrap_or_default();
    let edits =
        edits::from_flags(&asked.drop, &asked.set, &categories).map_err(PluginError::Usage)?;
    edits::check(&edits, request, plan, &budget).map_err(PluginError::Refused)?;
    Ok(Some((edits, categories)))
}

pub async fn approve(
    cluster: &Cluster,
    out: &Printer,
    name: &str,
    asked: Asked,
) -> Result<u8, PluginError> {
    let request = decidable(cluster, name).await?;
    let (me, groups) = cluster.identity().await?;
    let plan = subject_plan(cluster, &request).await?;
    let edits = edits_of(cluster, &request, plan.as_ref(), &asked).await?;
    out.text(&describe::request(
        &request,
        plan.as_ref(),
        super::now(),
        out.style,
    ));
    if let Some((e, categories)) = &edits {
        out.text(&edits::preview(
            e,
            &request.spec.changes,
            request.spec.change_count,
            categories,
            out.style,
        ));
    }
    let with = if edits.is_some() {
        " with your edits"
    } else {
        ""
    };
    if !asked.yes {
        if !output::interactive() {
            return Err(PluginError::Usage(format!(
                "not approving ApprovalRequest {name}: there is no terminal to ask you on. Read the preview (kubectl ledgerops show {name}), then pass --yes."
            )));
        }
        let answer = output::ask(&format!(
            "\nApprove ApprovalRequest {name}{with} as {me}? [y/N] "
        ))?;
        if !approvable::confirmed(&answer) {
            return Err(PluginError::Refused(format!(
                "not approved: you did not answer y. Nothing was recorded on ApprovalRequest {name}."
            )));
        }
    }
    let (comment, wait) = (asked.comment, asked.wait);
    let edits = edits.map(|(e, _)| e);
    let decided = record(
        cluster,
        &request,
        Verdict::Approve,
        (me.clone(), groups),
        comment,
        edits,
    )
    .await?;
    out.text(&format!(
        "\n{} ApprovalRequest {name}{with} as {me}.\n",
        out.style.good("Approved")
    ));
    out.names("ApprovalRequest", [name]);
    if wait.is_zero() {
        out.value(&decided)?;
        return Ok(0);
    }
    out.text(&format!(
        "Waiting up to {}s for ledgerops to write it…\n",
        wait.as_secs()
    ));
    let end = crate::cluster::poll(wait, async || {
        let request: ApprovalRequest = cluster.must_get("ApprovalRequest", name).await?;
        let plan = subject_plan(cluster, &request).await?;
        Ok(outcome::of(&request, plan.as_ref()).map(|end| (end, request)))
    })
    .await?;
    let Some((end, last)) = end else {
        return Err(PluginError::Failed(format!(
            "ledgerops did not finish within {}s: the approval is recorded; follow it with kubectl ledgerops show {name}",
            wait.as_secs()
        )));
    };
    out.text(&match &end {
        Outcome::Applied { operation } => format!(
            "{}: operation {operation}\n",
            out.style.good("Applied")
        ),
        Outcome::ReadOnly => "Approved, not written: the Budget has writes disabled (spec.writes.enabled: false); it is written once they are enabled.\n".into(),
        Outcome::NotApplied(why) => format!("{}: {why}\n", out.style.bad("Not applied")),
        Outcome::Failed(why) => format!("{}: {why}\n", out.style.bad("Failed")),
    });
    out.value(&last)?;
    Ok(end.exit_code())
}

pub async fn reject(
    cluster: &Cluster,
    out: &Printer,
    name: &str,
    why: String,
) -> Result<u8, PluginError> {
    if why.trim().is_empty() {
        return Err(PluginError::Usage(format!(
            "not rejecting ApprovalRequest {name}: say why with -m \"reason\""
        )));
    }
    let request = decidable(cluster, name).await?;
    let (me, groups) = cluster.identity().await?;
    let decided = record(
        cluster,
        &request,
        Verdict::Reject,
        (me.clone(), groups),
        Some(why),
        None,
    )
    .await?;
    out.text(&format!(
        "{} ApprovalRequest {name} as {me}: nothing is written for it.\n",
        out.style.bad("Rejected")
    ));
    out.names("ApprovalRequest", [name]);
    out.value(&decided)?;
    Ok(0)
}
