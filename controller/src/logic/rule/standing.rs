//! Where a rule stands, and the status and Events that say so.

use k8s_openapi::jiff::Timestamp;

use super::matching::Matcher;
use crate::api::rule::{
    CategorizationRule, CategorizationRuleSpec, CategorizationRuleStatus, Demotion, RulePhase,
};
use crate::logic::status::conditions::{self, Observed};
use crate::logic::status::kstatus;

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

/// The demotion that holds for the rule at `generation`: the one recorded at that generation.
/// A new blessing, or a merged change, makes a new generation and lifts it.
pub fn demotion_in_force(
    status: Option<&CategorizationRuleStatus>,
    generation: Option<i64>,
) -> Option<&Demotion> {
    let demotion = status?.demotion.as_ref()?;
    (Some(demotion.generation) == generation).then_some(demotion)
}

/// Whether `rule` is demoted at its current generation.
pub fn is_demoted(rule: &CategorizationRule) -> bool {
    demotion_in_force(rule.status.as_ref(), rule.metadata.generation).is_some()
}

/// Where the rule `spec` stands; `demotion` is the one in force, if any; `admission` is whether
/// the admission policies are in force (without them nobody's blessing can be trusted, so no
/// rule may act); `authority` is whether its blessing counts now (the blesser holds `bless` and
/// is not the rule's author, or a governing ConfigRepo merged it): a blessing that does not
/// leaves the rule a Candidate.
pub fn standing(
    spec: &CategorizationRuleSpec,
    demotion: Option<&Demotion>,
    admission: Result<(), &str>,
    authority: Result<(), &str>,
) -> Standing {
    let blessed = spec.blessing.is_some() && (admission.is_err() || authority.is_ok());
    let phase = match (blessed, demotion) {
        (true, Some(_)) => RulePhase::Demoted,
        (true, None) => RulePhase::Blessed,
        (false, _) => RulePhase::Candidate,
    };
    match Matcher::new(spec) {
        Err(e) => Standing {
            phase,
            ready: false,
            reason: "Invalid",
            message: format!("{e}; the rule does not act until then"),
            payee: None,
        },
        Ok(m) if blessed && demotion.is_some() => Standing {
            phase,
            ready: false,
            reason: "Demoted",
            message: demotion.map(demoted).unwrap_or_default(),
            payee: Some(m.payee_line()),
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
        Ok(m) if spec.blessing.is_some() => Standing {
            phase,
            ready: false,
            reason: "NotAuthorized",
            message: format!(
                "a Candidate: its blessing does not count. {}",
                authority.err().unwrap_or_default()
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

/// What a demoted rule's status says: what happened, and how to let the rule act again.
fn demoted(d: &Demotion) -> String {
    let now = d.current_category_id.as_deref().unwrap_or("uncategorised");
    let again = if d.blessing.by.starts_with("configrepo:") {
        "merge a change to the rule into the config repository, or bless it in your own name"
    } else {
        "bless it again in your own name (a new spec.blessing.at)"
    };
    format!(
        "demoted: transaction {} was recategorised by hand from {} to {now} after ledgerops wrote it ({}) under the blessing of {}; the rule does not act until you {again}",
        d.transaction_id, d.written_category_id, d.source, d.blessing.by
    )
}

/// The status that says where `spec` stands: `Ready` True only while the rule may act. What
/// learning owns (`learning`, `demotion`) is kept from `previous`.
pub fn status(
    spec: &CategorizationRuleSpec,
    previous: &CategorizationRuleStatus,
    generation: Option<i64>,
    admission: Result<(), &str>,
    authority: Result<(), &str>,
    now: Timestamp,
) -> CategorizationRuleStatus {
    let s = standing(
        spec,
        demotion_in_force(Some(previous), generation),
        admission,
        authority,
    );
    let health = kstatus::rule(s.ready);
    let ready = Observed::new(conditions::READY, s.ready, s.reason, s.message);
    let c = conditions::set(&previous.conditions, ready, generation, now);
    CategorizationRuleStatus {
        observed_generation: generation,
        conditions: kstatus::summarize(&c, "CategorizationRule", health, generation, now),
        phase: Some(s.phase),
        payee: s.payee,
        learning: previous.learning.clone(),
        demotion: previous.demotion.clone(),
        proposal: previous.proposal.clone(),
    }
}

/// The part of `status` the rule reconciler writes: everything but what learning and proposals
/// own (see `k8s::status::LEARNING_FIELD_MANAGER`), so that a status written from an older
/// cached copy never drops a count, a demotion or a proposal.
pub fn reconciler_part(status: &CategorizationRuleStatus) -> CategorizationRuleStatus {
    CategorizationRuleStatus {
        learning: None,
        demotion: None,
        proposal: None,
        ..status.clone()
    }
}

/// Since when the rule may act, while it may: when its `Ready` condition turned True.
pub fn acting_since(rule: &CategorizationRule) -> Option<Timestamp> {
    let status = rule.status.as_ref()?;
    let ready = conditions::get(&status.conditions, conditions::READY)?;
    let current = status.observed_generation == rule.metadata.generation;
    (current && ready.status == "True" && !is_demoted(rule)).then_some(ready.last_transition_time.0)
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
        matches!(
            ready.reason.as_str(),
            "Invalid" | "Demoted" | "NotAuthorized"
        ),
        ready.reason.clone(),
        ready.message.clone(),
    ))
}
