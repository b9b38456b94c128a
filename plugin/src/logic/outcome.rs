//! What an approval ended in, read from the request and its plan, and the exit code it means.

use ledgerops::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind};
use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::logic::status::conditions;

/// How an approved request ended, once it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// YNAB holds the change; `operation` is the journal's operation id (a plan) or the write's
    /// attempt id (a Transaction).
    Applied { operation: String },
    /// Approved, but the Budget has writes disabled.
    ReadOnly,
    /// Nothing was written, and why.
    NotApplied(String),
    /// The write failed or stopped part way, and why.
    Failed(String),
}

impl Outcome {
    /// 0 applied or held by a read-only Budget, 1 failed, 2 refused or stale.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Applied { .. } | Outcome::ReadOnly => 0,
            Outcome::Failed(_) => 1,
            Outcome::NotApplied(_) => 2,
        }
    }
}

/// The outcome of `request` (whose subject is `plan` for a plan), or `None` while it is still
/// on its way.
pub fn of(request: &ApprovalRequest, plan: Option<&CategorizationPlan>) -> Option<Outcome> {
    let status = request.status.as_ref();
    match status.and_then(|s| s.phase) {
        Some(ApprovalPhase::Stale) => {
            return Some(Outcome::NotApplied(
                "YNAB or the plan changed since the preview, so nothing was written; answer the new request ledgerops opens".into(),
            ));
        }
        Some(ApprovalPhase::Expired) => {
            return Some(Outcome::NotApplied(
                "the request expired before ledgerops saw the approval; nothing was written".into(),
            ));
        }
        Some(ApprovalPhase::Ignored) => {
            return Some(Outcome::NotApplied(
                "the request was not issued by ledgerops and authorizes nothing".into(),
            ));
        }
        Some(ApprovalPhase::Rejected) => {
            return Some(Outcome::NotApplied("the request was rejected".into()));
        }
        _ => {}
    }
    if request.spec.subject.kind == SubjectKind::CategorizationPlan {
        return plan.and_then(|p| plan_outcome(request, p));
    }
    let used = status.and_then(|s| s.used.as_ref())?;
    used.completed_at.as_ref()?;
    Some(if used.written {
        Outcome::Applied {
            operation: used.attempt_id.clone(),
        }
    } else {
        Outcome::NotApplied(
            "YNAB or the Transaction changed before the write, so nothing was written".into(),
        )
    })
}

fn plan_outcome(request: &ApprovalRequest, plan: &CategorizationPlan) -> Option<Outcome> {
    let status = plan.status.as_ref()?;
    // A plan's phase speaks for this request only once its decision names this preview.
    let ours = status
        .decision
        .as_ref()
        .is_some_and(|d| d.preview_hash == request.spec.preview_hash);
    let ready = || {
        conditions::get(&status.conditions, conditions::READY)
            .map(|c| c.message.clone())
            .unwrap_or_default()
    };
    match status.phase? {
        PlanPhase::Applied if ours => Some(Outcome::Applied {
            operation: status.operation_id.clone().unwrap_or_default(),
        }),
        PlanPhase::ReadOnly => Some(Outcome::ReadOnly),
        PlanPhase::PartiallyApplied | PlanPhase::Failed if ours => Some(Outcome::Failed(ready())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::queue::tests::request;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use ledgerops::api::approval::ApprovalUse;
    use ledgerops::api::common::DecisionRecord;
    use ledgerops::api::plan::CategorizationPlanStatus;
    use serde_json::json;

    fn plan(phase: PlanPhase, hash: &str) -> CategorizationPlan {
        let mut p: CategorizationPlan = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
            "metadata": {"name": "september"},
            "spec": {"budgetRef": {"name": "household"}, "undoOf": "august"}
        }))
        .unwrap();
        let at = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        p.status = Some(CategorizationPlanStatus {
            phase: Some(phase),
            operation_id: Some("op-1".into()),
            decision: Some(DecisionRecord {
                verdict: "Approve".into(),
                by: "bob".into(),
                comment: None,
                request: None,
                decided_at: None,
                preview_hash: hash.into(),
                edited_hash: None,
                edits: None,
            }),
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "False".into(),
                reason: "PartiallyApplied".into(),
                message: "1 of 2 changes are in YNAB".into(),
                last_transition_time: at,
                observed_generation: None,
            }],
            ..Default::default()
        });
        p
    }

    #[test]
    fn a_plan_request_ends_with_its_plan() {
        let approved = request("ns", "r", 1, 100, Some(ApprovalPhase::Approved));
        let mine = "sha256:abc";
        let cases = [
            (
                plan(PlanPhase::Applied, mine),
                Some(Outcome::Applied {
                    operation: "op-1".into(),
                }),
            ),
            (plan(PlanPhase::Applied, "sha256:older"), None),
            (plan(PlanPhase::Applying, mine), None),
            (plan(PlanPhase::ReadOnly, mine), Some(Outcome::ReadOnly)),
            (
                plan(PlanPhase::PartiallyApplied, mine),
                Some(Outcome::Failed("1 of 2 changes are in YNAB".into())),
            ),
        ];
        for (p, want) in cases {
            assert_eq!(
                of(&approved, Some(&p)),
                want,
                "{:?}",
                p.status.as_ref().unwrap().phase
            );
        }
        assert_eq!(of(&approved, None), None);
    }

    #[test]
    fn a_request_that_went_stale_expired_or_ignored_wrote_nothing() {
        let applied = plan(PlanPhase::Applied, "sha256:abc");
        for phase in [
            ApprovalPhase::Stale,
            ApprovalPhase::Expired,
            ApprovalPhase::Ignored,
            ApprovalPhase::Rejected,
        ] {
            let r = request("ns", "r", 1, 100, Some(phase));
            let got = of(&r, Some(&applied)).expect("an outcome");
            assert!(matches!(got, Outcome::NotApplied(_)), "{phase:?}: {got:?}");
            assert_eq!(got.exit_code(), 2);
        }
    }

    #[test]
    fn a_transaction_request_ends_when_its_write_is_recorded() {
        let mut r = request("ns", "r", 1, 100, Some(ApprovalPhase::Applied));
        r.spec.subject.kind = SubjectKind::Transaction;
        let at = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let mut used = ApprovalUse {
            attempt_id: "attempt-7".into(),
            started_at: at.clone(),
            completed_at: None,
            written: true,
            preview_hash: None,
        };
        let mut with = |u: &ApprovalUse| {
            r.status.as_mut().unwrap().used = Some(u.clone());
            of(&r, None)
        };
        assert_eq!(with(&used), None);
        used.completed_at = Some(at);
        assert_eq!(
            with(&used),
            Some(Outcome::Applied {
                operation: "attempt-7".into()
            })
        );
        used.written = false;
        assert!(matches!(with(&used), Some(Outcome::NotApplied(_))));
    }

    #[test]
    fn exit_codes() {
        let cases = [
            (
                Outcome::Applied {
                    operation: "x".into(),
                },
                0,
            ),
            (Outcome::ReadOnly, 0),
            (Outcome::Failed("x".into()), 1),
            (Outcome::NotApplied("x".into()), 2),
        ];
        for (o, code) in cases {
            assert_eq!(o.exit_code(), code, "{o:?}");
        }
    }
}
