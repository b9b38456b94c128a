//! What people's decisions teach about rules: every write ledgerops made on a person's (or the
//! policy's) approval confirms the rules that would have made it and corrects those that would
//! have made another; a write a person later changed by hand in YNAB is an override, which
//! demotes the Blessed rule that stood behind it. A decision no rule explains teaches a new
//! Candidate.
//!
//! Everything is counted afresh from the decisions the cluster holds, so that counting again
//! (after a restart, or twice by two replicas) gives the same figures: nothing is lost or
//! doubled. Learning never writes to YNAB.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::book::Index;
use super::matching::{Facts, Matcher};
use crate::api::common::LocalRef;
use crate::api::rule::{CategorizationRuleSpec, Demotion, Evidence, RuleLearning, RuleMatch};
use crate::logic::plan::hash::hex_sha256;
use crate::logic::values::payee::normalise_payee;

/// How many pieces of evidence a rule's status keeps.
pub const EVIDENCE_KEPT: usize = 10;
/// How many Candidates one pass creates at most: the rest wait for the next pass.
pub const CANDIDATES_PER_PASS: usize = 20;

/// A rule of the Budget, as learning sees it.
#[derive(Debug, Clone)]
pub struct RuleView<'a> {
    pub name: &'a str,
    pub spec: &'a CategorizationRuleSpec,
    pub generation: i64,
    /// Since when the rule may act (its `Ready` turned True), while it may: a write made
    /// before that was not made under this blessing.
    pub acting_since: Option<Timestamp>,
}

/// One write ledgerops made on a person's or the policy's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `CategorizationPlan/<name>` or `Transaction/<name>`.
    pub source: String,
    pub transaction_id: String,
    /// The category written.
    pub category_id: String,
    /// Who decided: a person, or `policy`.
    pub by: String,
    pub at: Timestamp,
    pub payee: String,
    pub account_id: String,
    /// Milliunits.
    pub amount: i64,
    pub memo: Option<String>,
    /// What YNAB shows now.
    pub now: Now,
    /// Whether the decision teaches (confirms, corrects, makes a Candidate). One that does not
    /// (a plan the autopilot made and the policy ran unasked: the rules judging themselves) is
    /// still weighed for overrides, which demote.
    pub teaches: bool,
}

/// A transaction's category in YNAB now, as far as ledgerops can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Now {
    /// The category (none: uncategorised).
    Category(Option<String>),
    /// Not known: deleted, not read since the write, or a write to it is in flight.
    Unknown,
}

/// What one decision says about one rule that matches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Confirmation,
    Correction,
    Override,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Confirmation => "Confirmation",
            Verdict::Correction => "Correction",
            Verdict::Override => "Override",
        }
    }
}

/// What a pass learned for one Budget.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Learned {
    /// For every well-formed rule given, what the decisions say about it.
    pub learning: BTreeMap<String, RuleLearning>,
    /// The acting rules an override demotes, with the demotion.
    pub demotions: BTreeMap<String, Demotion>,
    /// Candidates to create, by name: decisions no rule explains.
    pub candidates: Vec<(String, CategorizationRuleSpec)>,
    /// For each candidate, the people whose decisions taught it (its lineage: none of them
    /// blesses it under four eyes).
    pub taught_by: BTreeMap<String, Vec<String>>,
}

/// What `decisions` teach about `rules` (the Budget `budget`'s), at `now`.
pub fn learn(budget: &str, rules: &[RuleView], decisions: &[Decision], now: Timestamp) -> Learned {
    let matchers: Vec<(&RuleView, Matcher)> = rules
        .iter()
        .filter_map(|r| Some((r, Matcher::new(r.spec).ok()?)))
        .collect();
    let index = Index::new(matchers.iter().map(|(r, m)| (m.key(), (*r, m))));
    let latest = latest_writes(decisions);
    let mut per_rule: BTreeMap<&str, Vec<(&Decision, Verdict)>> =
        matchers.iter().map(|(r, _)| (r.name, Vec::new())).collect();
    let mut unexplained: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut deciders: BTreeMap<(String, String), BTreeSet<&str>> = BTreeMap::new();
    for (i, d) in decisions.iter().enumerate() {
        let normalised = normalise_payee(&d.payee);
        let facts = Facts {
            payee: &d.payee,
            normalised: &normalised,
            account_id: &d.account_id,
            amount: d.amount,
            memo: d.memo.as_deref(),
        };
        let overridden = latest.get(d.transaction_id.as_str()) == Some(&i)
            && matches!(&d.now, Now::Category(c) if c.as_deref() != Some(d.category_id.as_str()));
        let mut explained = false;
        for (r, _) in index
            .candidates(&normalised)
            .filter(|(_, m)| m.matches(&facts))
        {
            let verdict = if r.spec.category_id != d.category_id {
                Verdict::Correction
            } else if overridden {
                Verdict::Override
            } else {
                explained = true;
                Verdict::Confirmation
            };
            if d.teaches || verdict == Verdict::Override {
                per_rule.entry(r.name).or_default().push((d, verdict));
            }
        }
        if d.teaches && !explained && !overridden && !normalised.is_empty() {
            let lesson = (normalised, d.category_id.clone());
            if d.by != POLICY {
                deciders.entry(lesson.clone()).or_default().insert(&d.by);
            }
            *unexplained.entry(lesson).or_default() += 1;
        }
    }
    let mut learned = Learned::default();
    for (r, _) in &matchers {
        let verdicts = per_rule.remove(r.name).unwrap_or_default();
        if let Some(demotion) = demotion(r, &verdicts, now) {
            learned.demotions.insert(r.name.to_owned(), demotion);
        }
        learned
            .learning
            .insert(r.name.to_owned(), summary(verdicts));
    }
    learned.candidates = candidates(budget, unexplained);
    for (name, spec) in &learned.candidates {
        let lesson = (
            spec.matches.payee_normalised.clone().unwrap_or_default(),
            spec.category_id.clone(),
        );
        let people = deciders.get(&lesson).into_iter().flatten();
        learned
            .taught_by
            .insert(name.clone(), people.map(|p| (*p).to_owned()).collect());
    }
    learned
}

/// The `by` of a decision the Budget's policy made without asking anyone.
const POLICY: &str = "policy";

/// For each transaction, the index of its latest write: only that one can be overridden (an
/// earlier write was replaced by ledgerops itself).
fn latest_writes(decisions: &[Decision]) -> HashMap<&str, usize> {
    let mut latest: HashMap<&str, usize> = HashMap::new();
    for (i, d) in decisions.iter().enumerate() {
        let entry = latest.entry(d.transaction_id.as_str()).or_insert(i);
        let held = &decisions[*entry];
        if (d.at, &d.source) > (held.at, &held.source) {
            *entry = i;
        }
    }
    latest
}

/// The counts and the newest evidence of one rule.
fn summary(mut verdicts: Vec<(&Decision, Verdict)>) -> RuleLearning {
    let count = |v: Verdict| verdicts.iter().filter(|(_, x)| *x == v).count() as u32;
    let confirmations = count(Verdict::Confirmation);
    let corrections = count(Verdict::Correction) + count(Verdict::Override);
    let last_used = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::Confirmation)
        .map(|(d, _)| d.at)
        .max()
        .map(Time);
    verdicts.sort_by(|(a, _), (b, _)| {
        (b.at, &b.source, &b.transaction_id).cmp(&(a.at, &a.source, &a.transaction_id))
    });
    let evidence = verdicts
        .iter()
        .take(EVIDENCE_KEPT)
        .map(|(d, v)| Evidence {
            source: d.source.clone(),
            transaction_id: d.transaction_id.clone(),
            category_id: d.category_id.clone(),
            by: d.by.clone(),
            at: Time(d.at),
            verdict: v.word().to_owned(),
        })
        .collect();
    RuleLearning {
        confirmations,
        corrections,
        last_used,
        evidence,
    }
}

/// The demotion of an acting rule by the newest override of a write made while it acted.
fn demotion(r: &RuleView, verdicts: &[(&Decision, Verdict)], now: Timestamp) -> Option<Demotion> {
    let since = r.acting_since?;
    let blessing = r.spec.blessing.clone()?;
    let (d, _) = verdicts
        .iter()
        .filter(|(d, v)| *v == Verdict::Override && d.at >= since)
        .max_by(|(a, _), (b, _)| (a.at, &a.source).cmp(&(b.at, &b.source)))?;
    let Now::Category(current) = &d.now else {
        return None;
    };
    Some(Demotion {
        generation: r.generation,
        blessing,
        transaction_id: d.transaction_id.clone(),
        written_category_id: d.category_id.clone(),
        current_category_id: current.clone(),
        source: d.source.clone(),
        at: Time(now),
    })
}

/// The Candidates that explain the unexplained decisions, most supported first.
fn candidates(
    budget: &str,
    unexplained: BTreeMap<(String, String), usize>,
) -> Vec<(String, CategorizationRuleSpec)> {
    let mut pairs: Vec<((String, String), usize)> = unexplained.into_iter().collect();
    pairs.sort_by(|(a, n), (b, m)| m.cmp(n).then_with(|| a.cmp(b)));
    pairs
        .into_iter()
        .take(CANDIDATES_PER_PASS)
        .map(|((normalised, category_id), _)| {
            let name = candidate_name(&normalised, &category_id);
            let spec = CategorizationRuleSpec {
                budget_ref: LocalRef {
                    name: budget.to_owned(),
                },
                matches: RuleMatch {
                    payee_normalised: Some(normalised),
                    ..RuleMatch::default()
                },
                category_id,
                blessing: None,
            };
            (name, spec)
        })
        .collect()
}

/// A learned Candidate's name: the merchant, readable, and a hash of the merchant and the
/// category (the same lesson is learned once, under one name).
pub fn candidate_name(normalised: &str, category_id: &str) -> String {
    let slug: String = normalised
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let slug: Vec<&str> = slug.split('-').filter(|s| !s.is_empty()).collect();
    let mut slug = slug.join("-");
    slug.truncate(40);
    let slug = slug.trim_end_matches('-');
    let hash = hex_sha256(format!("{normalised}\n{category_id}").as_bytes());
    if slug.is_empty() {
        format!("learned-{}", &hash[..10])
    } else {
        format!("learned-{slug}-{}", &hash[..10])
    }
}

#[cfg(test)]
#[path = "learn_tests.rs"]
mod tests;
