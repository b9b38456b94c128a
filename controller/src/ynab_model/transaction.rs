//! Transactions: the read models (`TransactionSummary`, `TransactionDetail`, `SubTransaction`)
//! and the write bodies (`SaveTransactionWithOptionalFields` and its wrappers).

use serde::{Deserialize, Serialize};

use super::{Milliunits, double_option};

/// Spec `TransactionClearedStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClearedStatus {
    Cleared,
    Uncleared,
    Reconciled,
}

/// Spec `TransactionFlagColor`. YNAB sends both `""` and `null` for "no flag", so `""` is a
/// variant of its own and `null` is the `None` of an `Option<FlagColor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagColor {
    Red,
    Orange,
    Yellow,
    Green,
    Blue,
    Purple,
    #[serde(rename = "")]
    Empty,
}

/// Spec `debt_transaction_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DebtTransactionType {
    Payment,
    Refund,
    Fee,
    Interest,
    Escrow,
    BalanceAdjustment,
    Credit,
    Charge,
}

/// The flat transaction row (`TransactionSummary`, as in the full plan export).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionSummary {
    /// A plain string, not necessarily a UUID.
    pub id: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub amount: Milliunits,
    #[serde(default)]
    pub memo: Option<String>,
    pub cleared: ClearedStatus,
    pub approved: bool,
    #[serde(default)]
    pub flag_color: Option<FlagColor>,
    #[serde(default)]
    pub flag_name: Option<String>,
    pub account_id: String,
    #[serde(default)]
    pub payee_id: Option<String>,
    #[serde(default)]
    pub category_id: Option<String>,
    #[serde(default)]
    pub transfer_account_id: Option<String>,
    #[serde(default)]
    pub transfer_transaction_id: Option<String>,
    #[serde(default)]
    pub matched_transaction_id: Option<String>,
    #[serde(default)]
    pub import_id: Option<String>,
    #[serde(default)]
    pub import_payee_name: Option<String>,
    #[serde(default)]
    pub import_payee_name_original: Option<String>,
    #[serde(default)]
    pub debt_transaction_type: Option<DebtTransactionType>,
    pub deleted: bool,
}

/// A transaction with names and subtransactions, as every transaction endpoint returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionDetail {
    #[serde(flatten)]
    pub summary: TransactionSummary,
    pub account_name: String,
    #[serde(default)]
    pub payee_name: Option<String>,
    /// "Split" for a split parent.
    #[serde(default)]
    pub category_name: Option<String>,
    pub subtransactions: Vec<SubTransaction>,
}

/// One line of a split.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubTransaction {
    pub id: String,
    pub transaction_id: String,
    pub amount: Milliunits,
    #[serde(default)]
    pub memo: Option<String>,
    #[serde(default)]
    pub payee_id: Option<String>,
    #[serde(default)]
    pub payee_name: Option<String>,
    #[serde(default)]
    pub category_id: Option<String>,
    #[serde(default)]
    pub category_name: Option<String>,
    #[serde(default)]
    pub transfer_account_id: Option<String>,
    #[serde(default)]
    pub transfer_transaction_id: Option<String>,
    pub deleted: bool,
}

/// The writable fields of a transaction. Every field is optional; for the nullable ones the
/// outer `None` means "not sent, leave unchanged" and `Some(None)` means "sent as null".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveTransactionWithOptionalFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Milliunits>,
    #[serde(
        default,
        with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub payee_id: Option<Option<String>>,
    #[serde(
        default,
        with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub payee_name: Option<Option<String>>,
    #[serde(
        default,
        with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub category_id: Option<Option<String>>,
    #[serde(
        default,
        with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub memo: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared: Option<ClearedStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    #[serde(
        default,
        with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub flag_color: Option<Option<FlagColor>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtransactions: Option<Vec<SaveSubTransaction>>,
}

/// `PUT /plans/{plan_id}/transactions/{transaction_id}` item.
pub type ExistingTransaction = SaveTransactionWithOptionalFields;

/// One line of a split being written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveSubTransaction {
    pub amount: Milliunits,
    #[serde(default)]
    pub payee_id: Option<String>,
    #[serde(default)]
    pub payee_name: Option<String>,
    #[serde(default)]
    pub category_id: Option<String>,
    #[serde(default)]
    pub memo: Option<String>,
}

/// A transaction to create; `import_id` (max 36 chars) is unique per account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTransaction {
    #[serde(flatten)]
    pub fields: SaveTransactionWithOptionalFields,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_id: Option<String>,
}

/// A bulk-update item: found by `id`, or by `import_id` when `id` is absent or null.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveTransactionWithIdOrImportId {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub import_id: Option<String>,
    #[serde(flatten)]
    pub fields: SaveTransactionWithOptionalFields,
}

/// `PUT` body: `{"transaction": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PutTransactionWrapper {
    pub transaction: ExistingTransaction,
}

/// `POST` body: either `transaction` or `transactions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostTransactionsWrapper {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction: Option<NewTransaction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<Vec<NewTransaction>>,
}

/// Bulk `PATCH` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchTransactionsWrapper {
    pub transactions: Vec<SaveTransactionWithIdOrImportId>,
}

/// `data` of `SaveTransactionsResponse` (create one/many, bulk update).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveTransactionsData {
    pub transaction_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction: Option<TransactionDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions: Option<Vec<TransactionDetail>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_import_ids: Option<Vec<String>>,
    pub server_knowledge: i64,
}

#[cfg(test)]
#[path = "transaction_tests.rs"]
mod tests;
