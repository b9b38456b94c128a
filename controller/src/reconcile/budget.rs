//! The Budget reconciler: keeps the plan's mirror current with one delta request per sync and
//! reports it in the status.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use kube::runtime::reflector;
use kube::runtime::utils::Predicate;
use kube::runtime::{Controller, WatchStreamExt, predicates, watcher};
use kube::{Api, ResourceExt};

use super::{Context, Error};
use crate::api::budget::{Budget, RequestUse};
use crate::k8s::{secrets, status};
use crate::logic::budget_status::{self, SyncOutcome, SyncReport};
use crate::logic::duration;
use crate::logic::mirror::Mirror;
use crate::mirror_sync::{self, MirrorKey};
use crate::registry::{Credentials, MirrorSlot};
use crate::ynab::client::{SharedWindow, YnabClient};
use crate::ynab::error::YnabError;

/// Retry delay after an error that needs a person (bad token, unknown plan): slow enough never
/// to storm YNAB, quick enough to notice a fixed Secret.
const NEEDS_A_PERSON: Duration = Duration::from_secs(300);
/// Retry delay after a transient failure.
const TRANSIENT: Duration = Duration::from_secs(60);

/// Runs the Budget controller until shutdown.
pub async fn run(ctx: Arc<Context>) {
    let api: Api<Budget> = Api::all(ctx.client.clone());
    let (reader, writer) = reflector::store();
    let registry = ctx.registry.clone();
    // Only spec and annotation changes wake a Budget: its own status writes must not.
    let stream = watcher(api, watcher::Config::default().any_semantic())
        .default_backoff()
        .reflect(writer)
        .inspect(move |event| {
            if let Ok(watcher::Event::Delete(b)) = event {
                registry.forget(&b.namespace().unwrap_or_default(), &b.name_any());
            }
        })
        .applied_objects()
        .predicate_filter(
            predicates::generation.combine(predicates::annotations),
            Default::default(),
        );
    let controller = Controller::for_stream(stream, reader).shutdown_on_signal();
    super::drain(controller.run(reconcile, super::error_policy, ctx)).await;
}

async fn reconcile(budget: Arc<Budget>, ctx: Arc<Context>) -> Result<Action, Error> {
    super::count::<Budget>(&ctx);
    let namespace = budget.namespace().unwrap_or_default();
    let slot = ctx.registry.mirror(&namespace, &budget.name_any());
    let mut slot = slot.write().await;
    let (outcome, window, requeue) = sync(&budget, &ctx, &namespace, &mut slot).await;
    let now = Timestamp::now();
    let requests = match &window {
        Some(w) => {
            let mut w = w.lock().expect("window lock");
            RequestUse {
                used_last_hour: w.used(now),
                limit_per_hour: w.limit(),
                rate_limited_until: w.paused_until(now).map(Time),
            }
        }
        None => RequestUse {
            used_last_hour: 0,
            limit_per_hour: budget.spec.requests_per_hour,
            rate_limited_until: None,
        },
    };
    let previous = budget.status.clone().unwrap_or_default();
    let synced = outcome == SyncOutcome::Synced;
    let report = SyncReport {
        outcome,
        generation: budget.metadata.generation,
        mirror: (synced || slot.mirror.server_knowledge > 0).then_some(&slot.mirror),
        requests,
        now,
    };
    let next = budget_status::next(&previous, &report);
    drop(slot);
    status::apply(&ctx.client, budget.as_ref(), &next).await?;
    if let Some(a) = budget_status::announcement(&previous, &next) {
        ctx.events
            .publish(budget.as_ref(), a.warning, &a.reason, "Sync", a.note)
            .await;
    }
    Ok(requeue)
}

/// One sync attempt: the outcome, the token's request window when there was a token, and when
/// to look again.
async fn sync(
    budget: &Budget,
    ctx: &Context,
    namespace: &str,
    slot: &mut MirrorSlot,
) -> (SyncOutcome, Option<SharedWindow>, Action) {
    let spec = &budget.spec;
    if spec.suspend {
        return (SyncOutcome::Suspended, None, Action::await_change());
    }
    let interval = match duration::parse(&spec.sync_interval.0) {
        Ok(d) => d,
        Err(e) => {
            return (
                failed("InvalidSpec", e.to_string()),
                None,
                Action::await_change(),
            );
        }
    };
    // The URL first: a token is not even read for a place it may not go.
    let url = match ctx.api_urls.check(&spec.api_url) {
        Ok(url) => url,
        Err(e) => {
            ctx.registry
                .forget_credentials(namespace, &budget.name_any());
            return (
                failed("ApiUrlNotAllowed", e.to_string()),
                None,
                Action::await_change(),
            );
        }
    };
    let token = match secrets::read_token(&ctx.client, namespace, &spec.token_secret_ref).await {
        Ok(t) => t,
        Err(e) => {
            ctx.registry
                .forget_credentials(namespace, &budget.name_any());
            return (
                failed(e.reason(), e.to_string()),
                None,
                Action::requeue(NEEDS_A_PERSON),
            );
        }
    };
    ctx.registry.set_credentials(
        namespace,
        &budget.name_any(),
        Credentials {
            url: url.clone(),
            secret: spec.token_secret_ref.clone(),
            token: token.clone(),
        },
    );
    let window = ctx.registry.window(&url, &token, spec.requests_per_hour);
    let client = match YnabClient::new(&url, token, window.clone(), ctx.metrics.clone()) {
        Ok(c) => c,
        Err(e) => {
            return (
                failed(e.reason(), e.to_string()),
                Some(window),
                Action::requeue(TRANSIENT),
            );
        }
    };
    let wanted = (spec.plan_id.clone(), url.as_str().to_owned());
    if slot.source != wanted {
        *slot = MirrorSlot {
            source: wanted,
            mirror: Mirror::default(),
        };
    }
    let key = MirrorKey {
        namespace: namespace.to_owned(),
        budget: budget.name_any(),
        registry: ctx.registry.clone(),
    };
    let started = Instant::now();
    match mirror_sync::sync(&client, &spec.plan_id, &mut slot.mirror, &key).await {
        Ok(changes) => {
            ctx.metrics
                .sync_duration
                .observe(started.elapsed().as_secs_f64());
            let server_knowledge = slot.mirror.server_knowledge;
            tracing::info!(budget = %budget.name_any(), server_knowledge, ?changes, "synced");
            (SyncOutcome::Synced, Some(window), Action::requeue(interval))
        }
        Err(e) => {
            let requeue = retry_after(&e);
            (
                failed(e.reason(), e.to_string()),
                Some(window),
                Action::requeue(requeue),
            )
        }
    }
}

fn failed(reason: &'static str, message: String) -> SyncOutcome {
    SyncOutcome::Failed { reason, message }
}

fn retry_after(e: &YnabError) -> Duration {
    match e {
        YnabError::RateLimited { until } | YnabError::BudgetSpent { until, .. } => {
            let wait = until.duration_since(Timestamp::now());
            Duration::try_from(wait)
                .unwrap_or(TRANSIENT)
                .max(Duration::from_secs(1))
        }
        e if e.is_transient() => TRANSIENT,
        _ => NEEDS_A_PERSON,
    }
}
