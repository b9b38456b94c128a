//! The autopilot's pass for one Budget (run by the per-Budget rule controller in
//! [`super::learning`]): reads the Blessed rules and the mirror, decides with
//! [`crate::logic::budget::autopilot`], counts the plan in `status.autopilot` first, then makes it. The
//! plan is an ordinary CategorizationPlan: the plan reconciler previews it and the Budget's
//! approval policy runs it, asks a person, or blocks it. Nothing here writes to YNAB.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{Context, Error};
use crate::api::autopilot::{AUTOPILOT_LABEL, AUTOPILOT_PROPOSER};
use crate::api::budget::Budget;
use crate::api::common::LocalRef;
use crate::api::common::PROPOSED_BY;
use crate::api::plan::{CategorizationPlan, CategorizationPlanSpec};
use crate::api::rule::CategorizationRule;
use crate::api::transaction::Transaction;
use crate::k8s::status;
use crate::logic::approval::lineage;
use crate::logic::budget::autopilot::{self, Limits};
use crate::logic::rule::RuleBook;
use crate::logic::values::money;

/// What one pass reads, for one Budget.
pub struct Inputs<'a> {
    pub budget: &'a Budget,
    pub plans: &'a [Arc<CategorizationPlan>],
    pub transactions: &'a [Arc<Transaction>],
    pub rules: &'a [Arc<CategorizationRule>],
}

/// One pass: nothing unless `spec.autopilot.enabled` and the admission policies are in force
/// (without them nobody's blessing can be trusted).
pub async fn pass(ctx: &Context, input: Inputs<'_>) -> Result<(), Error> {
    let budget = input.budget;
    let spec = &budget.spec.autopilot;
    if !spec.enabled || budget.spec.suspend || ctx.admission.verified().is_err() {
        return Ok(());
    }
    let namespace = budget.namespace().unwrap_or_default();
    let name = budget.name_any();
    let now = Timestamp::now();
    let day = now.strftime("%Y-%m-%d").to_string();
    let previous = budget.status.as_ref().and_then(|s| s.autopilot.as_ref());
    let plans_api = Api::<CategorizationPlan>::namespaced(ctx.client.clone(), &namespace);
    // A plan made by the last pass must be seen before deciding again, or its transactions
    // would be proposed twice.
    for made in previous
        .filter(|p| p.day == day)
        .map(|p| p.plans.as_slice())
        .unwrap_or_default()
    {
        let cached = input.plans.iter().any(|p| p.name_any() == *made);
        if !cached && plans_api.get_opt(made).await?.is_some() {
            return Err(Error::CacheBehind(format!("CategorizationPlan {made}")));
        }
    }
    let held = autopilot::held(
        input.plans.iter().map(AsRef::as_ref),
        input.transactions.iter().map(AsRef::as_ref),
    );
    let book = RuleBook::of_budget(input.rules.iter().map(AsRef::as_ref), &namespace, &name);
    let (candidates, digits) = {
        let slot = ctx.budget_links.mirror(&namespace, &name);
        let slot = slot.state.read().await;
        let mirror = &slot.mirror;
        if !slot.synced_for(&budget.spec.plan_id) {
            return Ok(());
        }
        let candidates = autopilot::candidates(mirror, &book, &held);
        let digits = mirror.decimal_digits();
        (candidates, digits)
    };
    let limits = Limits {
        transactions: spec.max_transactions_per_day,
        // An amount that cannot be read allows nothing (fail closed).
        amount: money::parse_decimal(&spec.max_amount_per_day.0).unwrap_or(0),
    };
    // Random: a plan made under the next name before the autopilot makes it would be its.
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let next = autopilot::pass(&name, &day, &nonce, previous, limits, digits, candidates);
    if previous != Some(&next.status) {
        // Counted before the plan is made: a crash between the two counts a plan never made.
        status::apply_as(
            &ctx.client,
            budget,
            &json!({ "autopilot": next.status }),
            status::AUTOPILOT_FIELD_MANAGER,
            true,
        )
        .await?;
        for (warning, reason, note) in autopilot::announcements(previous, &next.status) {
            ctx.events
                .publish(budget, warning, reason, "Autopilot", note)
                .await;
        }
    }
    if let Some(plan) = next.plan {
        // Whoever blessed the rules behind its lines shaped it: none of them approves it.
        let mut lineage = vec![AUTOPILOT_PROPOSER.to_owned()];
        lineage::extend(
            &mut lineage,
            input
                .rules
                .iter()
                .filter(|r| plan.rules.contains(&r.name_any()))
                .filter_map(|r| r.spec.blessing.as_ref().map(|b| b.by.clone())),
        );
        make_plan(ctx, &plans_api, budget, plan, &lineage).await?;
    }
    Ok(())
}

async fn make_plan(
    ctx: &Context,
    api: &Api<CategorizationPlan>,
    budget: &Budget,
    plan: autopilot::NewPlan,
    lineage: &[String],
) -> Result<(), Error> {
    let name = budget.name_any();
    let object = CategorizationPlan {
        metadata: ObjectMeta {
            name: Some(plan.name.clone()),
            labels: Some(
                [
                    (AUTOPILOT_LABEL.to_owned(), name.clone()),
                    (
                        "app.kubernetes.io/managed-by".to_owned(),
                        "ledgerops".to_owned(),
                    ),
                ]
                .into(),
            ),
            annotations: Some([(PROPOSED_BY.to_owned(), lineage::render(lineage))].into()),
            ..ObjectMeta::default()
        },
        spec: CategorizationPlanSpec {
            budget_ref: LocalRef { name },
            assignments: Some(plan.assignments),
            undo_of: None,
            description: Some(plan.description),
        },
        status: None,
    };
    let params = PostParams {
        field_manager: Some(status::AUTOPILOT_FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    match api.create(&params, &object).await {
        Ok(created) => {
            let n = created.spec.assignments.as_ref().map_or(0, Vec::len);
            ctx.events
                .publish(
                    budget,
                    false,
                    "AutopilotPlanned",
                    "Autopilot",
                    format!(
                        "made CategorizationPlan {} for {n} transaction(s) from Blessed rules; spec.approval decides whether it runs or asks",
                        plan.name
                    ),
                )
                .await;
            Ok(())
        }
        // Made by a pass on another replica, or before a crash.
        Err(e) if crate::k8s::is_conflict(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
