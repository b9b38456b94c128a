//! Where a rule stands, and the status and Events that say so.

use k8s_openapi::jiff::Timestamp;

use super::matching::Matcher;
use crate::api::rule::{CategorizationRuleSpec, CategorizationRuleStatus, RulePhase};
use crate::logic::conditions::{self, Observed};

/// Where a rule stands, and what its status says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub phase: RulePhase,
    /// Whether it may act: Blessed and well formed.
    pub ready: bool,
    pub reason: &'static str,
    pub message: String,
    pub payee: Option<String>,
}

/// Where the rule `spec` stands; `admission` is whether the admission policies are in force
/// (without them nobody's blessing can be trusted, so no rule may act).
pub fn standing(spec: &CategorizationRuleSpec, admission: Result<(), &str>) -> Standing {
    let blessed = spec.blessing.is_some();
    let phase = if blessed {
        RulePhase::Blessed
    } else {
        RulePhase::Candidate
    };
    match Matcher::new(spec) {
        Err(e) => Standing {
            phase,
            ready: false,
            reason: "Invalid",
            message: format!("{e}; the rule does not act until then"),
            payee: None,
        },
        Ok(m) if blessed && admission.is_err() => Standing {
            phase,
            ready: false,
            reason: "AdmissionPolicyMissing",
            message: format!(
                "blessed, but not acted on while the admission policies are not in force (anyone could have blessed it): {}",
                admission.err().unwrap_or_default()
            ),
            payee: Some(m.payee_line()),
        },
        Ok(m) if blessed => Standing {
            phase,
            ready: true,
            reason: "Blessed",
            message: format!(
                "blessed by {}: /agent suggest uses it before the payee's history",
                spec.blessing.as_ref().map(|b| b.by.as_str()).unwrap_or("")
            ),
            payee: Some(m.payee_line()),
        },
        Ok(m) => Standing {
            phase,
            ready: false,
            reason: "Candidate",
            message:
                "not blessed: it does not act until a person sets spec.blessing in their own name"
                    .into(),
            payee: Some(m.payee_line()),
        },
    }
}

/// The status that says where `spec` stands: `Ready` True only while the rule may act.
pub fn status(
    spec: &CategorizationRuleSpec,
    previous: &CategorizationRuleStatus,
    generation: Option<i64>,
    admission: Result<(), &str>,
    now: Timestamp,
) -> CategorizationRuleStatus {
    let s = standing(spec, admission);
    let ready = Observed::new(conditions::READY, s.ready, s.reason, s.message);
    CategorizationRuleStatus {
        observed_generation: generation,
        conditions: conditions::set(&previous.conditions, ready, generation, now),
        phase: Some(s.phase),
        payee: s.payee,
    }
}

/// The Event a change of status deserves: when where the rule stands changed (its `Ready`
/// reason), `(warning, reason, note)`.
pub fn announcement(
    previous: &CategorizationRuleStatus,
    next: &CategorizationRuleStatus,
) -> Option<(bool, String, String)> {
    let ready = conditions::get(&next.conditions, conditions::READY)?;
    let was = conditions::get(&previous.conditions, conditions::READY);
    if was.is_some_and(|w| w.reason == ready.reason) {
        return None;
    }
    Some((
        ready.reason == "Invalid",
        ready.reason.clone(),
        ready.message.clone(),
    ))
}
