//! CategorizationRules as decisions: whether a rule is well formed and where it stands, whether
//! it matches a transaction, and which rule (if any) speaks for a transaction.
//!
//! Only a Blessed rule ever speaks; when Blessed rules disagree on a transaction, none does.

use std::collections::HashMap;

use k8s_openapi::jiff::Timestamp;

use crate::api::rule::{
    CategorizationRule, CategorizationRuleSpec, CategorizationRuleStatus, MAX_WILDCARDS, RulePhase,
};
use crate::logic::conditions::{self, Observed};
use crate::logic::money::parse_decimal;
use crate::logic::payee::normalise_payee;

/// Why a rule cannot be used; the message names the field and says what to write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("match.amount.{field} `{value}` is not an amount; write a decimal such as -12.50")]
    Amount { field: &'static str, value: String },
    #[error("match.amount.min {min} is above match.amount.max {max}; swap them")]
    EmptyRange { min: String, max: String },
    #[error(
        "match.payeePattern `{0}` needs some text besides at most {MAX_WILDCARDS} `*` wildcards"
    )]
    Pattern(String),
    #[error("give exactly one of match.payee, match.payeeNormalised and match.payeePattern")]
    Payee,
    #[error(
        "match.payeeNormalised `{0}` has no merchant name once normalised (digits, punctuation and card prefixes are dropped)"
    )]
    NoMerchant(String),
}

/// How a rule tests the payee.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PayeeTest {
    /// The payee exactly as YNAB shows it.
    Exact(String),
    /// The normalised payee.
    Normalised(String),
    /// `*`-separated pieces of the normalised payee, in order.
    Pattern(Vec<String>),
}

/// A rule's match, checked and ready to test transactions with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    payee: PayeeTest,
    account_id: Option<String>,
    min: Option<i64>,
    max: Option<i64>,
    /// Upper case.
    memo_contains: Option<String>,
}

/// What a rule looks at in a transaction.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub payee: &'a str,
    /// [`normalise_payee`] of `payee`, computed once per transaction.
    pub normalised: &'a str,
    pub account_id: &'a str,
    /// Milliunits.
    pub amount: i64,
    pub memo: Option<&'a str>,
}

impl Matcher {
    pub fn new(spec: &CategorizationRuleSpec) -> Result<Self, RuleError> {
        let m = &spec.matches;
        let payee = match (&m.payee, &m.payee_normalised, &m.payee_pattern) {
            (Some(p), None, None) => PayeeTest::Exact(p.clone()),
            (None, Some(n), None) => match normalise_payee(n) {
                key if key.is_empty() => return Err(RuleError::NoMerchant(n.clone())),
                key => PayeeTest::Normalised(key),
            },
            (None, None, Some(p)) => pattern(p)?,
            _ => return Err(RuleError::Payee),
        };
        let amount = |field: &'static str, value: &Option<String>| {
            value
                .as_deref()
                .map(|v| {
                    parse_decimal(v).map_err(|_| RuleError::Amount {
                        field,
                        value: v.to_owned(),
                    })
                })
                .transpose()
        };
        let range = m.amount.clone().unwrap_or_default();
        let (min, max) = (amount("min", &range.min)?, amount("max", &range.max)?);
        if let (Some(lo), Some(hi)) = (min, max)
            && lo > hi
        {
            return Err(RuleError::EmptyRange {
                min: range.min.unwrap_or_default(),
                max: range.max.unwrap_or_default(),
            });
        }
        Ok(Self {
            payee,
            account_id: m.account_id.clone(),
            min,
            max,
            memo_contains: m.memo_contains.as_deref().map(str::to_uppercase),
        })
    }

    /// Whether the transaction is one the rule is about.
    pub fn matches(&self, t: &Facts) -> bool {
        let payee = match &self.payee {
            PayeeTest::Exact(p) => t.payee == p,
            PayeeTest::Normalised(n) => t.normalised == n,
            PayeeTest::Pattern(pieces) => glob(pieces, t.normalised),
        };
        payee
            && self.account_id.as_deref().is_none_or(|a| a == t.account_id)
            && self.min.is_none_or(|lo| t.amount >= lo)
            && self.max.is_none_or(|hi| t.amount <= hi)
            && self.memo_contains.as_deref().is_none_or(|needle| {
                t.memo
                    .is_some_and(|memo| memo.to_uppercase().contains(needle))
            })
    }

    /// The payee test in one line, for `kubectl get`.
    pub fn payee_line(&self) -> String {
        match &self.payee {
            PayeeTest::Exact(p) => format!("= {p}"),
            PayeeTest::Normalised(n) => format!("~ {n}"),
            PayeeTest::Pattern(pieces) => format!("~ {}", pieces.join("*")),
        }
    }

    /// The normalised payee every match has, when the test pins one: the index key.
    fn key(&self) -> Option<String> {
        match &self.payee {
            PayeeTest::Exact(p) => Some(normalise_payee(p)),
            PayeeTest::Normalised(n) => Some(n.clone()),
            PayeeTest::Pattern(_) => None,
        }
    }
}

/// A pattern on the normalised payee: its text is normalised piece by piece, so that it is
/// written the way people see the payee.
fn pattern(raw: &str) -> Result<PayeeTest, RuleError> {
    let pieces: Vec<String> = raw
        .split('*')
        .map(|p| {
            if p.trim().is_empty() {
                String::new()
            } else {
                p.to_uppercase()
                    .chars()
                    .map(|c| if c.is_alphanumeric() { c } else { ' ' })
                    .collect::<String>()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        })
        .collect();
    if pieces.len() - 1 > MAX_WILDCARDS || pieces.iter().all(String::is_empty) {
        return Err(RuleError::Pattern(raw.to_owned()));
    }
    Ok(PayeeTest::Pattern(pieces))
}

/// Whether `text` is the pieces with anything between them; the first piece is anchored at the
/// start, the last at the end (an empty piece is a leading or trailing `*`). Leftmost placement
/// of each middle piece is enough, so this is linear in the pieces' number times the text.
fn glob(pieces: &[String], text: &str) -> bool {
    let (first, rest) = pieces.split_first().expect("at least one piece");
    let Some(mut left) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for piece in middle {
        match left.find(piece.as_str()) {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last.as_str())
}

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

/// The rule `name` as one that may speak: only when it is Blessed and well formed.
pub fn blessed(name: &str, spec: &CategorizationRuleSpec) -> Option<Blessed> {
    spec.blessing.as_ref()?;
    Some(Blessed {
        name: name.to_owned(),
        category_id: spec.category_id.clone(),
        matcher: Matcher::new(spec).ok()?,
    })
}

/// A Blessed rule, ready to speak for transactions.
#[derive(Debug, Clone)]
pub struct Blessed {
    pub name: String,
    pub category_id: String,
    pub matcher: Matcher,
}

/// What the Blessed rules say about one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No Blessed rule matches.
    Silent,
    /// Every matching rule leads to this category; `rules` are their names, sorted.
    Category {
        category_id: String,
        rules: Vec<String>,
    },
    /// Matching rules lead to different categories: none speaks. Their names, sorted.
    Disagree { rules: Vec<String> },
}

/// The Blessed rules of one Budget, indexed by normalised payee so that a transaction is tested
/// only against the rules that can match it (and every pattern).
#[derive(Debug, Default)]
pub struct RuleBook {
    by_payee: HashMap<String, Vec<Blessed>>,
    patterns: Vec<Blessed>,
}

impl RuleBook {
    pub fn new(rules: impl IntoIterator<Item = Blessed>) -> Self {
        let mut book = Self::default();
        for rule in rules {
            match rule.matcher.key() {
                Some(key) => book.by_payee.entry(key).or_default().push(rule),
                None => book.patterns.push(rule),
            }
        }
        book
    }

    /// The Blessed, well-formed rules among `rules` that are about Budget `budget` of
    /// `namespace`.
    pub fn of_budget<'a>(
        rules: impl IntoIterator<Item = &'a CategorizationRule>,
        namespace: &str,
        budget: &str,
    ) -> Self {
        Self::new(rules.into_iter().filter_map(|r| {
            let here = r.metadata.namespace.as_deref() == Some(namespace)
                && r.spec.budget_ref.name == budget;
            here.then(|| blessed(r.metadata.name.as_deref().unwrap_or_default(), &r.spec))?
        }))
    }

    pub fn is_empty(&self) -> bool {
        self.by_payee.is_empty() && self.patterns.is_empty()
    }

    /// What the rules say about `t`.
    pub fn verdict(&self, t: &Facts) -> Verdict {
        let candidates = self.by_payee.get(t.normalised).into_iter().flatten();
        Verdict::of(
            candidates
                .chain(&self.patterns)
                .filter(|r| r.matcher.matches(t)),
        )
    }
}

impl Verdict {
    /// What the matching rules `hits` say together.
    pub fn of<'a>(hits: impl IntoIterator<Item = &'a Blessed>) -> Self {
        let mut hits: Vec<&Blessed> = hits.into_iter().collect();
        let Some(first) = hits.first() else {
            return Verdict::Silent;
        };
        let category_id = first.category_id.clone();
        let agree = hits.iter().all(|r| r.category_id == category_id);
        hits.sort_by(|a, b| a.name.cmp(&b.name));
        let rules = hits.iter().map(|r| r.name.clone()).collect();
        if agree {
            Verdict::Category { category_id, rules }
        } else {
            Verdict::Disagree { rules }
        }
    }
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
