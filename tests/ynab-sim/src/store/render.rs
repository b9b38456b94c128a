//! Renders stored records as YNAB returns them: balances, activity, budgeted amounts and names
//! are derived here from the transactions and month assignments.

use ledgerops::ynab_model::{
    Account, Category, CategoryGroupWithCategories, ClearedStatus, MonthDetail, MonthSummary,
    PlanDetail, PlanSummary, SubTransaction, TransactionDetail,
};

use super::{MonthRecord, PlanState};
use crate::delta::{self, Stamped};

/// `YYYY-MM-01` of a `YYYY-MM-DD` date.
pub fn month_of(date: &str) -> String {
    format!("{}-01", date.get(..7).unwrap_or(date))
}

/// A plan seen at one month: the month whose amounts categories show.
pub struct View<'a> {
    pub plan: &'a PlanState,
    pub month: String,
}

impl<'a> View<'a> {
    pub fn new(plan: &'a PlanState, month: String) -> Self {
        View { plan, month }
    }

    fn live_transactions(&self) -> impl Iterator<Item = &'a TransactionDetail> + use<'a> {
        self.plan
            .transactions
            .iter()
            .map(|t| &t.record)
            .filter(|t| !t.summary.deleted)
    }

    /// (month, amount) of every live amount assigned to `category_id`, splits resolved.
    fn category_flows(&self, category_id: &str) -> Vec<(String, i64)> {
        let mut flows = Vec::new();
        for tx in self.live_transactions() {
            let month = month_of(&tx.summary.date);
            if tx.subtransactions.is_empty() {
                if tx.summary.category_id.as_deref() == Some(category_id) {
                    flows.push((month, tx.summary.amount));
                }
            } else {
                flows.extend(
                    tx.subtransactions
                        .iter()
                        .filter(|s| !s.deleted && s.category_id.as_deref() == Some(category_id))
                        .map(|s| (month.clone(), s.amount)),
                );
            }
        }
        flows
    }

    fn budgeted(&self, category_id: &str, month: &str) -> i64 {
        self.plan
            .months
            .iter()
            .find(|m| m.record.month == month)
            .and_then(|m| m.record.budgeted.get(category_id).copied())
            .unwrap_or(0)
    }

    fn budgeted_through(&self, category_id: &str, month: &str) -> i64 {
        self.plan
            .months
            .iter()
            .filter(|m| m.record.month.as_str() <= month)
            .filter_map(|m| m.record.budgeted.get(category_id))
            .sum()
    }

    pub fn account(&self, account: &Account) -> Account {
        let mut out = account.clone();
        let (mut cleared, mut uncleared) = (0, 0);
        for tx in self
            .live_transactions()
            .filter(|t| t.summary.account_id == account.id)
        {
            match tx.summary.cleared {
                ClearedStatus::Uncleared => uncleared += tx.summary.amount,
                ClearedStatus::Cleared | ClearedStatus::Reconciled => cleared += tx.summary.amount,
            }
        }
        out.cleared_balance = cleared;
        out.uncleared_balance = uncleared;
        out.balance = cleared + uncleared;
        out
    }

    /// A category with its amounts for `month` (balances carry over from earlier months).
    pub fn category_at(&self, category: &Category, month: &str) -> Category {
        let flows = self.category_flows(&category.id);
        let activity = flows
            .iter()
            .filter(|(m, _)| m == month)
            .map(|(_, a)| a)
            .sum();
        let spent_through: i64 = flows
            .iter()
            .filter(|(m, _)| m.as_str() <= month)
            .map(|(_, a)| a)
            .sum();
        let mut out = category.clone();
        out.category_group_name = self.plan.group_of(category).map(|g| g.name.clone());
        out.budgeted = self.budgeted(&category.id, month);
        out.activity = activity;
        out.balance = self.budgeted_through(&category.id, month) + spent_through;
        out
    }

    pub fn category(&self, category: &Category) -> Category {
        self.category_at(category, &self.month)
    }

    /// Groups with their categories; in a delta, a group appears when it or one of its
    /// categories changed, with only the changed categories.
    pub fn category_groups(&self, since: Option<i64>) -> Vec<CategoryGroupWithCategories> {
        self.plan
            .groups
            .iter()
            .filter_map(|group| {
                let categories: Vec<Category> = self
                    .plan
                    .categories
                    .iter()
                    .filter(|c| c.record.category_group_id == group.record.id)
                    .filter(|c| delta::visible(c, since))
                    .map(|c| self.category(&c.record))
                    .collect();
                let changed = since.is_some() && !categories.is_empty();
                (delta::visible(group, since) || changed).then(|| CategoryGroupWithCategories {
                    group: group.record.clone(),
                    categories,
                })
            })
            .collect()
    }

    pub fn transaction(&self, tx: &TransactionDetail) -> TransactionDetail {
        let plan = self.plan;
        let payee_name = |id: &Option<String>| {
            id.as_deref()
                .and_then(|id| plan.payee(id))
                .map(|p| p.name.clone())
        };
        let category_name = |id: &Option<String>| {
            id.as_deref()
                .and_then(|id| plan.category(id))
                .map(|c| c.name.clone())
        };
        let mut out = tx.clone();
        out.account_name = plan
            .account(&tx.summary.account_id)
            .map(|a| a.name.clone())
            .unwrap_or_default();
        out.payee_name = payee_name(&tx.summary.payee_id);
        out.category_name = if tx.subtransactions.is_empty() {
            category_name(&tx.summary.category_id)
        } else {
            Some("Split".to_string())
        };
        for sub in &mut out.subtransactions {
            sub.payee_name = payee_name(&sub.payee_id);
            sub.category_name = category_name(&sub.category_id);
        }
        out
    }

    /// Every plan month: from the first stored one through the later of the last stored one and
    /// the current month (YNAB creates months as time passes).
    pub fn month_list(&self) -> Vec<String> {
        let Some(first) = self.plan.months.first() else {
            return Vec::new();
        };
        let last = self
            .plan
            .months
            .last()
            .map(|m| m.record.month.clone())
            .unwrap_or_default()
            .max(self.month.clone());
        let mut out = Vec::new();
        let mut cursor = crate::clock::parse_date(&first.record.month).ok();
        while let Some(d) = cursor {
            let m = d.to_string();
            if m > last {
                break;
            }
            out.push(m);
            cursor = crate::clock::month_after(d);
        }
        out
    }

    /// The stored record of a month, if it was ever assigned to or changed.
    pub fn month_record(&self, month: &str) -> Option<&'a Stamped<MonthRecord>> {
        self.plan.months.iter().find(|m| m.record.month == month)
    }

    pub fn month_summary(&self, month: &str) -> MonthSummary {
        let rta = self.plan.ready_to_assign_id().map(str::to_string);
        let income_of = |m: &str| {
            rta.as_deref().map_or(0, |id| {
                self.category_flows(id)
                    .iter()
                    .filter(|(fm, _)| fm == m)
                    .map(|(_, a)| a)
                    .sum::<i64>()
            })
        };
        let assigned_in = |m: &str| {
            self.month_record(m)
                .map_or(0, |r| r.record.budgeted.values().sum::<i64>())
        };
        let activity = self
            .plan
            .categories
            .iter()
            .filter(|c| !c.record.internal)
            .flat_map(|c| self.category_flows(&c.record.id))
            .filter(|(m, _)| m == month)
            .map(|(_, a)| a)
            .sum();
        let months_through: Vec<String> = self
            .month_list()
            .into_iter()
            .filter(|m| m.as_str() <= month)
            .collect();
        let to_be_budgeted = months_through
            .iter()
            .map(|m| income_of(m) - assigned_in(m))
            .sum();
        MonthSummary {
            month: month.to_string(),
            note: self.month_record(month).and_then(|r| r.record.note.clone()),
            income: income_of(month),
            budgeted: assigned_in(month),
            activity,
            to_be_budgeted,
            age_of_money: None,
            deleted: false,
        }
    }

    pub fn month_detail(&self, month: &str) -> MonthDetail {
        MonthDetail {
            summary: self.month_summary(month),
            categories: delta::select(&self.plan.categories, None)
                .map(|c| self.category_at(c, month))
                .collect(),
        }
    }

    /// Months changed after `since` (all months without it).
    pub fn months(&self, since: Option<i64>) -> Vec<String> {
        self.month_list()
            .into_iter()
            .filter(|m| match since {
                None => true,
                Some(k) => self.month_record(m).is_some_and(|r| r.knowledge > k),
            })
            .collect()
    }

    /// `GET /plans/{plan_id}`: the full export, or what changed after `since`.
    pub fn plan_detail(&self, since: Option<i64>) -> PlanDetail {
        let transactions: Vec<TransactionDetail> = delta::select(&self.plan.transactions, since)
            .map(|t| self.transaction(t))
            .collect();
        let subtransactions: Vec<SubTransaction> = transactions
            .iter()
            .flat_map(|t| t.subtransactions.iter().cloned())
            .collect();
        PlanDetail {
            summary: PlanSummary {
                accounts: Some(
                    delta::select(&self.plan.accounts, since)
                        .map(|a| self.account(a))
                        .collect(),
                ),
                ..self.plan.summary.clone()
            },
            payees: delta::select(&self.plan.payees, since).cloned().collect(),
            payee_locations: Vec::new(),
            category_groups: delta::select(&self.plan.groups, since).cloned().collect(),
            categories: delta::select(&self.plan.categories, since)
                .map(|c| self.category(c))
                .collect(),
            months: self
                .months(since)
                .iter()
                .map(|m| self.month_detail(m))
                .collect(),
            transactions: transactions.into_iter().map(|t| t.summary).collect(),
            subtransactions,
            scheduled_transactions: Vec::new(),
            scheduled_subtransactions: Vec::new(),
        }
    }
}
