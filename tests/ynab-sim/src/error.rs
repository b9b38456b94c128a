//! The crate's one error type. API failures render as YNAB's `{"error":{id,name,detail}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ledgerops::ynab_model::{ErrorDetail, ErrorResponse};

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("Unauthorized")]
    NotAuthorized,
    #[error("The requested URI was not found")]
    UriNotFound,
    #[error("{0}")]
    ResourceNotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Conflict(String),
    #[error("Too many requests: the limit of {0} requests per hour was exceeded")]
    TooManyRequests(u32),
    /// A status injected through the fault controls.
    #[error("{detail}")]
    Injected { status: u16, detail: String },
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("HTTP: {0}")]
    Http(#[from] reqwest::Error),
    /// A control request answered with a non-2xx status.
    #[error("simulator control answered {status}: {body}")]
    Control { status: u16, body: String },
}

impl SimError {
    pub fn status(&self) -> u16 {
        match self {
            SimError::NotAuthorized => 401,
            SimError::UriNotFound | SimError::ResourceNotFound(_) => 404,
            SimError::BadRequest(_) | SimError::Json(_) => 400,
            SimError::Conflict(_) => 409,
            SimError::TooManyRequests(_) => 429,
            SimError::Injected { status, .. } => *status,
            SimError::Io(_) | SimError::Http(_) | SimError::Control { .. } => 500,
        }
    }

    /// The `ErrorDetail` YNAB would send (ids and names from its documented error table).
    pub fn detail(&self) -> ErrorDetail {
        let (id, name) = match self {
            SimError::UriNotFound => ("404.1", "not_found"),
            other => error_id(other.status()),
        };
        ErrorDetail {
            id: id.to_string(),
            name: name.to_string(),
            detail: self.to_string(),
        }
    }
}

/// YNAB's error id and name for a status; 404 means a missing resource unless the URI is unknown.
pub fn error_id(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("400", "bad_request"),
        401 => ("401", "not_authorized"),
        403 => ("403.1", "subscription_lapsed"),
        404 => ("404.2", "resource_not_found"),
        409 => ("409", "conflict"),
        429 => ("429", "too_many_requests"),
        503 => ("503", "service_unavailable"),
        _ => ("500", "internal_server_error"),
    }
}

impl IntoResponse for SimError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = ErrorResponse {
            error: self.detail(),
        };
        (status, axum::Json(body)).into_response()
    }
}

/// Shorthand for the 404.2 of an unknown record.
pub fn not_found(what: &str) -> SimError {
    SimError::ResourceNotFound(format!("{what} not found"))
}
