//! `MonthSummary` and `MonthDetail`.

use serde::{Deserialize, Serialize};

use super::{Category, Milliunits};

/// One plan month (`month` is `YYYY-MM-01`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthSummary {
    pub month: String,
    #[serde(default)]
    pub note: Option<String>,
    /// Inflows categorized to "Inflow: Ready to Assign".
    pub income: Milliunits,
    pub budgeted: Milliunits,
    pub activity: Milliunits,
    pub to_be_budgeted: Milliunits,
    #[serde(default)]
    pub age_of_money: Option<i32>,
    pub deleted: bool,
}

/// A month with its categories' amounts for that month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthDetail {
    #[serde(flatten)]
    pub summary: MonthSummary,
    pub categories: Vec<Category>,
}
