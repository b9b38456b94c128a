//! What `/agent suggest` and `/agent undo` propose and answer: a CategorizationPlan written as a
//! file of the config repository, the words of the pull request that adds it, and the table of
//! suggestions shown in the job's comment. Pure: the reading and the Gitea calls are in
//! `crate::agent::commands`.

use kube::api::ObjectMeta;

use super::classify::{Source, Suggestion};
use super::report::cell;
use super::state::truncate;
use crate::api::common::LocalRef;
use crate::api::plan::{Assignment, CategorizationPlan, CategorizationPlanSpec};
use crate::logic::values::{money, yaml_text};

/// Plan `name` of `namespace` as the YAML file committed to the config repository.
pub fn plan_yaml(
    name: &str,
    namespace: &str,
    spec: &CategorizationPlanSpec,
) -> Result<String, String> {
    let plan = CategorizationPlan {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        spec: spec.clone(),
        status: None,
    };
    yaml_text::to_string(&plan).map_err(|e| e.to_string())
}

/// Where plan `name` goes in the config repository.
pub fn plan_file(plans_dir: &str, name: &str) -> String {
    format!("{}/{name}.yaml", plans_dir.trim_end_matches('/'))
}

/// No Budget to suggest for.
pub fn no_budget(namespace: &str) -> String {
    format!("there is no Budget in namespace `{namespace}`")
}

/// A Budget whose mirror holds nothing yet: no history to suggest from.
pub fn not_synced(budget: &str) -> String {
    format!("Budget `{budget}` has not synced yet; try again once it is Ready")
}

/// Appended to the answer when the rules were left out (the admission policies are not in
/// force, so anyone could have blessed one).
pub fn no_rule_used(why: &str) -> String {
    format!("\n\nNo CategorizationRule was used: {why}")
}

/// The month a suggestion is for, as the answers say it (nothing for every month).
pub fn scope(month: Option<&str>) -> String {
    month.map(|m| format!(" in {m}")).unwrap_or_default()
}

/// The answer when nothing could be suggested; `unused` is [`no_rule_used`] or empty.
pub fn nothing_suggested(scope: &str, budget: &str, unused: &str) -> String {
    format!(
        "No suggestion: no Blessed CategorizationRule and no payee's history speaks for an uncategorized transaction{scope} of Budget `{budget}`.{unused}"
    )
}

/// The suggested plan's name: the month, if any, and the start of job `job`'s id.
pub fn suggestion_name(month: Option<&str>, job: &str) -> String {
    format!(
        "suggest-{}{}",
        month.map(|m| format!("{m}-")).unwrap_or_default(),
        short_id(job)
    )
}

fn short_id(job: &str) -> String {
    job.trim_start_matches("aj-").chars().take(8).collect()
}

/// The plan that assigns the suggested categories, asked for by `author`.
pub fn suggestion_spec(
    budget: &str,
    suggestions: &[Suggestion],
    author: &str,
    scope: &str,
) -> CategorizationPlanSpec {
    CategorizationPlanSpec {
        budget_ref: LocalRef {
            name: budget.to_owned(),
        },
        assignments: Some(
            suggestions
                .iter()
                .map(|s| Assignment {
                    transaction_id: s.transaction_id.clone(),
                    category_id: s.category_id.clone(),
                })
                .collect(),
        ),
        undo_of: None,
        description: Some(format!(
            "Suggested by /agent suggest from @{author} for {} uncategorized transaction(s){scope}.",
            suggestions.len()
        )),
    }
}

/// The suggestions as a Markdown table, amounts with the Budget's `digits`.
pub fn suggestion_table(suggestions: &[Suggestion], digits: u8) -> String {
    let mut t =
        String::from("| date | payee | amount | category | from |\n|---|---|---|---|---|\n");
    for s in suggestions {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            s.date,
            cell(&s.payee),
            money::to_decimal(s.amount, digits),
            cell(&s.category_name),
            cell(&from(s))
        ));
    }
    t
}

/// Where a suggestion comes from, in words.
fn from(s: &Suggestion) -> String {
    let history = format!("history: {}% ({} before)", s.confidence, s.support);
    match &s.source {
        Source::Rules(rules) => format!("rule {}", rules.join(", ")),
        Source::History => history,
        Source::HistoryRulesDisagree(rules) => {
            format!("{history}; rules {} disagree", rules.join(", "))
        }
    }
}

/// The title and body of the pull request that adds suggested plan `name`.
pub fn suggestion_pull_request(
    name: &str,
    budget: &str,
    count: usize,
    scope: &str,
    table: &str,
) -> (String, String) {
    let title = format!("Categorize {count} transaction(s){scope}");
    let body = format!(
        "CategorizationPlan `{name}` for Budget `{budget}`, suggested from past categories.\n\n{table}\nMerging applies it through the usual preview and approval."
    );
    (title, body)
}

/// The answer once the suggestion's pull request is open at `url`.
pub fn suggested(
    count: usize,
    scope: &str,
    budget: &str,
    url: &str,
    table: &str,
    unused: &str,
) -> String {
    format!(
        "Suggested categories for {count} transaction(s){scope} of Budget `{budget}`: {url}\n\n{table}{unused}"
    )
}

/// No CategorizationPlan by that name.
pub fn no_plan(plan: &str, namespace: &str) -> String {
    format!("there is no CategorizationPlan `{plan}` in namespace `{namespace}`")
}

/// An undo is not undone: its original is.
pub fn undo_of_undo(plan: &str) -> String {
    format!("`{plan}` is itself an undo; undo the original instead")
}

/// The name of the plan that undoes `plan`.
pub fn undo_name(plan: &str) -> String {
    format!("undo-{}", truncate(plan, 200))
        .trim_end_matches('…')
        .to_owned()
}

/// The plan that undoes `plan` of Budget `budget`, asked for by `author`.
pub fn undo_spec(budget: &LocalRef, plan: &str, author: &str) -> CategorizationPlanSpec {
    CategorizationPlanSpec {
        budget_ref: budget.clone(),
        assignments: None,
        undo_of: Some(plan.to_owned()),
        description: Some(format!(
            "Undo of `{plan}`, asked by @{author} through /agent undo."
        )),
    }
}

/// The title and body of the pull request that adds `name`, the undo of `plan`.
pub fn undo_pull_request(plan: &str, name: &str) -> (String, String) {
    let title = format!("Undo CategorizationPlan {plan}");
    let body = format!(
        "CategorizationPlan `{name}` with `undoOf: {plan}`. Merging previews the revert and asks for approval."
    );
    (title, body)
}

/// The answer once the undo's pull request is open at `url`.
pub fn undone(url: &str, plan: &str) -> String {
    format!("Opened {url} to undo CategorizationPlan `{plan}`.")
}

#[cfg(test)]
#[path = "plan_pull_request_tests.rs"]
mod tests;
