//! The ApprovalRequest reconciler: records decisions, expires unanswered requests with one
//! escalation Event, and keeps stale ones stale. The subjects act on the decision themselves.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::runtime::controller::Action;
use kube::runtime::{Controller, watcher};

use super::{Context, Error};
use crate::api::approval::{ApprovalPhase, ApprovalRequest};
use crate::k8s::status;
use crate::logic::approval_status;

/// Runs the ApprovalRequest controller until shutdown.
pub async fn run(ctx: Arc<Context>) {
    let api = Api::<ApprovalRequest>::all(ctx.client.clone());
    let controller =
        Controller::new(api, watcher::Config::default().any_semantic()).shutdown_on_signal();
    super::drain(controller.run(reconcile, super::error_policy, ctx)).await;
}

async fn reconcile(request: Arc<ApprovalRequest>, ctx: Arc<Context>) -> Result<Action, Error> {
    super::count::<ApprovalRequest>(&ctx);
    let now = Timestamp::now();
    let previous = request.status.clone().unwrap_or_default();
    let (next, escalation) =
        approval_status::next(&request.spec, &previous, request.metadata.generation, now);
    let next = approval_status::reconciler_part(&next);
    if next != approval_status::reconciler_part(&previous) {
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
