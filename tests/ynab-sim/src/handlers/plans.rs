//! `GET /plans`, `GET /plans/{plan_id}`, `GET /plans/{plan_id}/settings`.

use axum::extract::{Path, State};
use ledgerops::ynab_model::{PlanData, PlanSettings, PlanSettingsData, PlanSummary, PlansData};
use serde::Deserialize;

use super::{Answer, DeltaQuery, Shared, data};
use crate::SimError;
use crate::delta;
use crate::extract::ApiQuery;
use crate::store::View;

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    include_accounts: bool,
}

pub async fn list(State(sim): Shared, ApiQuery(q): ApiQuery<ListQuery>) -> Answer<PlansData> {
    let month = sim.clock.current_month();
    let plans: Vec<PlanSummary> = sim.read_store(|store| {
        store
            .plans
            .iter()
            .map(|plan| {
                let view = View::new(plan, month.clone());
                PlanSummary {
                    accounts: q.include_accounts.then(|| {
                        delta::select(&plan.accounts, None)
                            .map(|a| view.account(a))
                            .collect()
                    }),
                    ..plan.summary.clone()
                }
            })
            .collect()
    });
    if plans.is_empty() {
        return Err(SimError::ResourceNotFound(
            "No plans were found".to_string(),
        ));
    }
    // A personal access token has no default plan.
    Ok(data(PlansData {
        plans,
        default_plan: None,
    }))
}

pub async fn get(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<DeltaQuery>,
) -> Answer<PlanData> {
    sim.read(&plan_id, |view| {
        Ok(data(PlanData {
            plan: view.plan_detail(q.last_knowledge_of_server),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn settings(State(sim): Shared, Path(plan_id): Path<String>) -> Answer<PlanSettingsData> {
    sim.read(&plan_id, |view| {
        let summary = &view.plan.summary;
        Ok(data(PlanSettingsData {
            settings: PlanSettings {
                date_format: summary.date_format.clone(),
                currency_format: summary.currency_format.clone(),
            },
        }))
    })
}
