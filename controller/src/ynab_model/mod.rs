//! YNAB API v1 wire types (spec 1.86.0), shared by the YNAB client, the logic and the test
//! simulator. Data only: it imports nothing else of the crate, so the dependencies run
//! `ynab` → `logic` → `ynab_model` and never back.
//!
//! Serde models named after the schemas of the YNAB OpenAPI spec. Money is always `i64`
//! milliunits.
//!
//! Conventions: a spec field typed `[X, "null"]` is an `Option<X>` that serializes as `null`
//! (YNAB sends nulls rather than omitting); a field outside `required` that YNAB may leave out
//! is an `Option` skipped when `None`. `*_formatted` strings and `*_currency` doubles are omitted.

mod account;
mod category;
mod envelope;
mod error;
mod month;
mod payee;
mod plan;
mod transaction;
mod user;

pub use account::{Account, AccountType};
pub use category::{
    Category, CategoryGroup, CategoryGroupWithCategories, GoalType, PatchMonthCategoryWrapper,
    SaveMonthCategory,
};
pub use envelope::{
    AccountData, AccountsData, CategoriesData, CategoryData, Envelope, MonthData, MonthsData,
    PayeeData, PayeesData, PlanData, PlanSettingsData, PlansData, SaveCategoryData,
    TransactionData, TransactionsData, UserData,
};
pub use error::{ErrorDetail, ErrorResponse};
pub use month::{MonthDetail, MonthSummary};
pub use payee::Payee;
pub use plan::{CurrencyFormat, DateFormat, PlanDetail, PlanSettings, PlanSummary};
pub use transaction::{
    ClearedStatus, DebtTransactionType, ExistingTransaction, FlagColor, NewTransaction,
    PatchTransactionsWrapper, PostTransactionsWrapper, PutTransactionWrapper, SaveSubTransaction,
    SaveTransactionWithIdOrImportId, SaveTransactionWithOptionalFields, SaveTransactionsData,
    SubTransaction, TransactionDetail, TransactionSummary,
};
pub use user::User;

/// Money in milliunits: 1000 = one unit of the plan's currency.
pub type Milliunits = i64;

/// Deserializes a field that may be absent, `null` or a value into `Option<Option<T>>`, so that a
/// write can tell "leave unchanged" (outer `None`) from "set to null" (`Some(None)`).
pub(crate) mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }

    pub fn serialize<T, S>(v: &Option<Option<T>>, s: S) -> Result<S::Ok, S::Error>
    where
        T: Serialize,
        S: Serializer,
    {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }
}
