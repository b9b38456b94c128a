//! The approval hook every write passes: the Budget's policy runs it, blocks it, or asks a
//! person through an ApprovalRequest bound to the exact change, and nothing is written until
//! that request is approved.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::{Resource, ResourceExt};

use super::{Context, Error};
use crate::api::approval::{
    ApprovalPhase, ApprovalRequest, ApprovalRequestSpec, Decision, Subject, SubjectKind,
    Verdict as Answer,
};
use crate::api::budget::Budget;
use crate::api::common::LocalRef;
use crate::k8s::{objects, status};
use crate::logic::approval_status;
use crate::logic::duration;
use crate::logic::plan::PlannedChange;
use crate::logic::policy::{self, Action};
use crate::logic::transaction_status::Verdict;

/// Whether the write may go ahead.
pub enum Gate {
    Proceed,
    Wait(Verdict),
}

/// What asks, and about which change.
pub struct Ask<'a, K> {
    pub subject: &'a K,
    pub kind: SubjectKind,
    pub budget: &'a Budget,
    pub changes: &'a [PlannedChange],
    pub decision: policy::Decision,
    /// Binds the approval to exactly this change from exactly this state.
    pub hash: String,
    pub summary: String,
}

/// Applies the policy's decision: runs, blocks, or finds (or opens) the ApprovalRequest for
/// `ask.hash` and follows its answer.
pub async fn gate<K>(ctx: &Context, ask: Ask<'_, K>, now: Timestamp) -> Result<Gate, Error>
where
    K: Resource<DynamicType = ()>,
{
    match ask.decision.action {
        Action::Run => return Ok(Gate::Proceed),
        Action::Block => {
            return Ok(Gate::Wait(Verdict::Blocked {
                reason: "Policy",
                message: format!(
                    "The Budget's policy blocks this write: {}.",
                    ask.decision.reason
                ),
            }));
        }
        Action::Ask => {}
    }
    // Without the admission policies anyone could have made or decided the request: fail closed.
    if let Err(message) = ctx.admission.verified() {
        return Ok(Gate::Wait(Verdict::Blocked {
            reason: "AdmissionPolicyMissing",
            message,
        }));
    }
    let namespace = ask.subject.meta().namespace.clone().unwrap_or_default();
    let uid = ask.subject.meta().uid.clone().unwrap_or_default();
    let existing = objects::approval_requests_for(&ctx.client, &namespace, &uid).await?;
    // Requests for an earlier preview no longer hold: mark them, so nobody approves the old one.
    for old in existing
        .iter()
        .filter(|r| r.spec.preview_hash != ask.hash && r.spec.decision.is_none())
    {
        let previous = old.status.clone().unwrap_or_default();
        if previous.phase != Some(ApprovalPhase::Stale) {
            status::apply(
                &ctx.client,
                old,
                &approval_status::stale(&previous, old.metadata.generation, now),
            )
            .await?;
        }
    }
    let request = match existing
        .into_iter()
        .find(|r| r.spec.preview_hash == ask.hash)
    {
        Some(r) => r,
        None => {
            objects::create_approval_request(&ctx.client, &namespace, &new_request(&ask, &uid, now))
                .await?
        }
    };
    let name = request.name_any();
    Ok(match &request.spec.decision {
        Some(Decision {
            verdict: Answer::Approve,
            ..
        }) => Gate::Proceed,
        Some(Decision {
            verdict: Answer::Reject,
            by,
            comment,
        }) => Gate::Wait(Verdict::Blocked {
            reason: "Rejected",
            message: format!(
                "{by} rejected ApprovalRequest {name}: {}. Change the spec to ask again.",
                comment.as_deref().unwrap_or("no reason given")
            ),
        }),
        None if request.spec.expires_at.0 <= now => Gate::Wait(Verdict::Blocked {
            reason: "Expired",
            message: format!(
                "Nobody decided on ApprovalRequest {name} before it expired; nothing was written. Change the spec to ask again."
            ),
        }),
        None => Gate::Wait(Verdict::AwaitingApproval(format!(
            "Waiting for a person to approve ApprovalRequest {name} ({}): kubectl patch approvalrequest {name} --type=merge -p '{{\"spec\":{{\"decision\":{{\"verdict\":\"Approve\",\"by\":\"<your user name>\"}}}}}}'",
            ask.decision.reason
        ))),
    })
}

fn new_request<K: Resource<DynamicType = ()>>(
    ask: &Ask<'_, K>,
    uid: &str,
    now: Timestamp,
) -> ApprovalRequest {
    let policy = &ask.budget.spec.approval;
    let expiry =
        duration::parse(&policy.expiry.0).unwrap_or(std::time::Duration::from_secs(86_400));
    let expires = now + SignedDuration::try_from(expiry).unwrap_or(SignedDuration::from_hours(24));
    let subject_name = ask.subject.meta().name.clone().unwrap_or_default();
    let mut request = ApprovalRequest::new(
        &format!("{}-{}", truncate(&subject_name, 200), &ask.hash[..10]),
        ApprovalRequestSpec {
            budget_ref: LocalRef {
                name: ask.budget.name_any(),
            },
            subject: Subject {
                kind: ask.kind,
                name: subject_name,
            },
            preview_hash: ask.hash.clone(),
            summary: truncate(&ask.summary, 200),
            reason: truncate(&ask.decision.reason, 500),
            changes: ask.changes.iter().map(|c| c.change.clone()).collect(),
            expires_at: Time(expires),
            escalate_to: policy.escalate_to.clone(),
            decision: None,
        },
    );
    request.metadata.labels = Some([(objects::SUBJECT_UID.to_owned(), uid.to_owned())].into());
    request.metadata.owner_references = ask.subject.controller_owner_ref(&()).map(|o| vec![o]);
    request
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}
