//! The CategorizationRule reconciler: says in status where each rule stands (Candidate, Blessed
//! or Demoted, well formed or not), with an Event when that changes. It writes nothing else:
//! rules act through `/agent suggest`, which reads the Blessed ones from the shared cache, and
//! what people's decisions teach is `reconcile::learning`'s part of the status.

use std::sync::Arc;

use futures::{StreamExt, stream};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};

use super::summarize::{StatusWrite, summarize_and_patch};
use super::{Context, Error};
use crate::api::budget::Budget;
use crate::api::rule::CategorizationRule;
use crate::k8s::watches::{Watches, changes_of, spec_changes};
use crate::logic::rule;
use crate::logic::status::announce::Announcement;

/// Subscribes to the shared CategorizationRule watch at once (spec changes, and demotions
/// learning records: its own status writes do not wake a rule); the returned future runs the
/// controller.
pub fn run(ctx: Arc<Context>, watches: &Watches) -> impl Future<Output = ()> + use<> {
    let rules = watches.rules.store();
    let changes = changes_of(watches.rules.subscribe(), rules.clone(), demotion_hash);
    // A Budget seen for the first time, or its spec changed (four eyes): its rules are judged
    // again at once, not at the next recheck (a rule judged before its Budget was in the cache
    // was judged with four eyes, the default).
    let of_budget = rules.clone();
    let budgets = spec_changes(watches.budgets.subscribe(), watches.budgets.store())
        .flat_map(move |budget| stream::iter(rules_of(&of_budget, &budget)));
    // Blessed rules act only while the admission policies are in force: look again when they are.
    let controller = Controller::for_shared_stream(changes, rules)
        .reconcile_on(budgets)
        .reconcile_all_on(ctx.admission.verified_again())
        .graceful_shutdown_on(ctx.shutdown.requested());
    super::drain_forgetting(
        controller.run(reconcile, super::error_policy, ctx.clone()),
        ctx,
    )
}

/// The rules of `budget`.
fn rules_of(
    store: &Store<CategorizationRule>,
    budget: &Budget,
) -> Vec<ObjectRef<CategorizationRule>> {
    let name = budget.name_any();
    store
        .state()
        .iter()
        .filter(|r| r.namespace() == budget.namespace() && r.spec.budget_ref.name == name)
        .map(|r| ObjectRef::from_obj(r.as_ref()))
        .collect()
}

async fn reconcile(rule: Arc<CategorizationRule>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _measure = super::measure::<CategorizationRule>(&ctx);
    let previous = rule.status.clone().unwrap_or_default();
    let admission = ctx.admission.verified();
    // Whether the blessing counts, asked afresh (and again below, while it is blessed).
    let authority = match (&admission, &rule.spec.blessing) {
        (Ok(()), Some(_)) => {
            // No Budget (yet): four eyes, the default.
            let namespace = rule.namespace().unwrap_or_default();
            let budget = ctx.budget(&namespace, &rule.spec.budget_ref.name);
            super::authority::blessing_counts(&ctx, &rule, budget.as_deref()).await?
        }
        _ => Ok(()),
    };
    let next = rule::status(
        &rule.spec,
        &previous,
        rule.metadata.generation,
        admission.as_ref().map(|_| ()).map_err(String::as_str),
        authority.as_ref().map(|_| ()).map_err(String::as_str),
        Timestamp::now(),
    );
    let announcement =
        rule::announcement(&previous, &next).map(|(warning, reason, note)| Announcement {
            warning,
            reason,
            note,
        });
    let written = rule::reconciler_part(&next);
    let changed = next != previous;
    summarize_and_patch(
        &ctx,
        rule.as_ref(),
        changed,
        &written,
        StatusWrite::Apply,
        announcement,
        "Assess",
    )
    .await?;
    // A blesser can lose the role: a blessed rule is checked again.
    Ok(match rule.spec.blessing {
        Some(_) => Action::requeue(RECHECK),
        None => Action::await_change(),
    })
}

/// How often a blessed rule's blessing is checked again with the authorizer.
const RECHECK: std::time::Duration = std::time::Duration::from_secs(60);

/// A hash of the demotion learning recorded, so that the rule is looked at again when it
/// changes.
fn demotion_hash(rule: &CategorizationRule) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let demotion = rule.status.as_ref().and_then(|s| s.demotion.as_ref());
    demotion
        .map(|d| (d.generation, &d.transaction_id, &d.at.0))
        .hash(&mut hasher);
    Some(hasher.finish())
}
