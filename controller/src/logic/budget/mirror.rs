//! The in-memory copy of one YNAB plan, kept current by delta requests: each sync applies what
//! changed since the last `server_knowledge`, deleted records included.

use std::collections::{HashMap, HashSet};

use crate::api::budget::{Currency, MirrorCounts};
use crate::ynab_model::{
    Account, Category, CategoryGroup, Payee, PlanDetail, SubTransaction, TransactionDetail,
    TransactionSummary,
};

/// One plan's accounts, categories, payees and transactions as of `server_knowledge`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mirror {
    pub server_knowledge: i64,
    pub plan_name: String,
    pub currency: Option<Currency>,
    pub accounts: HashMap<String, Account>,
    pub category_groups: HashMap<String, CategoryGroup>,
    pub categories: HashMap<String, Category>,
    pub payees: HashMap<String, Payee>,
    pub transactions: HashMap<String, TransactionSummary>,
    /// Split lines, by the id of their transaction.
    pub subtransactions: HashMap<String, Vec<SubTransaction>>,
    /// Transactions a write was sent to whose answer was lost, until a write is decided on a
    /// read made after it: whether a delta since showed them changed. One that changed may hold
    /// our write undone by someone (its "before" back): it is never written again on that
    /// approval. One that did not change never got the write.
    pub lost_answers: HashMap<String, bool>,
    /// The `server_knowledge` of the answer that last brought each transaction; a write's own
    /// answer, whose knowledge YNAB does not give, counts as newer than any. A deleted
    /// transaction keeps its entry: its deletion is a change a settled write must see.
    pub changed_at: HashMap<String, i64>,
    /// The oldest knowledge [`Mirror::changed_since`] answers for: a full read cannot tell when
    /// its records last changed, and a read back to an older knowledge (see
    /// [`Mirror::learn_unchanged_since`]) lowers it.
    pub history_from: i64,
}

/// What one sync changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// Records added or updated.
    pub upserted: usize,
    /// Records removed because YNAB reported them deleted.
    pub deleted: usize,
}

impl Mirror {
    /// Applies a plan export (full, or a delta since `self.server_knowledge`) read at
    /// `server_knowledge`. An answer older than what the mirror holds is ignored.
    pub fn apply(&mut self, plan: PlanDetail, server_knowledge: i64) -> Changes {
        let mut changes = Changes::default();
        if server_knowledge < self.server_knowledge {
            return changes;
        }
        if !self.has_read() {
            self.history_from = server_knowledge;
        }
        self.server_knowledge = server_knowledge;
        self.plan_name = plan.summary.name;
        if let Some(format) = plan.summary.currency_format {
            self.currency = Some(Currency {
                iso_code: format.iso_code,
                decimal_digits: u8::try_from(format.decimal_digits.clamp(0, 3)).unwrap_or(2),
            });
        }
        merge(
            &mut self.accounts,
            plan.summary.accounts.into_iter().flatten(),
            |a| (a.id.clone(), a.deleted),
            &mut changes,
        );
        merge(
            &mut self.category_groups,
            plan.category_groups,
            |g| (g.id.clone(), g.deleted),
            &mut changes,
        );
        merge(
            &mut self.categories,
            plan.categories,
            |c| (c.id.clone(), c.deleted),
            &mut changes,
        );
        merge(
            &mut self.payees,
            plan.payees,
            |p| (p.id.clone(), p.deleted),
            &mut changes,
        );
        for t in &plan.transactions {
            // A changed transaction comes with its current lines; stale ones must not linger.
            self.subtransactions.remove(&t.id);
            if let Some(changed) = self.lost_answers.get_mut(&t.id) {
                *changed = true;
            }
            self.changed_at.insert(t.id.clone(), server_knowledge);
        }
        merge(
            &mut self.transactions,
            plan.transactions,
            |t| (t.id.clone(), t.deleted),
            &mut changes,
        );
        for line in plan.subtransactions {
            let lines = self
                .subtransactions
                .entry(line.transaction_id.clone())
                .or_default();
            lines.retain(|l| l.id != line.id);
            if !line.deleted && self.transactions.contains_key(&line.transaction_id) {
                lines.push(line);
            }
        }
        self.subtransactions.retain(|_, lines| !lines.is_empty());
        changes
    }

    /// The transactions in `plan` (a delta about to be applied) that differ from what the mirror
    /// holds: new, changed, deleted, or with changed split lines. An echo of ledgerops' own write,
    /// already recorded, is not a change.
    pub fn changed_transactions(&self, plan: &PlanDetail) -> Vec<String> {
        let mut incoming_lines: HashMap<&str, Vec<&SubTransaction>> = HashMap::new();
        for line in &plan.subtransactions {
            incoming_lines
                .entry(line.transaction_id.as_str())
                .or_default()
                .push(line);
        }
        let lines_differ = |id: &str| {
            let held: Vec<&SubTransaction> = self
                .subtransactions
                .get(id)
                .map(|l| l.iter().collect())
                .unwrap_or_default();
            let mut incoming: Vec<&SubTransaction> =
                incoming_lines.get(id).cloned().unwrap_or_default();
            incoming.retain(|l| !l.deleted);
            held != incoming
        };
        plan.transactions
            .iter()
            .filter(|t| match self.transactions.get(&t.id) {
                None => !t.deleted,
                Some(_) if t.deleted => true,
                Some(held) => held != *t || lines_differ(&t.id),
            })
            .map(|t| t.id.clone())
            .collect()
    }

    /// How many decimal digits the plan's currency has (2 when YNAB sent no currency format).
    pub fn decimal_digits(&self) -> u8 {
        self.currency.as_ref().map_or(2, |c| c.decimal_digits)
    }

    /// Whether YNAB still offers category `id` to put a transaction in: it exists and is
    /// neither hidden, internal nor deleted.
    pub fn offers_category(&self, id: &str) -> bool {
        self.categories
            .get(id)
            .is_some_and(|c| !c.hidden && !c.internal && !c.deleted)
    }

    /// Whether `t` waits for a category: not deleted, not a transfer, not split, uncategorised,
    /// and on a budget account (YNAB gives a tracking account's transactions no category).
    pub fn is_uncategorised(&self, t: &TransactionSummary) -> bool {
        !t.deleted
            && t.category_id.is_none()
            && t.transfer_account_id.is_none()
            && !self.subtransactions.contains_key(&t.id)
            && self.accounts.get(&t.account_id).is_none_or(|a| a.on_budget)
    }

    /// The payee of `t` as people see it: the payee's name, else the name the bank imported.
    pub fn payee_name(&self, t: &TransactionSummary) -> String {
        t.payee_id
            .as_ref()
            .and_then(|id| self.payees.get(id))
            .map(|p| p.name.clone())
            .or_else(|| t.import_payee_name.clone())
            .unwrap_or_default()
    }

    /// Records transactions as YNAB returned them after a write, without moving
    /// `server_knowledge`: others' changes since the last sync must still come with the next delta.
    pub fn record_written(&mut self, written: Vec<TransactionDetail>) {
        for t in written {
            self.subtransactions.remove(&t.summary.id);
            self.changed_at.insert(t.summary.id.clone(), i64::MAX);
            let lines: Vec<SubTransaction> = t
                .subtransactions
                .into_iter()
                .filter(|l| !l.deleted)
                .collect();
            if !lines.is_empty() {
                self.subtransactions.insert(t.summary.id.clone(), lines);
            }
            if t.summary.deleted {
                self.transactions.remove(&t.summary.id);
            } else {
                self.transactions.insert(t.summary.id.clone(), t.summary);
            }
        }
    }

    /// Whether transaction `id` changed after `knowledge` (a knowledge this mirror was at, such
    /// as the one a write was decided on): whoever changed it, ledgerops included. `None` when
    /// the mirror cannot tell, `knowledge` being older than its history: read back to it first.
    pub fn changed_since(&self, id: &str, knowledge: i64) -> Option<bool> {
        self.remembers(knowledge)
            .then(|| self.changed_at.get(id).is_some_and(|&at| at > knowledge))
    }

    /// Whether anything was read into the mirror yet: YNAB's knowledge starts above 0.
    pub fn has_read(&self) -> bool {
        self.server_knowledge > 0
    }

    /// Whether [`Mirror::changed_since`] answers for `knowledge`.
    pub fn remembers(&self, knowledge: i64) -> bool {
        self.has_read() && knowledge >= self.history_from
    }

    /// Learns from a delta read back to `since` (older than the mirror's history), answered at
    /// `server_knowledge` with the transactions `changed`, before that delta is applied: every
    /// other transaction the mirror held by then last changed at or before `since`.
    pub fn learn_unchanged_since(
        &mut self,
        since: i64,
        changed: &HashSet<String>,
        server_knowledge: i64,
    ) {
        if server_knowledge < self.server_knowledge || since >= self.history_from {
            return;
        }
        for (id, at) in &mut self.changed_at {
            // Later than the answer: brought by a newer read or a write, not covered by it.
            if *at <= server_knowledge && !changed.contains(id) {
                *at = (*at).min(since);
            }
        }
        self.history_from = since;
    }

    /// The name of category `id`, or the id when the mirror does not know it.
    pub fn category_name(&self, id: &str) -> String {
        self.categories
            .get(id)
            .map_or_else(|| id.to_owned(), |c| c.name.clone())
    }

    /// Record counts, for the Budget's status.
    pub fn counts(&self) -> MirrorCounts {
        let n = |len: usize| u32::try_from(len).unwrap_or(u32::MAX);
        MirrorCounts {
            accounts: n(self.accounts.len()),
            categories: n(self.categories.len()),
            payees: n(self.payees.len()),
            transactions: n(self.transactions.len()),
        }
    }
}

fn merge<T>(
    into: &mut HashMap<String, T>,
    records: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> (String, bool),
    changes: &mut Changes,
) {
    for record in records {
        let (id, deleted) = key(&record);
        if deleted {
            if into.remove(&id).is_some() {
                changes.deleted += 1;
            }
        } else {
            into.insert(id, record);
            changes.upserted += 1;
        }
    }
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
