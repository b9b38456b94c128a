//! Response envelopes: every success body is `{"data": {...}}`.

use serde::{Deserialize, Serialize};

use super::{
    Account, Category, CategoryGroupWithCategories, MonthDetail, MonthSummary, Payee, PlanDetail,
    PlanSettings, PlanSummary, TransactionDetail, User,
};

/// `{"data": T}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub data: T,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserData {
    pub user: User,
}

/// `GET /plans`. `default_plan` is null unless OAuth default plan selection is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlansData {
    pub plans: Vec<PlanSummary>,
    #[serde(default)]
    pub default_plan: Option<PlanSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanData {
    pub plan: PlanDetail,
    pub server_knowledge: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSettingsData {
    pub settings: PlanSettings,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountsData {
    pub accounts: Vec<Account>,
    pub server_knowledge: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountData {
    pub account: Account,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoriesData {
    pub category_groups: Vec<CategoryGroupWithCategories>,
    pub server_knowledge: i64,
}

/// `GET` of one category (plan-wide or for a month).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryData {
    pub category: Category,
}

/// `PATCH` of a month category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveCategoryData {
    pub category: Category,
    pub server_knowledge: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayeesData {
    pub payees: Vec<Payee>,
    pub server_knowledge: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayeeData {
    pub payee: Payee,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthsData {
    pub months: Vec<MonthSummary>,
    pub server_knowledge: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthData {
    pub month: MonthDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionsData {
    pub transactions: Vec<TransactionDetail>,
    pub server_knowledge: i64,
}

/// `GET`, `PUT` or `DELETE` of one transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionData {
    pub transaction: TransactionDetail,
    pub server_knowledge: i64,
}
