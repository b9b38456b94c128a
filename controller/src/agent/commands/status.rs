//! `/agent status`: the namespace's waiting approvals, the Transactions that need a person and
//! the health of each Budget, read from the API server (the report is
//! [`crate::logic::job::report::status_report`]).

use kube::Api;
use kube::api::ListParams;

use super::outcome::{Outcome, kube_failed};
use crate::agent::context::AgentContext;
use crate::api::approval::ApprovalRequest;
use crate::api::budget::Budget;
use crate::api::transaction::Transaction;
use crate::logic::job::report;

pub(super) async fn run(ctx: &AgentContext) -> Outcome {
    let client = ctx.store.client().clone();
    let ns = ctx.store.namespace();
    let lp = ListParams::default();
    let approvals = match Api::<ApprovalRequest>::namespaced(client.clone(), ns)
        .list(&lp)
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing ApprovalRequests", e),
    };
    let transactions = match Api::<Transaction>::namespaced(client.clone(), ns)
        .list(&lp)
        .await
    {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Transactions", e),
    };
    let budgets = match Api::<Budget>::namespaced(client, ns).list(&lp).await {
        Ok(l) => l.items,
        Err(e) => return kube_failed("listing Budgets", e),
    };
    Outcome::Completed(report::status_report(&approvals, &transactions, &budgets))
}
