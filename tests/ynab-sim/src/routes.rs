//! The router: YNAB's `/v1` API behind counters → auth + rate limit → faults, the
//! `/v1/budgets` alias in front of routing, and the token-free `/__sim` controls beside it.

use std::sync::Arc;

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::get;

use crate::handlers::{accounts, categories, months, payees, plans, transactions, user};
use crate::sim::Sim;
use crate::{SimError, auth, controls, counters, faults, legacy};

/// 404.1: no such URI (or no such method on it, as YNAB's router answers).
async fn unknown_uri() -> SimError {
    SimError::UriNotFound
}

fn api(sim: Arc<Sim>) -> Router {
    let plan = "/plans/{plan_id}";
    Router::new()
        .route("/user", get(user::get))
        .route("/plans", get(plans::list))
        .route(plan, get(plans::get))
        .route(&format!("{plan}/settings"), get(plans::settings))
        .route(&format!("{plan}/accounts"), get(accounts::list))
        .route(
            &format!("{plan}/accounts/{{account_id}}"),
            get(accounts::get),
        )
        .route(&format!("{plan}/categories"), get(categories::list))
        .route(
            &format!("{plan}/categories/{{category_id}}"),
            get(categories::get),
        )
        .route(
            &format!("{plan}/months/{{month}}/categories/{{category_id}}"),
            get(categories::get_for_month).patch(categories::assign),
        )
        .route(&format!("{plan}/payees"), get(payees::list))
        .route(&format!("{plan}/payees/{{payee_id}}"), get(payees::get))
        .route(&format!("{plan}/months"), get(months::list))
        .route(&format!("{plan}/months/{{month}}"), get(months::get))
        .route(
            &format!("{plan}/transactions"),
            get(transactions::list)
                .post(transactions::create)
                .patch(transactions::update_many),
        )
        .route(
            &format!("{plan}/transactions/{{transaction_id}}"),
            get(transactions::get)
                .put(transactions::update)
                .delete(transactions::delete),
        )
        .fallback(unknown_uri)
        .method_not_allowed_fallback(unknown_uri)
        .layer(from_fn_with_state(sim.clone(), faults::layer))
        .layer(from_fn_with_state(sim.clone(), auth::layer))
        .layer(from_fn_with_state(sim.clone(), counters::layer))
        .with_state(sim)
}

pub fn app(sim: Arc<Sim>) -> Router {
    let inner = Router::new()
        .nest("/v1", api(sim.clone()))
        .nest("/__sim", controls::router(sim))
        .fallback(unknown_uri);
    Router::new()
        .fallback_service(inner)
        .layer(from_fn(legacy::layer))
}
