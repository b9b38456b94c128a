//! `GET /user`.

use axum::extract::State;
use ledgerops::ynab_model::UserData;

use super::{Answer, Shared, data};

pub async fn get(State(sim): Shared) -> Answer<UserData> {
    Ok(data(UserData {
        user: sim.read_store(|s| s.user.clone()),
    }))
}
