//! The fixture format: YNAB's own shapes (spec field names) plus the tokens that may call the API
//! and each month's assigned (`budgeted`) amounts. Derived amounts in a fixture (balances,
//! activity, names) are informative only: the simulator recomputes them from the transactions.

use ledgerops::ynab_model::{
    Account, CategoryGroupWithCategories, Payee, PlanSummary, TransactionDetail, User,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fixture {
    /// Bearer tokens the API accepts.
    pub tokens: Vec<String>,
    pub user: User,
    pub plans: Vec<FixturePlan>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixturePlan {
    #[serde(flatten)]
    pub summary: PlanSummary,
    /// Knowledge every record starts with.
    pub server_knowledge: i64,
    pub accounts: Vec<Account>,
    pub category_groups: Vec<CategoryGroupWithCategories>,
    pub payees: Vec<Payee>,
    pub months: Vec<FixtureMonth>,
    pub transactions: Vec<TransactionDetail>,
}

/// A plan month and what was assigned to each category in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixtureMonth {
    pub month: String,
    #[serde(default)]
    pub note: Option<String>,
    pub categories: Vec<MonthBudget>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthBudget {
    pub category_id: String,
    pub budgeted: i64,
}
