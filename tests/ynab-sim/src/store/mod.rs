//! The in-memory YNAB data: plans and their records, each stamped with the server knowledge of
//! its last change. Amounts that YNAB derives (balances, activity, names) are computed when a
//! record is rendered (`render`), so they can never drift from the transactions.

mod render;
mod writes;

use std::collections::BTreeMap;

use ledgerops::ynab_model::{
    Account, Category, CategoryGroup, Payee, PlanSummary, TransactionDetail, User,
};
use serde::{Deserialize, Serialize};

use crate::SimError;
use crate::delta::Stamped;
use crate::error::not_found;
use crate::fixture::Fixture;
use crate::journal::{self, Touch};

pub use render::{View, month_of};

/// Group holding YNAB's own categories.
pub const INTERNAL_GROUP: &str = "Internal Master Category";
/// Category that income is assigned to.
pub const READY_TO_ASSIGN: &str = "Inflow: Ready to Assign";
/// Group holding one payment category per credit card; transactions may not use them.
pub const CREDIT_CARD_PAYMENTS: &str = "Credit Card Payments";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    pub user: User,
    pub tokens: Vec<String>,
    pub plans: Vec<PlanState>,
}

/// What was assigned in one month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthRecord {
    pub month: String,
    pub note: Option<String>,
    /// Category id → budgeted milliunits.
    pub budgeted: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanState {
    /// Plan fields; `accounts` is always `None` here.
    pub summary: PlanSummary,
    pub server_knowledge: i64,
    /// Counter for ids of records created through the API.
    pub next_id: u64,
    pub accounts: Vec<Stamped<Account>>,
    pub groups: Vec<Stamped<CategoryGroup>>,
    pub categories: Vec<Stamped<Category>>,
    pub payees: Vec<Stamped<Payee>>,
    /// Sorted by month.
    pub months: Vec<Stamped<MonthRecord>>,
    pub transactions: Vec<Stamped<TransactionDetail>>,
}

fn stamp_all<T: Clone>(items: &[T], knowledge: i64) -> Vec<Stamped<T>> {
    items
        .iter()
        .map(|record| Stamped {
            knowledge,
            record: record.clone(),
        })
        .collect()
}

impl Store {
    pub fn from_fixture(fixture: &Fixture) -> Store {
        let plans = fixture
            .plans
            .iter()
            .map(|p| {
                let k = p.server_knowledge;
                let mut months: Vec<_> = p
                    .months
                    .iter()
                    .map(|m| Stamped {
                        knowledge: k,
                        record: MonthRecord {
                            month: m.month.clone(),
                            note: m.note.clone(),
                            budgeted: m
                                .categories
                                .iter()
                                .map(|b| (b.category_id.clone(), b.budgeted))
                                .collect(),
                        },
                    })
                    .collect();
                months.sort_by(|a, b| a.record.month.cmp(&b.record.month));
                let groups: Vec<_> = p.category_groups.iter().map(|g| g.group.clone()).collect();
                let categories: Vec<_> = p
                    .category_groups
                    .iter()
                    .flat_map(|g| g.categories.iter().cloned())
                    .collect();
                PlanState {
                    summary: PlanSummary {
                        accounts: None,
                        ..p.summary.clone()
                    },
                    server_knowledge: k,
                    next_id: 1,
                    accounts: stamp_all(&p.accounts, k),
                    groups: stamp_all(&groups, k),
                    categories: stamp_all(&categories, k),
                    payees: stamp_all(&p.payees, k),
                    months,
                    transactions: stamp_all(&p.transactions, k),
                }
            })
            .collect();
        Store {
            user: fixture.user.clone(),
            tokens: fixture.tokens.clone(),
            plans,
        }
    }

    /// Index of a plan by UUID or `last-used` (the first plan: the simulator has no usage history).
    fn plan_index(&self, plan_id: &str) -> Result<usize, SimError> {
        if plan_id == "last-used" && !self.plans.is_empty() {
            return Ok(0);
        }
        self.plans
            .iter()
            .position(|p| p.summary.id == plan_id)
            .ok_or_else(|| not_found("plan"))
    }

    pub fn plan(&self, plan_id: &str) -> Result<&PlanState, SimError> {
        Ok(&self.plans[self.plan_index(plan_id)?])
    }

    /// Applies `change` to a copy of the plan at the next knowledge; commits only on success, so a
    /// failed request changes nothing and a successful one bumps `server_knowledge` exactly once.
    /// Also answers which transactions it touched, before and after.
    pub fn write<R>(
        &mut self,
        plan_id: &str,
        now: &str,
        change: impl FnOnce(&mut PlanState, i64) -> Result<R, SimError>,
    ) -> Result<(R, i64, Vec<Touch>), SimError> {
        let index = self.plan_index(plan_id)?;
        let mut draft = self.plans[index].clone();
        let knowledge = draft.server_knowledge + 1;
        let result = change(&mut draft, knowledge)?;
        draft.server_knowledge = knowledge;
        draft.summary.last_modified_on = Some(now.to_string());
        let previous = &self.plans[index];
        let touched = journal::touched(
            |id| previous.transaction(id),
            draft.transactions.iter().map(|t| (&t.record, t.knowledge)),
            knowledge,
        );
        self.plans[index] = draft;
        Ok((result, knowledge, touched))
    }
}

fn find<T>(items: &[Stamped<T>], pred: impl Fn(&T) -> bool) -> Option<&Stamped<T>> {
    items.iter().find(|i| pred(&i.record))
}

impl PlanState {
    pub fn account(&self, id: &str) -> Option<&Account> {
        find(&self.accounts, |a| a.id == id).map(|s| &s.record)
    }

    pub fn category(&self, id: &str) -> Option<&Category> {
        find(&self.categories, |c| c.id == id).map(|s| &s.record)
    }

    pub fn payee(&self, id: &str) -> Option<&Payee> {
        find(&self.payees, |p| p.id == id).map(|s| &s.record)
    }

    pub fn transaction(&self, id: &str) -> Option<&TransactionDetail> {
        find(&self.transactions, |t| t.summary.id == id).map(|s| &s.record)
    }

    fn group_of(&self, category: &Category) -> Option<&CategoryGroup> {
        find(&self.groups, |g| g.id == category.category_group_id).map(|s| &s.record)
    }

    pub fn is_credit_card_payment(&self, category_id: &str) -> bool {
        self.category(category_id)
            .and_then(|c| self.group_of(c))
            .is_some_and(|g| g.name == CREDIT_CARD_PAYMENTS)
    }

    pub fn ready_to_assign_id(&self) -> Option<&str> {
        find(&self.categories, |c| {
            c.internal && c.name == READY_TO_ASSIGN
        })
        .map(|s| s.record.id.as_str())
    }

    /// A fresh UUID-shaped id; YNAB's ids for plans, payees etc. are UUIDs.
    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        format!("5ee0c0de-0000-4000-8000-{:012x}", self.next_id)
    }

    /// Stamps one record as changed at `knowledge`; `false` if no record matched.
    fn stamp<T>(items: &mut [Stamped<T>], knowledge: i64, pred: impl Fn(&T) -> bool) -> bool {
        let mut any = false;
        for item in items.iter_mut().filter(|i| pred(&i.record)) {
            item.knowledge = knowledge;
            any = true;
        }
        any
    }

    /// The month record for `month` (`YYYY-MM-01`), created if YNAB would have it implicitly.
    pub fn month_mut(&mut self, month: &str) -> &mut Stamped<MonthRecord> {
        let pos = match self
            .months
            .binary_search_by(|m| m.record.month.as_str().cmp(month))
        {
            Ok(pos) => pos,
            Err(pos) => {
                let record = MonthRecord {
                    month: month.to_string(),
                    note: None,
                    budgeted: BTreeMap::new(),
                };
                self.months.insert(
                    pos,
                    Stamped {
                        knowledge: 0,
                        record,
                    },
                );
                pos
            }
        };
        &mut self.months[pos]
    }

    /// Marks what a change to `tx` also changes in YNAB's eyes: its account's balances, its
    /// categories' activity and its month.
    pub fn touch_effects(&mut self, knowledge: i64, tx: &TransactionDetail) {
        let account = tx.summary.account_id.clone();
        Self::stamp(&mut self.accounts, knowledge, |a| a.id == account);
        let categories: Vec<String> = tx
            .summary
            .category_id
            .iter()
            .chain(
                tx.subtransactions
                    .iter()
                    .filter_map(|s| s.category_id.as_ref()),
            )
            .cloned()
            .collect();
        Self::stamp(&mut self.categories, knowledge, |c| {
            categories.contains(&c.id)
        });
        self.month_mut(&month_of(&tx.summary.date)).knowledge = knowledge;
    }
}
