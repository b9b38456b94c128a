//! `kubectl_complete-ledgerops`: answers kubectl's completion of `kubectl ledgerops` (see
//! [`crate::logic::complete`]), reading names from the cluster the typed flags name. A shell is
//! waiting on it, so a lookup gets a few seconds and fails silently: kubectl shows the
//! completer's stderr on the terminal, and offline there is just nothing to offer.

use std::path::PathBuf;
use std::time::Duration;

use clap::CommandFactory;
use kube::config::Kubeconfig;
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::Budget;
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::api::transaction::{Transaction, TransactionPhase};

use crate::cli::{Cli, Format, Global};
use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::complete::{self, Lookup, Typed};
use crate::logic::queue;

/// How long a shell waits for names from the cluster.
const LOOKUP_LIMIT: Duration = Duration::from_secs(3);

/// The completion of `words` (kubectl's arguments: the words after `kubectl ledgerops`, the
/// last the one to complete), in cobra's format.
pub fn answer(words: &[String]) -> String {
    let answer = complete::complete(&Cli::command(), words);
    let names = match answer.lookup {
        Some(lookup) => names(lookup, &answer.typed),
        None => vec![],
    };
    complete::render(&answer, &names)
}

fn names(lookup: Lookup, typed: &Typed) -> Vec<(String, String)> {
    if lookup == Lookup::Contexts {
        return contexts(typed);
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return vec![];
    };
    runtime
        .block_on(async { tokio::time::timeout(LOOKUP_LIMIT, from_cluster(lookup, typed)).await })
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

/// The kubeconfig's contexts, with their cluster: no request needed.
fn contexts(typed: &Typed) -> Vec<(String, String)> {
    let config = match &typed.kubeconfig {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    };
    config
        .map(|c| {
            c.contexts
                .into_iter()
                .map(|n| {
                    let cluster = n.context.map(|c| c.cluster).unwrap_or_default();
                    (n.name, cluster)
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn from_cluster(lookup: Lookup, typed: &Typed) -> Result<Vec<(String, String)>, PluginError> {
    let flags = Global {
        kubeconfig: typed.kubeconfig.as_ref().map(PathBuf::from),
        context: typed.context.clone(),
        namespace: typed.namespace.clone(),
        all_namespaces: false,
        as_user: typed.as_user.clone(),
        output: Format::Table,
    };
    let cluster = Cluster::connect(&flags).await?;
    let name = |m: &kube::api::ObjectMeta| m.name.clone().unwrap_or_default();
    Ok(match lookup {
        Lookup::WaitingRequests => {
            let all: Vec<ApprovalRequest> = cluster.list("ApprovalRequests").await?;
            queue::waiting(all, crate::commands::now())
                .iter()
                .map(|r| (name(&r.metadata), queue::subject(r)))
                .collect()
        }
        Lookup::RequestsAndPlans => {
            let requests: Vec<ApprovalRequest> = cluster.list("ApprovalRequests").await?;
            let plans: Vec<CategorizationPlan> = cluster.list("CategorizationPlans").await?;
            let requests = requests.iter().map(|r| {
                let p = phase(r.status.as_ref().and_then(|s| s.phase));
                (name(&r.metadata), format!("ApprovalRequest, {p}"))
            });
            let plans = plans.iter().map(|p| {
                let ph = phase(p.status.as_ref().and_then(|s| s.phase));
                (name(&p.metadata), format!("CategorizationPlan, {ph}"))
            });
            requests.chain(plans).collect()
        }
        Lookup::Plans => {
            let plans: Vec<CategorizationPlan> = cluster.list("CategorizationPlans").await?;
            plans
                .iter()
                .map(|p| {
                    (
                        name(&p.metadata),
                        phase(p.status.as_ref().and_then(|s| s.phase)),
                    )
                })
                .collect()
        }
        Lookup::DivergedTransactions => {
            let all: Vec<Transaction> = cluster.list("Transactions").await?;
            all.iter()
                .filter(|t| {
                    t.status.as_ref().and_then(|s| s.phase) == Some(TransactionPhase::Diverged)
                })
                .map(|t| (name(&t.metadata), "Diverged".to_owned()))
                .collect()
        }
        Lookup::Budgets => {
            let all: Vec<Budget> = cluster.list("Budgets").await?;
            all.iter()
                .map(|b| {
                    (
                        name(&b.metadata),
                        phase(b.status.as_ref().and_then(|s| s.phase)),
                    )
                })
                .collect()
        }
        Lookup::Namespaces => cluster
            .namespaces()
            .await?
            .into_iter()
            .map(|n| (n, String::new()))
            .collect(),
        // Read from the kubeconfig, without a request (see `names`).
        Lookup::Contexts => vec![],
    })
}

/// A phase as its description.
fn phase(phase: Option<impl std::fmt::Debug>) -> String {
    phase
        .map(|p| format!("{p:?}"))
        .unwrap_or_else(|| "not reconciled yet".into())
}
