//! Which Blessed rules speak for a transaction, and what they say together.

use std::collections::HashMap;

use super::matching::{Facts, Matcher};
use super::standing::acting_since;
use crate::api::rule::{CategorizationRule, CategorizationRuleSpec};

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
    /// Matching rules lead to different categories: none speaks. Their names, sorted, and
    /// the categories they lead to, sorted and each once.
    Disagree {
        rules: Vec<String>,
        categories: Vec<String>,
    },
}

/// Rules indexed by the normalised payee their match pins, patterns apart: a transaction is
/// tested only against the rules that can match it (and every pattern).
#[derive(Debug)]
pub struct Index<T> {
    by_payee: HashMap<String, Vec<T>>,
    patterns: Vec<T>,
}

impl<T> Default for Index<T> {
    fn default() -> Self {
        Self {
            by_payee: HashMap::new(),
            patterns: Vec::new(),
        }
    }
}

impl<T> Index<T> {
    /// Indexes each item under the normalised payee its rule pins (see `Matcher::key`).
    pub fn new(items: impl IntoIterator<Item = (Option<String>, T)>) -> Self {
        let mut index = Self::default();
        for (key, item) in items {
            match key {
                Some(key) => index.by_payee.entry(key).or_default().push(item),
                None => index.patterns.push(item),
            }
        }
        index
    }

    /// The items whose rule can match a transaction whose payee normalises to `normalised`.
    pub fn candidates<'a>(&'a self, normalised: &str) -> impl Iterator<Item = &'a T> {
        let pinned = self.by_payee.get(normalised).into_iter().flatten();
        pinned.chain(&self.patterns)
    }

    pub fn is_empty(&self) -> bool {
        self.by_payee.is_empty() && self.patterns.is_empty()
    }
}

/// The Blessed rules of one Budget, indexed by normalised payee.
#[derive(Debug, Default)]
pub struct RuleBook {
    index: Index<Blessed>,
}

impl RuleBook {
    pub fn new(rules: impl IntoIterator<Item = Blessed>) -> Self {
        Self {
            index: Index::new(rules.into_iter().map(|r| (r.matcher.key(), r))),
        }
    }

    /// The rules among `rules` that are about Budget `budget` of `namespace` and act: Blessed,
    /// well formed, not demoted, and vouched for by ledgerops (`Ready` at their generation, which
    /// only the controller writes after checking who blessed them).
    pub fn of_budget<'a>(
        rules: impl IntoIterator<Item = &'a CategorizationRule>,
        namespace: &str,
        budget: &str,
    ) -> Self {
        Self::new(rules.into_iter().filter_map(|r| {
            let here = r.metadata.namespace.as_deref() == Some(namespace)
                && r.spec.budget_ref.name == budget
                && acting_since(r).is_some();
            here.then(|| blessed(r.metadata.name.as_deref().unwrap_or_default(), &r.spec))?
        }))
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// What the rules say about `t`.
    pub fn verdict(&self, t: &Facts) -> Verdict {
        Verdict::of(
            self.index
                .candidates(t.normalised)
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
            let mut categories: Vec<String> = hits.iter().map(|r| r.category_id.clone()).collect();
            categories.sort();
            categories.dedup();
            Verdict::Disagree { rules, categories }
        }
    }
}
