//! `PlanSummary`, `PlanDetail`, `PlanSettings` and their format settings.

use serde::{Deserialize, Serialize};

use super::{
    Account, Category, CategoryGroup, MonthDetail, Payee, SubTransaction, TransactionSummary,
};

/// Date display setting; YNAB may send `null` for the whole object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DateFormat {
    pub format: String,
}

/// Currency display setting; YNAB may send `null` for the whole object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrencyFormat {
    pub iso_code: String,
    pub example_format: String,
    pub decimal_digits: i32,
    pub decimal_separator: String,
    pub symbol_first: bool,
    pub group_separator: String,
    pub currency_symbol: String,
    pub display_symbol: bool,
}

/// A plan in `GET /plans`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_month: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_month: Option<String>,
    #[serde(default)]
    pub date_format: Option<DateFormat>,
    #[serde(default)]
    pub currency_format: Option<CurrencyFormat>,
    /// Only with `include_accounts=true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounts: Option<Vec<Account>>,
}

/// `GET /plans/{plan_id}`: the full export, with flat lists (transactions without names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanDetail {
    #[serde(flatten)]
    pub summary: PlanSummary,
    pub payees: Vec<Payee>,
    /// Payee locations are not modelled: always empty here.
    pub payee_locations: Vec<serde_json::Value>,
    pub category_groups: Vec<CategoryGroup>,
    pub categories: Vec<Category>,
    pub months: Vec<MonthDetail>,
    pub transactions: Vec<TransactionSummary>,
    pub subtransactions: Vec<SubTransaction>,
    /// Scheduled transactions are not modelled: always empty here.
    pub scheduled_transactions: Vec<serde_json::Value>,
    pub scheduled_subtransactions: Vec<serde_json::Value>,
}

/// `GET /plans/{plan_id}/settings`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSettings {
    pub date_format: Option<DateFormat>,
    pub currency_format: Option<CurrencyFormat>,
}
