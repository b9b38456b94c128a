//! `User`.

use serde::{Deserialize, Serialize};

/// The authenticated user (spec `User`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: String,
}
