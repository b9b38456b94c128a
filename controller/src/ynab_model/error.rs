//! `ErrorResponse` / `ErrorDetail`: the body of every non-2xx answer.

use serde::{Deserialize, Serialize};

/// `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorResponse {
    pub error: ErrorDetail,
}

/// YNAB's error triple, e.g. `id: "404.2"`, `name: "resource_not_found"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub id: String,
    pub name: String,
    pub detail: String,
}
