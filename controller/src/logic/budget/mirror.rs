//! The in-memory copy of one YNAB plan, kept current by delta requests: each sync applies what
//! changed since the last `server_knowledge`, deleted records included.

use std::collections::HashMap;

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
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn tx(id: &str, category: Option<&str>, deleted: bool) -> Value {
        json!({"id": id, "date": "2026-09-16", "amount": -8400, "memo": null, "cleared": "uncleared",
               "approved": false, "flag_color": null, "account_id": "acc-1", "payee_id": null,
               "category_id": category, "transfer_account_id": null, "deleted": deleted})
    }

    fn category(id: &str, name: &str, deleted: bool) -> Value {
        json!({"id": id, "category_group_id": "grp-1", "name": name, "hidden": false, "internal": false,
               "budgeted": 0, "activity": 0, "balance": 0, "deleted": deleted})
    }

    fn sub(id: &str, tx: &str, deleted: bool) -> Value {
        json!({"id": id, "transaction_id": tx, "amount": -4200, "memo": null, "payee_id": null,
               "category_id": "cat-1", "transfer_account_id": null, "deleted": deleted})
    }

    fn plan(
        transactions: Vec<Value>,
        categories: Vec<Value>,
        subtransactions: Vec<Value>,
    ) -> PlanDetail {
        serde_json::from_value(json!({
            "id": "plan-1", "name": "Household",
            "currency_format": {"iso_code": "EUR", "example_format": "123 456,78", "decimal_digits": 2,
                "decimal_separator": ",", "symbol_first": false, "group_separator": " ",
                "currency_symbol": "€", "display_symbol": true},
            "accounts": [], "payees": [], "payee_locations": [], "category_groups": [],
            "categories": categories, "months": [], "transactions": transactions,
            "subtransactions": subtransactions, "scheduled_transactions": [], "scheduled_subtransactions": []
        }))
        .expect("a valid plan export")
    }

    #[test]
    fn a_full_sync_then_deltas_upsert_and_delete() {
        let mut m = Mirror::default();
        let full = plan(
            vec![tx("tx-1", None, false), tx("tx-2", Some("cat-1"), false)],
            vec![category("cat-1", "Groceries", false)],
            vec![],
        );
        assert_eq!(
            m.apply(full, 10),
            Changes {
                upserted: 3,
                deleted: 0
            }
        );
        assert_eq!(m.plan_name, "Household");
        assert_eq!(
            m.currency,
            Some(Currency {
                iso_code: "EUR".into(),
                decimal_digits: 2
            })
        );
        assert_eq!(
            m.counts(),
            MirrorCounts {
                accounts: 0,
                categories: 1,
                payees: 0,
                transactions: 2
            }
        );

        let delta = plan(
            vec![tx("tx-1", Some("cat-1"), false), tx("tx-2", None, true)],
            vec![],
            vec![],
        );
        assert_eq!(
            m.apply(delta, 12),
            Changes {
                upserted: 1,
                deleted: 1
            }
        );
        assert_eq!(m.server_knowledge, 12);
        assert_eq!(m.transactions["tx-1"].category_id.as_deref(), Some("cat-1"));
        assert!(!m.transactions.contains_key("tx-2"));
        // Names and currency survive a delta that does not repeat them.
        assert_eq!(m.categories["cat-1"].name, "Groceries");
    }

    #[test]
    fn only_real_changes_are_reported() {
        let mut m = Mirror::default();
        let full = plan(
            vec![tx("tx-1", None, false), tx("tx-2", Some("cat-1"), false)],
            vec![],
            vec![],
        );
        assert_eq!(m.changed_transactions(&full), ["tx-1", "tx-2"]);
        m.apply(full, 10);
        // The echo of what the mirror already holds is not a change; an edit and a deletion are.
        let delta = plan(
            vec![
                tx("tx-1", None, false),
                tx("tx-2", Some("cat-2"), false),
                tx("tx-3", None, true),
            ],
            vec![],
            vec![],
        );
        assert_eq!(m.changed_transactions(&delta), ["tx-2"]);
        let gone = plan(vec![tx("tx-1", None, true)], vec![], vec![]);
        assert_eq!(m.changed_transactions(&gone), ["tx-1"]);
        let split = plan(
            vec![tx("tx-1", None, false)],
            vec![],
            vec![sub("s-1", "tx-1", false)],
        );
        assert_eq!(m.changed_transactions(&split), ["tx-1"]);
    }

    #[test]
    fn an_older_answer_is_ignored() {
        let mut m = Mirror::default();
        m.apply(
            plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
            20,
        );
        let stale = plan(vec![tx("tx-1", None, false)], vec![], vec![]);
        assert_eq!(m.apply(stale, 19), Changes::default());
        assert_eq!(m.transactions["tx-1"].category_id.as_deref(), Some("cat-1"));
    }

    #[test]
    fn split_lines_follow_their_transaction() {
        let mut m = Mirror::default();
        let split = plan(
            vec![tx("tx-1", None, false)],
            vec![],
            vec![sub("s-1", "tx-1", false), sub("s-2", "tx-1", false)],
        );
        m.apply(split, 5);
        assert_eq!(m.subtransactions["tx-1"].len(), 2);
        // A line deleted in YNAB leaves; one re-sent replaces its old copy.
        m.apply(
            plan(
                vec![],
                vec![],
                vec![sub("s-1", "tx-1", true), sub("s-2", "tx-1", false)],
            ),
            6,
        );
        assert_eq!(
            m.subtransactions["tx-1"]
                .iter()
                .map(|l| l.id.as_str())
                .collect::<Vec<_>>(),
            ["s-2"]
        );
        // A changed transaction comes with its lines: the old ones go.
        m.apply(
            plan(vec![tx("tx-1", Some("cat-1"), false)], vec![], vec![]),
            7,
        );
        assert!(!m.subtransactions.contains_key("tx-1"));
        // Lines of a deleted transaction go with it.
        m.apply(
            plan(
                vec![tx("tx-1", None, false)],
                vec![],
                vec![sub("s-3", "tx-1", false)],
            ),
            8,
        );
        m.apply(plan(vec![tx("tx-1", None, true)], vec![], vec![]), 9);
        assert!(m.subtransactions.is_empty() && m.transactions.is_empty());
    }

    #[test]
    fn a_transaction_waits_for_a_category_only_where_ynab_gives_one() {
        let mut m = Mirror::default();
        let mut offbudget = tx("tx-tracking", None, false);
        offbudget["account_id"] = json!("acc-tracking");
        let mut transfer = tx("tx-transfer", None, false);
        transfer["transfer_account_id"] = json!("acc-2");
        m.apply(
            plan(
                vec![
                    tx("tx-waiting", None, false),
                    tx("tx-done", Some("cat-1"), false),
                    tx("tx-split", None, false),
                    offbudget,
                    transfer,
                ],
                vec![],
                vec![sub("s-1", "tx-split", false)],
            ),
            5,
        );
        m.accounts.insert(
            "acc-tracking".into(),
            serde_json::from_value(json!({"id": "acc-tracking", "name": "Assurance Vie",
                "type": "otherAsset", "on_budget": false, "closed": false, "balance": 0,
                "cleared_balance": 0, "uncleared_balance": 0, "transfer_payee_id": "p",
                "deleted": false}))
            .unwrap(),
        );
        let mut waiting: Vec<&str> = m
            .transactions
            .values()
            .filter(|t| m.is_uncategorised(t))
            .map(|t| t.id.as_str())
            .collect();
        waiting.sort();
        assert_eq!(waiting, ["tx-waiting"]);
    }
}
