//! `Account` (identical to `AccountBase` once the formatted/currency extras are left out).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Milliunits;

/// Spec `AccountType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AccountType {
    Checking,
    Savings,
    Cash,
    CreditCard,
    LineOfCredit,
    OtherAsset,
    OtherLiability,
    Mortgage,
    AutoLoan,
    StudentLoan,
    PersonalLoan,
    MedicalDebt,
    OtherDebt,
}

/// An account; `on_budget: false` is a tracking (off-budget) account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub account_type: AccountType,
    pub on_budget: bool,
    pub closed: bool,
    #[serde(default)]
    pub note: Option<String>,
    pub balance: Milliunits,
    pub cleared_balance: Milliunits,
    pub uncleared_balance: Milliunits,
    pub transfer_payee_id: Option<String>,
    #[serde(default)]
    pub direct_import_linked: bool,
    #[serde(default)]
    pub direct_import_in_error: bool,
    #[serde(default)]
    pub last_reconciled_at: Option<String>,
    #[serde(default)]
    pub debt_original_balance: Option<Milliunits>,
    #[serde(default)]
    pub debt_interest_rates: Option<BTreeMap<String, i64>>,
    #[serde(default)]
    pub debt_minimum_payments: Option<BTreeMap<String, i64>>,
    #[serde(default)]
    pub debt_escrow_amounts: Option<BTreeMap<String, i64>>,
    pub deleted: bool,
}
