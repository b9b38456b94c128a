//! Transactions: list (with date window, type filter and delta), one (GET/PUT/DELETE), create
//! one or many (POST), update many (PATCH).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use ledgerops::ynab_model::{
    Envelope, PatchTransactionsWrapper, PostTransactionsWrapper, PutTransactionWrapper,
    SaveTransactionsData, TransactionData, TransactionDetail, TransactionsData,
};
use serde::Deserialize;

use super::{Answer, Shared, data};
use crate::SimError;
use crate::clock::{one_year_before, parse_date};
use crate::delta;
use crate::error::not_found;
use crate::extract::{ApiJson, ApiQuery};
use crate::store::{PlanState, View};

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    since_date: Option<String>,
    until_date: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    last_knowledge_of_server: Option<i64>,
}

/// `type=uncategorized`: no category where one is expected (not a split, not an on-budget
/// transfer, not on a tracking account).
fn uncategorized(plan: &PlanState, tx: &TransactionDetail) -> bool {
    tx.summary.category_id.is_none()
        && tx.subtransactions.is_empty()
        && plan
            .categorizable(
                &tx.summary.account_id,
                tx.summary.transfer_account_id.as_deref(),
            )
            .unwrap_or(false)
}

pub async fn list(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Answer<TransactionsData> {
    let since = match &q.since_date {
        Some(d) => parse_date(d)?,
        None => one_year_before(sim.clock.today()),
    }
    .to_string();
    let until = q
        .until_date
        .as_deref()
        .map(parse_date)
        .transpose()?
        .map(|d| d.to_string());
    let filter: fn(&PlanState, &TransactionDetail) -> bool = match q.kind.as_deref() {
        None => |_, _| true,
        Some("uncategorized") => uncategorized,
        Some("unapproved") => |_, tx| !tx.summary.approved,
        Some(other) => {
            return Err(SimError::BadRequest(format!("invalid type: {other}")));
        }
    };
    sim.read(&plan_id, |view| {
        let mut transactions: Vec<TransactionDetail> =
            delta::select(&view.plan.transactions, q.last_knowledge_of_server)
                .filter(|t| t.summary.date >= since)
                .filter(|t| until.as_ref().is_none_or(|u| &t.summary.date <= u))
                .filter(|t| filter(view.plan, t))
                .map(|t| view.transaction(t))
                .collect();
        transactions.sort_by(|a, b| a.summary.date.cmp(&b.summary.date));
        Ok(data(TransactionsData {
            transactions,
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

fn rendered(view: &View, id: &str) -> TransactionDetail {
    view.transaction(view.plan.transaction(id).expect("just written"))
}

pub async fn get(
    State(sim): Shared,
    Path((plan_id, id)): Path<(String, String)>,
) -> Answer<TransactionData> {
    sim.read(&plan_id, |view| {
        let tx = view
            .plan
            .transaction(&id)
            .ok_or_else(|| not_found("transaction"))?;
        Ok(data(TransactionData {
            transaction: view.transaction(tx),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn update(
    State(sim): Shared,
    Path((plan_id, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<PutTransactionWrapper>,
) -> Answer<TransactionData> {
    let today = sim.clock.today();
    sim.write(
        &plan_id,
        |plan, k| plan.update_transaction(k, &id, body.transaction, today),
        |view, (), server_knowledge| {
            data(TransactionData {
                transaction: rendered(view, &id),
                server_knowledge,
            })
        },
    )
}

pub async fn delete(
    State(sim): Shared,
    Path((plan_id, id)): Path<(String, String)>,
) -> Answer<TransactionData> {
    sim.write(
        &plan_id,
        |plan, k| plan.delete_transaction(k, &id),
        |view, (), server_knowledge| {
            data(TransactionData {
                transaction: rendered(view, &id),
                server_knowledge,
            })
        },
    )
}

pub async fn update_many(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiJson(body): ApiJson<PatchTransactionsWrapper>,
) -> Answer<SaveTransactionsData> {
    let today = sim.clock.today();
    sim.write(
        &plan_id,
        |plan, k| {
            let mut ids = Vec::with_capacity(body.transactions.len());
            for (index, item) in body.transactions.into_iter().enumerate() {
                let id = plan
                    .find_for_update(item.id.as_deref(), item.import_id.as_deref())
                    .ok_or_else(|| {
                        SimError::BadRequest(format!(
                            "transaction does not exist in this budget (index: {index})"
                        ))
                    })?;
                plan.update_transaction(k, &id, item.fields, today)?;
                ids.push(id);
            }
            Ok(ids)
        },
        |view, ids, server_knowledge| {
            data(SaveTransactionsData {
                transactions: Some(ids.iter().map(|id| rendered(view, id)).collect()),
                transaction_ids: ids,
                transaction: None,
                duplicate_import_ids: None,
                server_knowledge,
            })
        },
    )
}

pub async fn create(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiJson(body): ApiJson<PostTransactionsWrapper>,
) -> Result<(StatusCode, Json<Envelope<SaveTransactionsData>>), SimError> {
    let today = sim.clock.today();
    let answer = match (body.transaction, body.transactions) {
        (Some(one), None) => sim.write(
            &plan_id,
            |plan, k| plan.create_transaction(k, one, today),
            |view, id, server_knowledge| {
                data(SaveTransactionsData {
                    transaction: Some(rendered(view, &id)),
                    transaction_ids: vec![id],
                    transactions: None,
                    duplicate_import_ids: None,
                    server_knowledge,
                })
            },
        )?,
        (None, Some(many)) => sim.write(
            &plan_id,
            |plan, k| {
                let (mut ids, mut duplicates) = (Vec::new(), Vec::new());
                for new in many {
                    let taken = match (&new.fields.account_id, &new.import_id) {
                        (Some(account), Some(import)) => plan.import_id_taken(account, import),
                        _ => false,
                    };
                    match new.import_id.clone() {
                        Some(import) if taken => duplicates.push(import),
                        _ => ids.push(plan.create_transaction(k, new, today)?),
                    }
                }
                Ok((ids, duplicates))
            },
            |view, (ids, duplicates), server_knowledge| {
                data(SaveTransactionsData {
                    transactions: Some(ids.iter().map(|id| rendered(view, id)).collect()),
                    transaction_ids: ids,
                    transaction: None,
                    duplicate_import_ids: Some(duplicates),
                    server_knowledge,
                })
            },
        )?,
        _ => {
            return Err(SimError::BadRequest(
                "provide either a transaction object or a transactions array".to_string(),
            ));
        }
    };
    Ok((StatusCode::CREATED, answer))
}
