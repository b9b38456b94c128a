//! `/agent approve <request>` and `/agent reject <request>`: the decision written into the
//! ApprovalRequest as `gitea:<login>`, only on a request that is Pending and not expired (see
//! [`decidable`]), and, with four eyes, only by a login the Budget maps to a Kubernetes user
//! outside the change's lineage (`spec.proposedBy`). The admission policy lets only the
//! controller's service account write such a decision; the executor authorized the job through
//! Gitea right before this runs.

use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};

use super::edits;
use super::outcome::{Outcome, kube_failed};
use crate::agent::context::AgentContext;
use crate::api::agent_job::AgentJob;
use crate::api::approval::ApprovalRequest;
use crate::logic::approval::powers::{self, DecisionCheck};
use crate::logic::job::decidable::decidable;
use crate::logic::job::decision::{self, Verdict};

/// Records `verdict` (with the approver's `comment`) on ApprovalRequest `request`.
pub(super) async fn run(
    ctx: &AgentContext,
    job: &AgentJob,
    request: &str,
    verdict: Verdict<'_>,
    comment: Option<&str>,
) -> Outcome {
    let api: Api<ApprovalRequest> =
        Api::namespaced(ctx.store.client().clone(), ctx.store.namespace());
    let current = match api.get_opt(request).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return Outcome::Rejected(decision::no_request(request, ctx.store.namespace()));
        }
        Err(e) => return kube_failed("reading the ApprovalRequest", e),
    };
    if let Err(refusal) = decidable(
        request,
        current.status.as_ref().and_then(|s| s.phase),
        current.spec.decision.as_ref(),
        current.spec.expires_at.0,
        Timestamp::now(),
    ) {
        return Outcome::Rejected(refusal);
    }
    let by = decision::by(&job.spec.author);
    if let DecisionCheck::Refused(why) = four_eyes(ctx, &current, &by) {
        return Outcome::Rejected(why);
    }
    let edited = match verdict {
        Verdict::Approve(except) if !except.is_empty() => {
            match edits::of(ctx, &current, except).await {
                Ok(found) => Some(found),
                Err(outcome) => return outcome,
            }
        }
        _ => None,
    };
    let (edits, edited) = edited.unzip();
    let patch = decision::patch(verdict, &by, comment, edits.as_ref());
    match api
        .patch(request, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Outcome::Completed(decision::decided(
            verdict,
            request,
            &current.spec.summary,
            edited.as_deref(),
            &by,
        )),
        Err(kube::Error::Api(s)) if s.code == 422 || s.code == 403 || s.code == 409 => {
            Outcome::Rejected(decision::refused_by_api(request, &s.message))
        }
        Err(e) => kube_failed("writing the decision", e),
    }
}

/// Whether `by` may decide `request` at all, as far as four eyes and the Budget's Gitea mapping
/// tell (the authorizer is asked again before an approval is followed).
fn four_eyes(ctx: &AgentContext, request: &ApprovalRequest, by: &str) -> DecisionCheck {
    let name = request.name_any();
    let budget = ctx
        .budgets
        .get(&ObjectRef::new(&request.spec.budget_ref.name).within(ctx.store.namespace()));
    // The request recorded whether four eyes held when ledgerops opened it (only ledgerops
    // opens requests); the Budget may ask for them since. No Budget: nobody is mapped.
    let four_eyes =
        request.spec.four_eyes || budget.as_ref().is_some_and(|b| b.spec.approval.four_eyes);
    let mapped = budget
        .map(|b| b.spec.approval.gitea_user_map())
        .unwrap_or_default();
    powers::decision(&name, by, &mapped, &request.spec.proposed_by, four_eyes)
}
