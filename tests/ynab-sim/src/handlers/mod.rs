//! One module per YNAB resource. Handlers parse, call the store, and wrap the answer in
//! `{"data": …}`.

pub mod accounts;
pub mod categories;
pub mod months;
pub mod payees;
pub mod plans;
pub mod transactions;
pub mod user;

use std::sync::Arc;

use axum::Json;
use ledgerops::ynab_model::Envelope;
use serde::Deserialize;

use crate::SimError;
use crate::sim::Sim;

pub type Shared = axum::extract::State<Arc<Sim>>;
pub type Answer<T> = Result<Json<Envelope<T>>, SimError>;

pub fn data<T>(data: T) -> Json<Envelope<T>> {
    Json(Envelope { data })
}

/// `?last_knowledge_of_server=` of the delta-capable lists.
#[derive(Debug, Default, Deserialize)]
pub struct DeltaQuery {
    pub last_knowledge_of_server: Option<i64>,
}
