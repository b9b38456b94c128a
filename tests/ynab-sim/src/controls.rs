//! Test controls under `/__sim` (a prefix YNAB does not have): no token, never rate-limited,
//! never counted. Fixture load/reset, clock, out-of-band edits, faults, counters, journal.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use jiff::Timestamp;
use ledgerops::ynab_model::{NewTransaction, TransactionData};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::SimError;
use crate::counters::Counters;
use crate::delta::Stamped;
use crate::error::not_found;
use crate::extract::ApiJson;
use crate::faults::{DropFault, Faults, StatusFault};
use crate::fixture::Fixture;
use crate::journal::{By, Entry};
use crate::sim::Sim;

type Shared = State<Arc<Sim>>;
type Done = Result<StatusCode, SimError>;

/// `POST /__sim/clock`: one of `now` (jump to), `advance_seconds`, or `real: true`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ClockSet {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockView {
    pub now: Timestamp,
    /// `YYYY-MM-DD`: what "today" means for `since_date` and future-date checks.
    pub today: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RateLimitSet {
    pub per_hour: u32,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LatencySet {
    pub latency_ms: u64,
}

/// Answer of an out-of-band edit: the record as stored and the knowledge it now carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edited {
    pub record: Value,
    pub server_knowledge: i64,
}

pub fn router(sim: Arc<Sim>) -> Router {
    Router::new()
        .route("/fixture", post(load_fixture))
        .route("/reset", post(reset))
        .route("/clock", get(clock).post(set_clock))
        .route("/rate-limit", put(set_rate_limit))
        .route("/plans/{plan_id}/transactions", post(create_transaction))
        .route(
            "/plans/{plan_id}/{kind}/{id}",
            get(read_record).patch(edit).delete(delete_transaction),
        )
        .route("/faults", get(faults).delete(clear_faults))
        .route("/faults/status", post(add_status_fault))
        .route("/faults/drop", post(add_drop_fault))
        .route("/faults/latency", put(set_latency))
        .route("/counters", get(counters).delete(reset_counters))
        .route("/journal", get(journal))
        .with_state(sim)
}

async fn load_fixture(State(sim): Shared, ApiJson(fixture): ApiJson<Fixture>) -> Done {
    sim.load_fixture(fixture)?;
    Ok(StatusCode::NO_CONTENT)
}

async fn reset(State(sim): Shared) -> Done {
    sim.reset()?;
    Ok(StatusCode::NO_CONTENT)
}

fn clock_view(sim: &Sim) -> Json<ClockView> {
    Json(ClockView {
        now: sim.clock.now(),
        today: sim.clock.today().to_string(),
    })
}

async fn clock(State(sim): Shared) -> Json<ClockView> {
    clock_view(&sim)
}

async fn set_clock(State(sim): Shared, ApiJson(set): ApiJson<ClockSet>) -> Json<ClockView> {
    if set.real == Some(true) {
        sim.clock.reset_to_real();
    }
    if let Some(now) = set.now {
        sim.clock.set(now);
    }
    if let Some(seconds) = set.advance_seconds {
        sim.clock.advance(seconds);
    }
    clock_view(&sim)
}

async fn set_rate_limit(State(sim): Shared, ApiJson(set): ApiJson<RateLimitSet>) -> Done {
    sim.limiter.lock().unwrap().set_limit(set.per_hour);
    Ok(StatusCode::NO_CONTENT)
}

/// Shallow-merges `patch` into `record` (its JSON form); the id cannot change.
fn merge<T: Serialize + DeserializeOwned>(
    record: &mut T,
    patch: &Value,
) -> Result<Value, SimError> {
    let mut value = serde_json::to_value(&*record)?;
    let (Some(target), Some(fields)) = (value.as_object_mut(), patch.as_object()) else {
        return Err(SimError::BadRequest(
            "the edit must be a JSON object".to_string(),
        ));
    };
    if fields
        .get("id")
        .is_some_and(|id| Some(id) != target.get("id"))
    {
        return Err(SimError::BadRequest("the id cannot be edited".to_string()));
    }
    target.extend(fields.clone());
    *record = serde_json::from_value(value.clone())
        .map_err(|e| SimError::BadRequest(format!("invalid edit: {e}")))?;
    Ok(value)
}

/// Merges into the record with `id` and stamps it at `knowledge`.
fn edit_in<T: Serialize + DeserializeOwned>(
    items: &mut [Stamped<T>],
    id_of: impl Fn(&T) -> &str,
    id: &str,
    knowledge: i64,
    patch: &Value,
) -> Result<Value, SimError> {
    let item = items
        .iter_mut()
        .find(|i| id_of(&i.record) == id)
        .ok_or_else(|| not_found("record"))?;
    item.knowledge = knowledge;
    merge(&mut item.record, patch)
}

/// `PATCH /__sim/plans/{plan_id}/{kind}/{id}`: an edit made in the YNAB app. `kind` is
/// `transactions`, `categories`, `payees` or `accounts`; the body holds the fields to change.
/// A transaction as YNAB holds it, read without counting a request (tests check outcomes with it).
async fn read_record(
    State(sim): Shared,
    Path((plan_id, kind, id)): Path<(String, String, String)>,
) -> Result<Json<Value>, SimError> {
    if kind != "transactions" {
        return Err(SimError::BadRequest(format!(
            "cannot read {kind} here: only transactions"
        )));
    }
    sim.read(&plan_id, |view| {
        let tx = view
            .plan
            .transaction(&id)
            .ok_or_else(|| not_found("transaction"))?;
        serde_json::to_value(view.transaction(tx)).map_err(|e| SimError::BadRequest(e.to_string()))
    })
    .map(Json)
}

async fn edit(
    State(sim): Shared,
    Path((plan_id, kind, id)): Path<(String, String, String)>,
    ApiJson(patch): ApiJson<Value>,
) -> Result<Json<Edited>, SimError> {
    sim.write_as(
        By::Person,
        &plan_id,
        |plan, k| match kind.as_str() {
            "transactions" => {
                let before = plan
                    .transaction(&id)
                    .cloned()
                    .ok_or_else(|| not_found("transaction"))?;
                plan.touch_effects(k, &before);
                let value = edit_in(&mut plan.transactions, |t| &t.summary.id, &id, k, &patch)?;
                let after = plan.transaction(&id).cloned().expect("just edited");
                plan.touch_effects(k, &after);
                Ok(value)
            }
            "categories" => edit_in(&mut plan.categories, |c| &c.id, &id, k, &patch),
            "payees" => edit_in(&mut plan.payees, |p| &p.id, &id, k, &patch),
            "accounts" => edit_in(&mut plan.accounts, |a| &a.id, &id, k, &patch),
            other => Err(SimError::BadRequest(format!("cannot edit {other}"))),
        },
        |_, record, server_knowledge| {
            Json(Edited {
                record,
                server_knowledge,
            })
        },
    )
}

/// `POST /__sim/plans/{plan_id}/transactions`: a transaction entered in the app (a
/// `NewTransaction` body, not wrapped).
async fn create_transaction(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiJson(new): ApiJson<NewTransaction>,
) -> Result<(StatusCode, Json<TransactionData>), SimError> {
    let today = sim.clock.today();
    let data = sim.write_as(
        By::Person,
        &plan_id,
        |plan, k| plan.create_transaction(k, new, today),
        |view, id, server_knowledge| TransactionData {
            transaction: view.transaction(view.plan.transaction(&id).expect("just created")),
            server_knowledge,
        },
    )?;
    Ok((StatusCode::CREATED, Json(data)))
}

/// `DELETE /__sim/plans/{plan_id}/transactions/{id}`: a transaction deleted in the app.
async fn delete_transaction(
    State(sim): Shared,
    Path((plan_id, kind, id)): Path<(String, String, String)>,
) -> Done {
    if kind != "transactions" {
        return Err(SimError::BadRequest(format!("cannot delete {kind}")));
    }
    sim.write_as(
        By::Person,
        &plan_id,
        |plan, k| plan.delete_transaction(k, &id),
        |_, (), _| (),
    )?;
    Ok(StatusCode::NO_CONTENT)
}

async fn faults(State(sim): Shared) -> Json<Faults> {
    Json(sim.faults.lock().unwrap().clone())
}

async fn clear_faults(State(sim): Shared) -> Done {
    *sim.faults.lock().unwrap() = Faults::default();
    Ok(StatusCode::NO_CONTENT)
}

async fn add_status_fault(State(sim): Shared, ApiJson(fault): ApiJson<StatusFault>) -> Done {
    sim.faults.lock().unwrap().statuses.push(fault);
    Ok(StatusCode::NO_CONTENT)
}

async fn add_drop_fault(State(sim): Shared, ApiJson(fault): ApiJson<DropFault>) -> Done {
    sim.faults.lock().unwrap().drops.push(fault);
    Ok(StatusCode::NO_CONTENT)
}

async fn set_latency(State(sim): Shared, ApiJson(set): ApiJson<LatencySet>) -> Done {
    sim.faults.lock().unwrap().latency_ms = set.latency_ms;
    Ok(StatusCode::NO_CONTENT)
}

async fn counters(State(sim): Shared) -> Json<Counters> {
    Json(sim.counters.lock().unwrap().clone())
}

/// `GET /__sim/journal?after=SEQ`: the next page of the journal (see [`crate::journal`]).
async fn journal(State(sim): Shared, Query(page): Query<JournalPage>) -> Json<Vec<Entry>> {
    Json(sim.journal.lock().unwrap().after(page.after.unwrap_or(0)))
}

#[derive(Debug, Deserialize)]
struct JournalPage {
    after: Option<u64>,
}

async fn reset_counters(State(sim): Shared) -> Done {
    *sim.counters.lock().unwrap() = Counters::default();
    Ok(StatusCode::NO_CONTENT)
}
