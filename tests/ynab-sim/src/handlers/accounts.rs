//! `GET /plans/{plan_id}/accounts[/{account_id}]`.

use axum::extract::{Path, State};
use ledgerops::ynab_model::{AccountData, AccountsData};

use super::{Answer, DeltaQuery, Shared, data};
use crate::delta;
use crate::error::not_found;
use crate::extract::ApiQuery;

pub async fn list(
    State(sim): Shared,
    Path(plan_id): Path<String>,
    ApiQuery(q): ApiQuery<DeltaQuery>,
) -> Answer<AccountsData> {
    sim.read(&plan_id, |view| {
        Ok(data(AccountsData {
            accounts: delta::select(&view.plan.accounts, q.last_knowledge_of_server)
                .map(|a| view.account(a))
                .collect(),
            server_knowledge: view.plan.server_knowledge,
        }))
    })
}

pub async fn get(
    State(sim): Shared,
    Path((plan_id, account_id)): Path<(String, String)>,
) -> Answer<AccountData> {
    sim.read(&plan_id, |view| {
        let account = view
            .plan
            .account(&account_id)
            .ok_or_else(|| not_found("account"))?;
        Ok(data(AccountData {
            account: view.account(account),
        }))
    })
}
