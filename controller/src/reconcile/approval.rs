//! The ApprovalRequest reconciler: records decisions, expires unanswered requests with one
//! escalation Event, keeps stale ones stale, and deletes settled requests that a newer request
//! of the same subject replaced, once their retention is over (`logic::runtime::retention`). The
//! subjects act on the decision themselves, and keep it in their status.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::Controller;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, ResourceExt};

use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error};
use crate::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind};
use crate::api::plan::CategorizationPlan;
use crate::api::transaction::Transaction;
use crate::k8s::watches::{Listed, Watches};
use crate::logic::approval::status as approval_status;
use crate::logic::runtime::retention::{self, Retention};

/// Subscribes to the shared ApprovalRequest watch at once; the returned future runs the
/// controller. Settled, replaced requests are deleted `retention` after they settled.
pub fn run(
    ctx: Arc<Context>,
    watches: &Watches,
    retention: Duration,
) -> impl Future<Output = ()> + use<> {
    // Every change wakes a request, its own status writes too: a decision lands there.
    let requests = watches.approvals.store();
    let controller = Controller::for_shared_stream(watches.approvals.subscribe(), requests.clone())
        .with_config(Config::default().concurrency(super::CONCURRENCY))
        .graceful_shutdown_on(ctx.shutdown.requested());
    // Who replaced whom, and whether a subject is gone, are read from the shared caches.
    let caches = Caches {
        requests,
        plans: watches.plans.store(),
        transactions: watches.transactions.store(),
        listed: (watches.plans.listed(), watches.transactions.listed()),
    };
    let reconcile_one = move |request, ctx| reconcile(request, ctx, caches.clone(), retention);
    super::drain_forgetting(
        controller.run(reconcile_one, super::error_policy, ctx.clone()),
        ctx,
    )
}

#[derive(Clone)]
struct Caches {
    requests: Store<ApprovalRequest>,
    plans: Store<CategorizationPlan>,
    transactions: Store<Transaction>,
    /// Whether `plans` and `transactions` hold their first lists. Not `Store::wait_until_ready`:
    /// that wakes only the last of the reconciles waiting on it, and the others hung for good.
    listed: (Listed, Listed),
}

impl Caches {
    /// Whether the object `request` asks about is gone, once both caches have been listed: the
    /// subject ledgerops named in it, looked up by name, is missing or is another object.
    async fn subject_gone(&self, request: &ApprovalRequest) -> bool {
        let Some(uid) = retention::subject_of(request) else {
            return false;
        };
        let (plans, transactions) = self.listed.clone();
        if !(plans.wait().await && transactions.wait().await) {
            return false;
        }
        let namespace = request.namespace().unwrap_or_default();
        let subject = &request.spec.subject.name;
        let found = match request.spec.subject.kind {
            SubjectKind::CategorizationPlan => self
                .plans
                .get(&ObjectRef::new(subject).within(&namespace))
                .and_then(|p| p.uid()),
            SubjectKind::Transaction => self
                .transactions
                .get(&ObjectRef::new(subject).within(&namespace))
                .and_then(|t| t.uid()),
        };
        found.as_deref() != Some(uid)
    }
}

async fn reconcile(
    request: Arc<ApprovalRequest>,
    ctx: Arc<Context>,
    caches: Caches,
    retention: Duration,
) -> Result<Action, Error> {
    let _measure = super::measure::<ApprovalRequest>(&ctx);
    let now = Timestamp::now();
    let previous = request.status.clone().unwrap_or_default();
    let (next, escalation) =
        approval_status::next(&request.spec, &previous, request.metadata.generation, now);
    let written = approval_status::reconciler_part(&next);
    let changed = written != approval_status::reconciler_part(&previous);
    summarize_and_patch(
        &ctx,
        request.as_ref(),
        changed,
        &written,
        StatusWrite::Apply,
        None,
        "Decide",
    )
    .await?;
    if approval_status::keep_as_record(&request) {
        release(&ctx, &request).await?;
    }
    if let Some(note) = escalation {
        ctx.events
            .publish(request.as_ref(), true, "Escalated", "Expire", note)
            .await;
    }
    let namespace = request.namespace();
    let all = caches.requests.state();
    let neighbours: Vec<&ApprovalRequest> = all
        .iter()
        .filter(|r| r.namespace() == namespace)
        .map(Arc::as_ref)
        .collect();
    let subject_gone = caches.subject_gone(&request).await;
    match retention::approval_request(&request, &next, &neighbours, subject_gone, retention, now) {
        Retention::Delete => {
            delete(&ctx, &request).await?;
            return Ok(Action::await_change());
        }
        Retention::LookAgainIn(left) => return Ok(Action::requeue(left)),
        Retention::Keep => {}
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

/// Drops the owner reference of a decided request, so that deleting or pruning its subject
/// leaves the record of who decided (retention removes it by age). Only ledgerops changes owner
/// references on ApprovalRequests (admission).
async fn release(ctx: &Context, request: &ApprovalRequest) -> Result<(), Error> {
    let api = Api::<ApprovalRequest>::namespaced(
        ctx.client.clone(),
        &request.namespace().unwrap_or_default(),
    );
    let patch = serde_json::json!({"metadata": {
        "ownerReferences": null,
        "resourceVersion": request.resource_version(),
    }});
    match api
        .patch(
            &request.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if crate::k8s::is_not_found(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Deletes exactly the version decided on: a request changed meanwhile is looked at again.
async fn delete(ctx: &Context, request: &ApprovalRequest) -> Result<(), Error> {
    let api = Api::<ApprovalRequest>::namespaced(
        ctx.client.clone(),
        &request.namespace().unwrap_or_default(),
    );
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: request.uid(),
            resource_version: request.resource_version(),
        }),
        ..DeleteParams::default()
    };
    match api.delete(&request.name_any(), &params).await {
        Ok(_) => {
            tracing::info!(request = %request.name_any(), "replaced request deleted after its retention");
            Ok(())
        }
        Err(e) if crate::k8s::is_not_found(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
