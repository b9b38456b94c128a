//! `diff`'s verdict, read as `kubectl diff`'s exit code: would applying the plan change YNAB now?

use ledgerops::api::plan::{CategorizationPlan, PlanPhase};
use ledgerops::logic::status::conditions;

/// What applying a plan would do now.
#[derive(Debug, PartialEq, Eq)]
pub enum Difference {
    /// Nothing would change, and why.
    None(&'static str),
    /// This many transactions would change.
    Changes(u32),
}

impl Difference {
    /// `kubectl diff`'s: 0 no difference, 1 differences.
    pub fn exit_code(&self) -> u8 {
        match self {
            Difference::None(_) => 0,
            Difference::Changes(_) => 1,
        }
    }

    /// The closing line of the text output.
    pub fn sentence(&self) -> String {
        match self {
            Difference::None(why) => format!("No difference: {why}.\n"),
            Difference::Changes(1) => "1 transaction would change.\n".to_owned(),
            Difference::Changes(n) => format!("{n} transactions would change.\n"),
        }
    }
}

/// The plan's difference from its preview, or why there is none to tell (an error: the answer
/// is neither 0 nor 1).
pub fn of(plan: &CategorizationPlan) -> Result<Difference, String> {
    let name = plan.metadata.name.as_deref().unwrap_or_default();
    let status = plan.status.as_ref();
    let phase = status.and_then(|s| s.phase);
    // An applied plan is not written again; its preview is what it wrote.
    if phase == Some(PlanPhase::Applied) {
        return Ok(Difference::None(
            "the plan is Applied, its changes are in YNAB (kubectl ledgerops undo reverts them)",
        ));
    }
    if phase == Some(PlanPhase::NothingToDo) {
        return Ok(Difference::None("every assignment already holds in YNAB"));
    }
    match status.and_then(|s| s.preview.as_ref()) {
        Some(preview) if preview.change_count == 0 => {
            Ok(Difference::None("every assignment already holds in YNAB"))
        }
        Some(preview) => Ok(Difference::Changes(preview.change_count)),
        None if phase == Some(PlanPhase::Invalid) => {
            let why = status
                .and_then(|s| conditions::get(&s.conditions, conditions::VALID))
                .map(|c| c.message.clone())
                .unwrap_or_default();
            Err(format!(
                "CategorizationPlan {name} is Invalid, so there is nothing to compare: {why}. Fix the plan and run diff again"
            ))
        }
        None => Err(format!(
            "CategorizationPlan {name} has no preview yet ({}): ledgerops computes it from YNAB shortly after the plan is created or changed; run diff again in a few seconds",
            phase
                .map(|p| format!("phase {p:?}"))
                .unwrap_or_else(|| "not reconciled yet".into())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use ledgerops::api::plan::{CategorizationPlanStatus, Preview};
    use serde_json::json;

    fn plan(phase: Option<PlanPhase>, changes: Option<u32>) -> CategorizationPlan {
        let mut p: CategorizationPlan = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
            "metadata": {"name": "september"},
            "spec": {"budgetRef": {"name": "household"}, "assignments": []}
        }))
        .unwrap();
        p.status = Some(CategorizationPlanStatus {
            phase,
            preview: changes.map(|change_count| Preview {
                hash: "sha256:abc".into(),
                server_knowledge: 7,
                change_count,
                changes: vec![],
                unchanged_count: 0,
                conflicts: vec![],
                review: None,
            }),
            ..Default::default()
        });
        p
    }

    #[test]
    fn changes_to_come_are_a_difference_and_exit_1() {
        for phase in [
            PlanPhase::AwaitingApproval,
            PlanPhase::ReadOnly,
            PlanPhase::Rejected,
            PlanPhase::Failed,
        ] {
            let d = of(&plan(Some(phase), Some(2))).unwrap();
            assert_eq!(d, Difference::Changes(2), "{phase:?}");
            assert_eq!(d.exit_code(), 1);
            assert_eq!(d.sentence(), "2 transactions would change.\n");
        }
    }

    #[test]
    fn an_applied_or_empty_plan_is_no_difference_and_exits_0() {
        for (phase, changes, why) in [
            (PlanPhase::Applied, Some(2), "the plan is Applied"),
            (PlanPhase::NothingToDo, Some(0), "already holds"),
            (PlanPhase::AwaitingApproval, Some(0), "already holds"),
        ] {
            let d = of(&plan(Some(phase), changes)).unwrap();
            assert_eq!(d.exit_code(), 0, "{phase:?}");
            assert!(d.sentence().contains(why), "{}", d.sentence());
        }
    }

    #[test]
    fn no_preview_is_an_error_that_says_what_to_do() {
        let err = of(&plan(Some(PlanPhase::Pending), None)).unwrap_err();
        assert!(err.contains("no preview yet (phase Pending)"), "{err}");
        assert!(err.contains("run diff again"), "{err}");

        let mut invalid = plan(Some(PlanPhase::Invalid), None);
        invalid.status.as_mut().unwrap().conditions = vec![Condition {
            type_: "Valid".into(),
            status: "False".into(),
            reason: "UnknownTransaction".into(),
            message: "transaction tx-999 is not in the budget".into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        }];
        let err = of(&invalid).unwrap_err();
        assert!(
            err.contains("is Invalid") && err.contains("tx-999 is not in the budget"),
            "{err}"
        );
    }
}
