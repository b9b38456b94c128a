//! The approval hook every write passes: the Budget's policy runs it, blocks it, or asks a
//! person through an ApprovalRequest bound to the exact change, and nothing is written until
//! that request is approved. Only requests ledgerops issued count (see
//! `logic::approval::authority`), and each approval is spent on one write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::{Context, Error};
use crate::api::approval::{ApprovalRequest, Issuance, SUBJECT_UID, SubjectKind};
use crate::api::budget::Budget;
use crate::api::common::{DecisionRecord, Edits, Review};
use crate::k8s::{objects, status};
use crate::logic::approval::authority::{self as authority, Authority, Binding, Expected, Next};
use crate::logic::approval::gate::Hold;
use crate::logic::approval::policy::{self, Action};
use crate::logic::approval::request::{self, Taken};
use crate::logic::approval::status as approval_status;
use crate::logic::plan::PlannedChange;
use crate::logic::runtime::request_priority::WriteDecision;

/// Whether the write may go ahead.
pub enum Gate {
    Proceed(Grant),
    Wait(Hold),
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
    /// The changes summed up for one screen (a plan's).
    pub review: Option<Review>,
}

/// The authority a write goes ahead under.
#[derive(Clone)]
pub struct Grant {
    /// Who decided, kept by the subject's status and the journal.
    pub record: DecisionRecord,
    /// The write attempt. A write interrupted after its approval was spent keeps its id.
    pub attempt_id: String,
    /// The approval had already been spent on this attempt, before a restart.
    pub resumed: bool,
    /// The request whose approval the write spends; `None` when the policy runs it.
    request: Option<Box<Spendable>>,
}

/// A request that approved the write, and what it must be bound to, to be judged again as it
/// is spent.
#[derive(Clone)]
struct Spendable {
    request: ApprovalRequest,
    binding: Binding,
}

impl Grant {
    /// The policy runs write `attempt_id` of the change `hash`, for `reason`, without asking.
    pub fn by_policy(reason: &str, hash: &str, attempt_id: String, now: Timestamp) -> Self {
        Self {
            record: request::policy_record(reason, hash, now),
            attempt_id,
            resumed: false,
            request: None,
        }
    }

    /// Who let the write go out: a person's approval, or the policy.
    pub fn decided_by(&self) -> WriteDecision {
        if self.request.is_some() {
            WriteDecision::Person
        } else {
            WriteDecision::Policy
        }
    }

    /// The approver's edits to the proposal, if they made any.
    pub fn edits(&self) -> Option<&Edits> {
        self.record.edits.as_ref().filter(|e| !e.is_empty())
    }

    /// The request asked for four eyes when it was opened.
    pub fn asked_four_eyes(&self) -> bool {
        self.request
            .as_ref()
            .is_some_and(|s| s.request.spec.four_eyes)
    }

    /// Binds the grant to the edited proposal `hash`, the one that is written.
    pub fn edited(&mut self, hash: String) {
        self.record.edited_hash = Some(hash);
    }

    /// The hash of the preview written under this grant: the edited one, if edited.
    pub fn written_hash(&self) -> &str {
        self.record
            .edited_hash
            .as_deref()
            .unwrap_or(&self.record.preview_hash)
    }

    /// Records on the request that its approval is spent on this write. Called before the
    /// write: a request can never authorize a second one.
    pub async fn spend(&self, ctx: &Context, now: Timestamp) -> Result<(), Error> {
        let (Some(spendable), false) = (&self.request, self.resumed) else {
            return Ok(());
        };
        let Spendable { request, binding } = spendable.as_ref();
        let used = json!({ "used": request::spent(&self.attempt_id, self.written_hash(), now) });
        // Conditional: a copy that is behind (already spent) cannot be spent again.
        match record_on(ctx, request, used.clone(), Write::IfUnchanged).await {
            Err(e) if e.is_conflict() => {}
            done => return done,
        }
        // Someone wrote the request since it was cached: as a person decides, its own
        // reconciler records the decision at the same moment. Spend the copy the API server
        // holds now if it grants exactly this write, rather than start the reconcile over.
        let namespace = request.namespace().unwrap_or_default();
        let name = request.name_any();
        match objects::approval_request(&ctx.client, &namespace, &name).await? {
            Some(fresh) if authority::still_grants(&fresh, request, &binding.expected(), now) => {
                record_on(ctx, &fresh, used, Write::IfUnchanged).await
            }
            _ => Err(Error::CacheBehind(format!("ApprovalRequest {name}"))),
        }
    }

    /// Records that the write's outcome is known: `written` when YNAB holds the approved change.
    /// Called after the write.
    pub async fn complete(
        &self,
        ctx: &Context,
        now: Timestamp,
        written: bool,
    ) -> Result<(), Error> {
        let Some(spendable) = &self.request else {
            return Ok(());
        };
        let request = &spendable.request;
        let hash = Some(self.written_hash().to_owned());
        complete(ctx, request, &self.attempt_id, now, written, hash).await
    }
}

/// Applies the policy's decision: runs, blocks, or finds (or opens) the ApprovalRequest for
/// `ask.hash` and follows its answer. `attempt_id` names the write if it goes ahead.
pub async fn gate<K>(
    ctx: &Context,
    ask: Ask<'_, K>,
    attempt_id: String,
    now: Timestamp,
) -> Result<Gate, Error>
where
    K: Resource<DynamicType = ()>,
{
    match ask.decision.action {
        Action::Run => {
            let grant = Grant::by_policy(&ask.decision.reason, &ask.hash, attempt_id, now);
            return Ok(Gate::Proceed(grant));
        }
        Action::Block => {
            let why = ask.decision.reason.clone();
            return Ok(Gate::Wait(Hold::PolicyBlocked { why }));
        }
        Action::Ask => {}
    }
    // Without the admission policies anyone could have made or decided the request: fail closed.
    if let Err(message) = ctx.admission.verified() {
        return Ok(Gate::Wait(Hold::AdmissionPolicyMissing(message)));
    }
    // Everyone who shaped the change, as the caches know it now: the request records them, and
    // none of them may decide it.
    let lineage = match super::lineage::gathered(ctx, ask.subject.meta(), Some(ask.budget)) {
        Ok(lineage) => lineage,
        Err(why) => return Ok(Gate::Wait(Hold::NotAuthorized(why))),
    };
    let namespace = ask.subject.meta().namespace.clone().unwrap_or_default();
    let uid = ask.subject.meta().uid.clone().unwrap_or_default();
    let subject_name = ask.subject.meta().name.clone().unwrap_or_default();
    let budget_name = ask.budget.name_any();
    let expected = Expected {
        subject_uid: &uid,
        subject_kind: ask.kind,
        subject_name: &subject_name,
        budget: &budget_name,
        hash: &ask.hash,
    };
    // From the cache: every write below that grants or takes authority is conditional on the
    // version read, so a copy that is behind ends in a conflict and a fresh look.
    let existing = cached_requests_for(ctx, &namespace, &uid);
    // Requests for an earlier preview no longer hold: mark them, so nobody approves the old one.
    for old in existing
        .iter()
        .filter(|r| authority::goes_stale(r, &uid, &ask.hash))
    {
        let previous = old.status.clone().unwrap_or_default();
        status::apply_if_unchanged(
            &ctx.client,
            old,
            &approval_status::reconciler_part(&approval_status::stale(
                &previous,
                old.metadata.generation,
                now,
            )),
            &old.resource_version().unwrap_or_default(),
        )
        .await?;
    }
    let judged: Vec<Authority> = existing
        .iter()
        .map(|r| authority::judge(r, &expected, now))
        .collect();
    let request = match authority::next(&judged) {
        Next::Resume(i, attempt) => {
            let resumed = grant(&existing[i], &judged[i], &expected, attempt, true);
            return Ok(Gate::Proceed(resumed));
        }
        Next::Proceed(i) => {
            // Right before the write: four eyes, and the decider still holds approve.
            let followed =
                super::authority::decision_followed(ctx, &existing[i], &lineage, ask.budget)
                    .await?;
            if let Err(why) = followed {
                return Ok(Gate::Wait(Hold::NotAuthorized(why)));
            }
            if let Some(why) = request::misplaced_edits(&existing[i], ask.kind) {
                return Ok(Gate::Wait(Hold::NotAuthorized(why)));
            }
            let granted = grant(&existing[i], &judged[i], &expected, attempt_id, false);
            return Ok(Gate::Proceed(granted));
        }
        Next::Stop(i) => return Ok(Gate::Wait(request::refusal(&existing[i], &judged[i]))),
        Next::Wait(i) => existing[i].clone(),
        Next::Adopt(i) => {
            issue(ctx, &existing[i], &uid, &ask.hash, now).await?;
            existing[i].clone()
        }
        Next::Issue => {
            let taken: Vec<String> = existing.iter().map(ResourceExt::name_any).collect();
            match open(ctx, &ask, &expected, &lineage, &taken, now).await? {
                Some(created) => created,
                None => {
                    let base = request::base_name(&subject_name, &ask.hash);
                    let taken = Hold::NameTaken {
                        subject: subject_name,
                        base,
                    };
                    return Ok(Gate::Wait(taken));
                }
            }
        }
    };
    Ok(Gate::Wait(Hold::AwaitingApproval {
        request: request.name_any(),
        why: ask.decision.reason,
    }))
}

/// Completes every write in flight on a request of the subject `uid`: called when a restart
/// settled that write without the gate (`written`: it had landed).
pub async fn complete_in_flight(
    ctx: &Context,
    namespace: &str,
    uid: &str,
    now: Timestamp,
    written: bool,
) -> Result<(), Error> {
    for request in objects::approval_requests_for(&ctx.client, namespace, uid).await? {
        if let Some(attempt) = authority::in_flight_attempt(&request, uid) {
            complete(ctx, &request, attempt, now, written, None).await?;
        }
    }
    Ok(())
}

/// The request of the subject `uid` whose approval was spent on a write that has not completed,
/// if any: a plan resumes that write with the preview it approved.
pub async fn in_flight(
    ctx: &Context,
    namespace: &str,
    uid: &str,
) -> Result<Option<ApprovalRequest>, Error> {
    let requests = objects::approval_requests_for(&ctx.client, namespace, uid).await?;
    Ok(requests
        .into_iter()
        .find(|r| authority::in_flight_attempt(r, uid).is_some()))
}

fn grant(
    request: &ApprovalRequest,
    judged: &Authority,
    expected: &Expected<'_>,
    attempt_id: String,
    resumed: bool,
) -> Grant {
    Grant {
        record: request::approval_record(request, judged),
        attempt_id,
        resumed,
        request: Some(Box::new(Spendable {
            request: request.clone(),
            binding: Binding::of(expected),
        })),
    }
}

/// Creates the request under the first free name, and records its issuance.
async fn open<K: Resource<DynamicType = ()>>(
    ctx: &Context,
    ask: &Ask<'_, K>,
    expected: &Expected<'_>,
    lineage: &[String],
    taken: &[String],
    now: Timestamp,
) -> Result<Option<ApprovalRequest>, Error> {
    let namespace = ask.subject.meta().namespace.clone().unwrap_or_default();
    let (namespace, uid) = (namespace.as_str(), expected.subject_uid);
    let draft = request::Draft {
        budget: ask.budget,
        kind: ask.kind,
        subject: expected.subject_name,
        subject_uid: uid,
        lineage: lineage.to_vec(),
        owner: ask.subject.controller_owner_ref(&()),
        hash: &ask.hash,
        summary: &ask.summary,
        reason: &ask.decision.reason,
        changes: ask.changes,
        review: ask.review.clone(),
    };
    let names = request::names(expected.subject_name, &ask.hash);
    for name in names.iter().filter(|n| !taken.contains(n)) {
        let new = request::new_request(&draft, name, now);
        if let Some(created) =
            objects::create_approval_request(&ctx.client, namespace, &new).await?
        {
            issue(ctx, &created, uid, &ask.hash, now).await?;
            return Ok(Some(created));
        }
        // The name is taken by a request the list did not show yet (a list can lag a create):
        // one of ours for this preview is the request; anything else is passed over.
        let Some(existing) = objects::approval_request(&ctx.client, namespace, name).await? else {
            continue;
        };
        match request::taken(&authority::judge(&existing, expected, now)) {
            Taken::PassOver => continue,
            Taken::Issue => {
                issue(ctx, &existing, uid, &ask.hash, now).await?;
                return Ok(Some(existing));
            }
            Taken::Follow => return Ok(Some(existing)),
        }
    }
    Ok(None)
}

/// Records that ledgerops issued `request` for `uid` and `hash`.
async fn issue(
    ctx: &Context,
    request: &ApprovalRequest,
    uid: &str,
    hash: &str,
    now: Timestamp,
) -> Result<(), Error> {
    let issued = Issuance {
        subject_uid: uid.to_owned(),
        preview_hash: hash.to_owned(),
        at: Time(now),
    };
    record_on(
        ctx,
        request,
        json!({ "issuedFor": issued }),
        Write::IfUnchanged,
    )
    .await
}

async fn complete(
    ctx: &Context,
    request: &ApprovalRequest,
    attempt: &str,
    now: Timestamp,
    written: bool,
    preview_hash: Option<String>,
) -> Result<(), Error> {
    let used = request::completed(request, attempt, now, written, preview_hash);
    // The outcome of this attempt, whichever copy it was started from.
    record_on(ctx, request, json!({ "used": used }), Write::Always).await
}

/// Applies `fields` of the request's status as the gate's own (see `GATE_FIELD_MANAGER`).
async fn record_on(
    ctx: &Context,
    request: &ApprovalRequest,
    fields: serde_json::Value,
    write: Write,
) -> Result<(), Error> {
    let owned = request::gate_fields(request, fields);
    let if_unchanged = matches!(write, Write::IfUnchanged);
    status::apply_as(
        &ctx.client,
        request,
        &owned,
        status::GATE_FIELD_MANAGER,
        if_unchanged,
    )
    .await?;
    Ok(())
}

/// Whether a write on a request holds only for the version it was decided on.
enum Write {
    IfUnchanged,
    Always,
}

/// The requests that ask about the subject `uid`, from the shared cache.
fn cached_requests_for(ctx: &Context, namespace: &str, uid: &str) -> Vec<ApprovalRequest> {
    ctx.approvals
        .state()
        .iter()
        .filter(|r| {
            r.namespace().as_deref() == Some(namespace)
                && r.labels().get(SUBJECT_UID).map(String::as_str) == Some(uid)
        })
        .map(|r| r.as_ref().clone())
        .collect()
}
