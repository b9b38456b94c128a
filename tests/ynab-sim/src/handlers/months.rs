//! `GET /plans/{plan_id}/months[/{month}]`.

use axum::extract::{Path, State};
use ledgerops::ynab_model::{MonthData, MonthsData};

use super::{Answer, DeltaQuery, Shared, data};
use crate::SimError;
use crate::clock::parse_date;
use crate::error::not_found;
use crate::extract::ApiQuery;
use crate::store::{View, month_of};

/// A `{month}` path parameter (`YYYY-MM-01` or `current`) as a plan month that exists.
pub fn resolve_month(view: &View, month: &str) -> Result<String, SimError> {
    let month = if month == "current" {
        view.month.clone()
    } else {
        parse_date(month)?;
        month_of(month)
    };
    if view.month_list().contains(&month) {
        Ok(month)
    } else {
        Err(not_found("month"))
    }
}

pub async fn list(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<DeltaQuery>,
) -> Answer<MonthsData> {
    sim.read(&plan_id, |view| {
        Ok(data(MonthsData {
            months: view
                .months(q.last_knowledge_of_server)
                .iter()
                .map(|m| view.month_summary(m))
                .collect(),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn get(
    State(sim): Shared,
    Path((plan_id, month)): Path<(String, String)>,
) -> Answer<MonthData> {
    sim.read(&plan_id, |view| {
        let month = resolve_month(view, &month)?;
        Ok(data(MonthData {
            month: view.month_detail(&month),
        }))
    })
}
