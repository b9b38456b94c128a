//! The ApprovalRequest reconciler: records decisions, expires unanswered requests with one
//! escalation Event, and keeps stale ones stale. The subjects act on the decision themselves.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::runtime::controller::Action;
use kube::runtime::{Controller, watcher};

use super::{Context, Error};
use crate::api::approval::{ApprovalPhase, ApprovalRequest};
use crate::k8s::status;
use crate::logic::approval_status;
use crate::metrics::{ErrorLabels, KindLabels};

/// Runs the ApprovalRequest controller until shutdown.
pub async fn run(ctx: Arc<Context>) {
    Controller::new(
        Api::<ApprovalRequest>::all(ctx.client.clone()),
        watcher::Config::default().any_semantic(),
    )
    .shutdown_on_signal()
    .run(reconcile, error_policy, ctx)
    .for_each(|result| async move {
        if let Err(e) = result {
            tracing::debug!(error = %e, "ApprovalRequest reconcile did not complete");
        }
    })
    .await;
}

async fn reconcile(request: Arc<ApprovalRequest>, ctx: Arc<Context>) -> Result<Action, Error> {
    ctx.metrics
        .reconciles
        .get_or_create(&KindLabels {
            kind: "ApprovalRequest",
        })
        .inc();
    let now = Timestamp::now();
    let previous = request.status.clone().unwrap_or_default();
    let (next, escalation) =
        approval_status::next(&request.spec, &previous, request.metadata.generation, now);
    if next != previous {
        status::apply(&ctx.client, request.as_ref(), &next).await?;
    }
    if let Some(note) = escalation {
        ctx.events
            .publish(request.as_ref(), true, "Escalated", "Expire", note)
            .await;
    }
    // Look again when it expires, if nobody has decided by then.
    Ok(match next.phase {
        Some(ApprovalPhase::Pending) => {
            let left = request.spec.expires_at.0.duration_since(now);
            Action::requeue(Duration::try_from(left).unwrap_or_default() + Duration::from_secs(1))
        }
        _ => Action::await_change(),
    })
}

fn error_policy(_request: Arc<ApprovalRequest>, error: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics
        .reconcile_errors
        .get_or_create(&ErrorLabels {
            kind: "ApprovalRequest",
            reason: error.reason(),
        })
        .inc();
    tracing::warn!(%error, "ApprovalRequest reconcile failed");
    Action::requeue(Duration::from_secs(15))
}
