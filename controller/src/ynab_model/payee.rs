//! `Payee`.

use serde::{Deserialize, Serialize};

/// A payee; one with `transfer_account_id` is that account's transfer payee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payee {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub transfer_account_id: Option<String>,
    pub deleted: bool,
}
