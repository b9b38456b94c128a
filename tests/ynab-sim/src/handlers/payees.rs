//! `GET /plans/{plan_id}/payees[/{payee_id}]`.

use axum::extract::{Path, State};
use ledgerops::ynab_model::{PayeeData, PayeesData};

use super::{Answer, DeltaQuery, Shared, data};
use crate::delta;
use crate::error::not_found;
use crate::extract::ApiQuery;

pub async fn list(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<DeltaQuery>,
) -> Answer<PayeesData> {
    sim.read(&plan_id, |view| {
        Ok(data(PayeesData {
            payees: delta::select(&view.plan.payees, q.last_knowledge_of_server)
                .cloned()
                .collect(),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn get(
    State(sim): Shared,
    Path((plan_id, payee_id)): Path<(String, String)>,
) -> Answer<PayeeData> {
    sim.read(&plan_id, |view| {
        let payee = view
            .plan
            .payee(&payee_id)
            .ok_or_else(|| not_found("payee"))?;
        Ok(data(PayeeData {
            payee: payee.clone(),
        }))
    })
}
