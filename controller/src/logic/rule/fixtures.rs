//! Rules and demotions as the rule tests (here and in `logic::job`) build them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::api::common::LocalRef;
use crate::api::rule::{
    Blessing, CategorizationRule, CategorizationRuleSpec, CategorizationRuleStatus, Demotion,
    RuleLearning, RuleMatch,
};

/// A rule of the `household` budget, blessed by alice when `blessed`.
pub fn spec(m: RuleMatch, category: &str, blessed: bool) -> CategorizationRuleSpec {
    CategorizationRuleSpec {
        budget_ref: LocalRef {
            name: "household".into(),
        },
        matches: m,
        category_id: category.into(),
        blessing: blessed.then(|| Blessing {
            by: "alice".into(),
            at: Some(Time(Timestamp::from_second(1_790_000_000).unwrap())),
        }),
    }
}

/// Alice's blessing of `generation` lifted by a hand edit of `tx-1` from `transport` to `gifts`.
pub fn demotion(generation: i64) -> Demotion {
    Demotion {
        generation,
        blessing: Blessing {
            by: "alice".into(),
            at: None,
        },
        transaction_id: "tx-1".into(),
        written_category_id: "transport".into(),
        current_category_id: Some("gifts".into()),
        source: "CategorizationPlan/march".into(),
        at: Time(Timestamp::from_second(1_790_000_100).unwrap()),
    }
}

/// A match on the normalised payee `name`.
pub fn merchant(name: &str) -> RuleMatch {
    RuleMatch {
        payee_normalised: Some(name.into()),
        ..RuleMatch::default()
    }
}

/// Rule `name` at generation 1, with its `(confirmations, corrections)`, last used 2026-09-21.
pub fn rule(name: &str, spec: CategorizationRuleSpec, counts: (u32, u32)) -> CategorizationRule {
    let mut r = CategorizationRule::new(name, spec);
    r.metadata.generation = Some(1);
    r.status = Some(CategorizationRuleStatus {
        learning: Some(RuleLearning {
            confirmations: counts.0,
            corrections: counts.1,
            last_used: Some(Time(Timestamp::from_second(1_790_000_000).unwrap())),
            evidence: Vec::new(),
        }),
        ..CategorizationRuleStatus::default()
    });
    r
}
