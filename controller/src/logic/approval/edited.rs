//! Edits made in YNAB since ledgerops last wrote a transaction, and the policy's respect for
//! them. The rule: a transaction whose category differs from what ledgerops last wrote to it was
//! edited by someone else, and is not written over until a person says which wins. A
//! Transaction holds that for its own record (its `applied` and `baseline`); a write the policy
//! runs unasked must hold it for what any of the Budget's objects wrote. Without it, a plan
//! proposed before a spouse's edit and previewed after it puts back the category she changed,
//! and nobody is asked. What ledgerops last wrote is read from statuses only the controller
//! writes: each Transaction's `applied`, and the preview of each plan that wrote (its first 100
//! changes, all a status lists).

use std::collections::{HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;
use kube::{Resource, ResourceExt};

use super::policy::{Action, Decision};
use crate::api::common::WriteIntent;
use crate::api::plan::{CategorizationPlan, PlanPhase};
use crate::api::transaction::Transaction;
use crate::logic::plan::PlannedChange;
use crate::logic::transaction::converge;

/// The category ledgerops last wrote to each of some transactions, and when. Statuses record
/// the second only: writes of the same second are all kept, since which came last cannot be
/// told (a plan and its undo, applied within one second, are one such pair).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LastWritten(HashMap<String, (Timestamp, Vec<Option<String>>)>);

impl LastWritten {
    /// Records a write of `category` to `transaction_id` at `at`, unless a later one is known.
    pub fn record(&mut self, transaction_id: &str, at: Timestamp, category: Option<String>) {
        match self.0.get_mut(transaction_id) {
            Some((known, _)) if *known > at => {}
            Some((known, categories)) if *known == at => {
                if !categories.contains(&category) {
                    categories.push(category);
                }
            }
            _ => {
                self.0
                    .insert(transaction_id.to_owned(), (at, vec![category]));
            }
        }
    }

    /// The categories last written to `transaction_id` (more than one only when written within
    /// the same second); `None` when ledgerops never wrote it.
    pub fn categories(&self, transaction_id: &str) -> Option<&[Option<String>]> {
        self.0.get(transaction_id).map(|(_, c)| c.as_slice())
    }
}

/// What ledgerops last wrote, for every Budget (by namespace and name), noted from each
/// Transaction and plan as the watches bring them. A write stays noted when its object is
/// deleted: YNAB still holds it. A write started and not settled yet (an object's `intent`)
/// may have landed: until its object records how it ended, its targets count as written too.
/// Without them, a plan previewed while a Transaction's write waited to be settled (its answer
/// lost, its leader killed) saw no earlier write under a spouse's edit, and put the category
/// back unasked (the hour's soak, `load-00280`).
#[derive(Debug, Default)]
pub struct Written {
    last: HashMap<(String, String), LastWritten>,
    /// Each object's open write, by `namespace/Kind/name`.
    open: HashMap<String, Open>,
}

/// A write an object started whose outcome it has not recorded.
#[derive(Debug, Clone)]
struct Open {
    budget: (String, String),
    /// The knowledge it was decided on, when recorded.
    knowledge: Option<i64>,
    at: Timestamp,
    /// Transaction id and the category written to it (none known: matches nothing).
    targets: Vec<(String, Vec<Option<String>>)>,
}

impl Written {
    /// Notes what a Transaction's status says it last wrote, and the write it has open.
    pub fn transaction(&mut self, t: &Transaction) {
        let status = t.status.as_ref();
        let budget = &t.spec.budget_ref.name;
        if let Some(applied) = status.and_then(|s| s.applied.as_ref()) {
            self.budget(t, budget).record(
                &t.spec.transaction_id,
                applied.at.0,
                applied.category_id.clone(),
            );
        }
        let intent = status.and_then(|s| s.intent.as_ref());
        // The spec names what the open write writes only while it still hashes to the intent's
        // target: anyone who may edit the Transaction can change it meanwhile, and a category
        // named that way would let another object's policy write over an edit unasked. Unknown,
        // it matches no category, and the others ask.
        let declared = converge::target_of(&t.spec)
            .is_ok_and(|target| intent.is_some_and(|i| target.hash() == i.target_hash));
        let categories = if declared {
            vec![t.spec.category_id.clone()]
        } else {
            Vec::new()
        };
        let targets = vec![(t.spec.transaction_id.clone(), categories)];
        self.opened(t, budget, intent, targets);
    }

    /// Notes what an applied (or partly applied, or failed after part of it landed) plan's
    /// preview says it wrote, and the write it has open.
    pub fn plan(&mut self, p: &CategorizationPlan) {
        let Some(status) = &p.status else {
            return;
        };
        let budget = &p.spec.budget_ref.name;
        let changes = status.preview.iter().flat_map(|v| &v.changes);
        let targets = changes
            .map(|c| (c.transaction_id.clone(), vec![c.to_category_id.clone()]))
            .collect();
        self.opened(p, budget, status.intent.as_ref(), targets);
        // A failed write that landed in part records when (`appliedAt`) as a partial one does.
        let written = matches!(
            status.phase,
            Some(PlanPhase::Applied | PlanPhase::PartiallyApplied | PlanPhase::Failed)
        );
        let (Some(at), Some(preview), true) = (&status.applied_at, &status.preview, written) else {
            return;
        };
        let last = self.budget(p, budget);
        for c in &preview.changes {
            last.record(&c.transaction_id, at.0, c.to_category_id.clone());
        }
    }

    /// Forgets the open write of an object deleted; what it wrote stays noted.
    pub fn gone(&mut self, object: &impl Resource<DynamicType = ()>) {
        self.open.remove(&key_of(object));
    }

    /// What was last written to the transactions `ids` of Budget `budget` in `namespace`, as
    /// far as the objects noted so far tell: with the targets of every open write but the one
    /// of `asking` (`namespace/Kind/name`), which settles its own.
    pub fn of(
        &self,
        namespace: &str,
        budget: &str,
        ids: &HashSet<&str>,
        asking: &str,
    ) -> LastWritten {
        let key = (namespace.to_owned(), budget.to_owned());
        let mut out: HashMap<String, (Timestamp, Vec<Option<String>>)> = self
            .last
            .get(&key)
            .map(|last| {
                ids.iter()
                    .filter_map(|id| last.0.get_key_value(*id))
                    .map(|(id, w)| (id.clone(), w.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let open = self
            .open
            .iter()
            .filter(|(object, o)| o.budget == key && object.as_str() != asking);
        for (_, o) in open {
            for (id, written) in o.targets.iter().filter(|(id, _)| ids.contains(id.as_str())) {
                let (_, categories) = out.entry(id.clone()).or_insert((o.at, Vec::new()));
                for category in written {
                    if !categories.contains(category) {
                        categories.push(category.clone());
                    }
                }
            }
        }
        LastWritten(out)
    }

    /// The oldest knowledge an open write of Budget `budget` in `namespace` was decided on: one
    /// read back that far settles them all, where one read per write went back to each in turn.
    pub fn oldest_open(&self, namespace: &str, budget: &str) -> Option<i64> {
        let key = (namespace.to_owned(), budget.to_owned());
        self.open
            .values()
            .filter(|o| o.budget == key)
            .filter_map(|o| o.knowledge)
            .min()
    }

    fn opened(
        &mut self,
        object: &impl Resource<DynamicType = ()>,
        budget: &str,
        intent: Option<&WriteIntent>,
        targets: Vec<(String, Vec<Option<String>>)>,
    ) {
        let key = key_of(object);
        let Some(intent) = intent else {
            self.open.remove(&key);
            return;
        };
        let open = Open {
            budget: (object.namespace().unwrap_or_default(), budget.to_owned()),
            knowledge: intent.knowledge,
            at: intent.started_at.0,
            targets,
        };
        self.open.insert(key, open);
    }

    fn budget(&mut self, object: &impl ResourceExt, budget: &str) -> &mut LastWritten {
        let key = (object.namespace().unwrap_or_default(), budget.to_owned());
        self.last.entry(key).or_default()
    }
}

/// How [`Written`] names an object: `namespace/Kind/name`.
pub fn key_of<K: Resource<DynamicType = ()>>(object: &K) -> String {
    format!(
        "{}/{}/{}",
        object.namespace().unwrap_or_default(),
        K::kind(&()),
        object.name_any()
    )
}

/// `decision`, unless it runs a write over an edit: when a change's transaction shows a
/// category other than the one ledgerops last wrote to it, a person is asked instead, and the
/// reason names the transaction and both categories. `last` (what was last written to the
/// changes' transactions, `None` while that cannot be told yet) is asked only for a write that
/// would run. A Transaction's `ledgerops.dev/resolve: ours` is asked too: anyone who may edit
/// the Transaction can set that annotation, so it says what someone wants, not that a person
/// with the power to approve decided it. `Err` while it cannot be told whether the write would
/// run over an edit: nothing is decided.
pub fn respect(
    decision: Decision,
    changes: &[PlannedChange],
    last: impl FnOnce(&HashSet<&str>) -> Option<LastWritten>,
    name: impl Fn(&str) -> Option<String>,
) -> Result<Decision, NotListed> {
    if decision.action != Action::Run || changes.is_empty() {
        return Ok(decision);
    }
    let ids: HashSet<&str> = changes
        .iter()
        .map(|c| c.change.transaction_id.as_str())
        .collect();
    let last = last(&ids).ok_or(NotListed)?;
    let edited = changes.iter().find_map(|c| {
        let from = c.change.from_category_id.as_ref();
        edited_since(&last, &c.change.transaction_id, from).map(|ours| (c, ours))
    });
    let Some((c, ours)) = edited else {
        return Ok(decision);
    };
    let from = c.change.from_category_id.as_deref();
    let words = edit_words(&c.change.transaction_id, from, ours, name);
    Ok(Decision {
        action: Action::Ask,
        reason: format!("{words}: a person decides whether to write over that edit"),
    })
}

/// How an edit since ledgerops wrote is told: transaction `id` shows `category`, set by someone
/// else since ledgerops wrote `ours`; categories named by `name` (with their id) where it knows
/// them.
pub fn edit_words(
    id: &str,
    category: Option<&str>,
    ours: &[Option<String>],
    name: impl Fn(&str) -> Option<String>,
) -> String {
    let named = |id: Option<&str>| match id {
        None => "no category".to_owned(),
        Some(id) => match name(id) {
            Some(name) => format!("{name:?} ({id})"),
            None => id.to_owned(),
        },
    };
    let ours: Vec<String> = ours.iter().map(|o| named(o.as_deref())).collect();
    format!(
        "{id} shows {} in YNAB, set by someone else since ledgerops wrote {}",
        named(category),
        ours.join(" or ")
    )
}

/// What ledgerops last wrote to `transaction_id`, when it now shows `category`, another one:
/// someone edited it since. `None` when it shows what ledgerops wrote, or ledgerops never
/// wrote it.
pub fn edited_since<'a>(
    last: &'a LastWritten,
    transaction_id: &str,
    category: Option<&String>,
) -> Option<&'a [Option<String>]> {
    let ours = last.categories(transaction_id)?;
    (!ours.iter().any(|o| o.as_ref() == category)).then_some(ours)
}

/// Why a write that would run waits: what ledgerops wrote before is still being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "Waiting until every Transaction and plan is read, to tell whether someone edited the transaction since ledgerops last wrote it"
)]
pub struct NotListed;

#[cfg(test)]
#[path = "edited_tests.rs"]
mod tests;
