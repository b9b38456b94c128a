//! The CategorizationRule reconciler: says in status where each rule stands (Candidate or
//! Blessed, well formed or not), with an Event when that changes. It writes nothing else: rules
//! act through `/agent suggest`, which reads the Blessed ones from the shared cache.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::runtime::Controller;
use kube::runtime::controller::Action;

use super::{Context, Error};
use crate::api::rule::CategorizationRule;
use crate::k8s::status;
use crate::k8s::watches::{Watches, spec_changes};
use crate::logic::rule;

/// Subscribes to the shared CategorizationRule watch at once (spec changes only: its own
/// status writes do not wake a rule); the returned future runs the controller.
pub fn run(ctx: Arc<Context>, watches: &Watches) -> impl Future<Output = ()> + use<> {
    let rules = watches.rules.store();
    let changes = spec_changes(watches.rules.subscribe(), rules.clone());
    // Blessed rules act only while the admission policies are in force: look again when they are.
    let controller = Controller::for_shared_stream(changes, rules)
        .reconcile_all_on(ctx.admission.verified_again())
        .shutdown_on_signal();
    super::drain(controller.run(reconcile, super::error_policy, ctx))
}

async fn reconcile(rule: Arc<CategorizationRule>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<CategorizationRule>(&ctx);
    let previous = rule.status.clone().unwrap_or_default();
    let admission = ctx.admission.verified();
    let next = rule::status(
        &rule.spec,
        &previous,
        rule.metadata.generation,
        admission.as_ref().map(|_| ()).map_err(String::as_str),
        Timestamp::now(),
    );
    if next != previous {
        status::apply(&ctx.client, rule.as_ref(), &next).await?;
        if let Some((warning, reason, note)) = rule::announcement(&previous, &next) {
            ctx.events
                .publish(rule.as_ref(), warning, &reason, "Assess", note)
                .await;
        }
    }
    Ok(Action::await_change())
}
