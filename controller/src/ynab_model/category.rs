//! `CategoryGroup`, `CategoryGroupWithCategories`, `Category`, and the month-category save body.

use serde::{Deserialize, Serialize};

use super::Milliunits;

/// A category group without its categories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryGroup {
    pub id: String,
    pub name: String,
    pub hidden: bool,
    /// YNAB's own groups (e.g. "Internal Master Category").
    pub internal: bool,
    pub deleted: bool,
}

/// A group as listed by `GET /plans/{plan_id}/categories`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryGroupWithCategories {
    #[serde(flatten)]
    pub group: CategoryGroup,
    pub categories: Vec<Category>,
}

/// Spec `goal_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GoalType {
    #[serde(rename = "TB")]
    TargetBalance,
    #[serde(rename = "TBD")]
    TargetBalanceByDate,
    #[serde(rename = "MF")]
    MonthlyFunding,
    #[serde(rename = "NEED")]
    PlanYourSpending,
    #[serde(rename = "DEBT")]
    Debt,
}

/// A category with its amounts for one month (the current month unless a month is in the path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    pub id: String,
    pub category_group_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_group_name: Option<String>,
    pub name: String,
    pub hidden: bool,
    pub internal: bool,
    /// Deprecated by YNAB: always null.
    #[serde(default)]
    pub original_category_group_id: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    pub budgeted: Milliunits,
    pub activity: Milliunits,
    pub balance: Milliunits,
    #[serde(default)]
    pub goal_type: Option<GoalType>,
    #[serde(default)]
    pub goal_needs_whole_amount: Option<bool>,
    #[serde(default)]
    pub goal_day: Option<i32>,
    #[serde(default)]
    pub goal_cadence: Option<i32>,
    #[serde(default)]
    pub goal_cadence_frequency: Option<i32>,
    #[serde(default)]
    pub goal_creation_month: Option<String>,
    #[serde(default)]
    pub goal_target: Option<Milliunits>,
    #[serde(default)]
    pub goal_target_month: Option<String>,
    #[serde(default)]
    pub goal_target_date: Option<String>,
    #[serde(default)]
    pub goal_percentage_complete: Option<i32>,
    #[serde(default)]
    pub goal_months_to_budget: Option<i32>,
    #[serde(default)]
    pub goal_under_funded: Option<Milliunits>,
    #[serde(default)]
    pub goal_overall_funded: Option<Milliunits>,
    #[serde(default)]
    pub goal_overall_left: Option<Milliunits>,
    #[serde(default)]
    pub goal_snoozed_at: Option<String>,
    pub deleted: bool,
}

/// `PATCH /plans/{plan_id}/months/{month}/categories/{category_id}` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchMonthCategoryWrapper {
    pub category: SaveMonthCategory,
}

/// Only `budgeted` can be changed for a month category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveMonthCategory {
    pub budgeted: Milliunits,
}
