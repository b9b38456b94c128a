//! What `/agent rules` answers: the namespace's CategorizationRules, Candidates first (the most
//! confirmed on top: the ones worth blessing), then Blessed and Demoted ones, with what people's
//! decisions said about each; and the words of the pull request that proposes a rule. Built
//! from the rules as read; pure.

use k8s_openapi::jiff::Timestamp;

use super::report::{cell, cell_code};
use crate::api::rule::{CategorizationRule, RulePhase};
use crate::logic::rule::{Matcher, demotion_in_force, standing};

/// How many rules of each phase the answer lists.
pub const LISTED: usize = 30;

/// The report; `category` names a category id of a Budget, when its mirror knows it.
pub fn rules_report(
    rules: &[&CategorizationRule],
    namespace: &str,
    category: &dyn Fn(&str, &str) -> Option<String>,
) -> String {
    let mut rows: Vec<Row> = rules.iter().map(|r| Row::of(r)).collect();
    rows.sort_by(|a, b| {
        (a.order(), b.confirmations, a.corrections, &a.name).cmp(&(
            b.order(),
            a.confirmations,
            b.corrections,
            &b.name,
        ))
    });
    let mut out = String::new();
    for (phase, title) in [
        (
            RulePhase::Candidate,
            "Candidates (learned or written, not blessed: they never act)",
        ),
        (
            RulePhase::Blessed,
            "Blessed (used by `/agent suggest` before the payee's history)",
        ),
        (
            RulePhase::Demoted,
            "Demoted (a person changed by hand what ledgerops wrote under them)",
        ),
    ] {
        let of_phase: Vec<&Row> = rows.iter().filter(|r| r.phase == phase).collect();
        out.push_str(&format!("### {title}: {}\n\n", of_phase.len()));
        if of_phase.is_empty() {
            out.push_str("None.\n\n");
            continue;
        }
        out.push_str("| rule | budget | payee | category | confirmations | corrections | last used |\n|---|---|---|---|---|---|---|\n");
        for r in of_phase.iter().take(LISTED) {
            let name = category(&r.budget, &r.category_id)
                .map(|n| format!("{} ({})", cell(&n), cell_code(&r.category_id)))
                .unwrap_or_else(|| cell_code(&r.category_id));
            out.push_str(&format!(
                "| {} | {} | {} | {name} | {} | {} | {} |\n",
                cell_code(&r.name),
                cell_code(&r.budget),
                cell(&r.payee),
                r.confirmations,
                r.corrections,
                r.last_used.as_deref().unwrap_or("never"),
            ));
        }
        if of_phase.len() > LISTED {
            out.push_str(&format!(
                "\n…and {} more: `kubectl get categorizationrules -n {namespace}` lists them all.\n",
                of_phase.len() - LISTED
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "To bless a rule in your own name: `kubectl patch categorizationrule <rule> -n {namespace} --type=merge -p '{{\"spec\":{{\"blessing\":{{\"by\":\"<you>\",\"at\":\"<now, RFC 3339>\"}}}}}}'`, or merge it into the config repository."
    ));
    out
}

/// One rule, as the report shows it.
struct Row {
    name: String,
    budget: String,
    phase: RulePhase,
    payee: String,
    category_id: String,
    confirmations: u32,
    corrections: u32,
    last_used: Option<String>,
}

impl Row {
    fn of(r: &CategorizationRule) -> Self {
        let status = r.status.as_ref();
        let learning = status.and_then(|s| s.learning.as_ref());
        let demotion = demotion_in_force(status, r.metadata.generation);
        Self {
            name: r.metadata.name.clone().unwrap_or_default(),
            budget: r.spec.budget_ref.name.clone(),
            // Where the rule stands, from its spec and the demotion learning recorded.
            phase: standing(&r.spec, demotion, Ok(()), Ok(())).phase,
            payee: Matcher::new(&r.spec)
                .map(|m| m.payee_line())
                .unwrap_or_else(|e| format!("invalid: {e}")),
            category_id: r.spec.category_id.clone(),
            confirmations: learning.map_or(0, |l| l.confirmations),
            corrections: learning.map_or(0, |l| l.corrections),
            last_used: learning
                .and_then(|l| l.last_used.as_ref())
                .map(|t| t.0.strftime("%Y-%m-%d").to_string()),
        }
    }

    fn order(&self) -> u8 {
        match self.phase {
            RulePhase::Candidate => 0,
            RulePhase::Blessed => 1,
            RulePhase::Demoted => 2,
        }
    }
}

/// The pull request's title and body; `category` is the category's name, when known.
pub fn proposal_words(
    rule: &CategorizationRule,
    repo: &str,
    category: Option<&str>,
    now: Timestamp,
) -> (String, String) {
    let name = rule.metadata.name.as_deref().unwrap_or_default();
    let payee = Matcher::new(&rule.spec)
        .map(|m| m.payee_line())
        .unwrap_or_default();
    let id = &rule.spec.category_id;
    let to = category.map_or_else(
        || cell_code(id),
        |n| format!("{} ({})", cell(n), cell_code(id)),
    );
    let learning = rule
        .status
        .as_ref()
        .and_then(|s| s.learning.clone())
        .unwrap_or_default();
    let title = format!("Bless rule {name}: {payee} → {}", category.unwrap_or(id));
    let mut body = format!(
        "ledgerops learned CategorizationRule {} of Budget {} from {} approved decision(s), none corrected: payee {} → {to}.\n\nMerging this pull request blesses it as `configrepo:{repo}`: it then speaks for matching transactions (`/agent suggest`, and the autopilot where a Budget turns it on). Close it to leave the rule a Candidate.\n\n| source | transaction | by | when |\n|---|---|---|---|\n",
        cell_code(name),
        cell_code(&rule.spec.budget_ref.name),
        learning.confirmations,
        cell(&payee),
    );
    for e in &learning.evidence {
        body.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell_code(&e.source),
            cell_code(&e.transaction_id),
            cell(&e.by),
            e.at.0.strftime("%Y-%m-%d")
        ));
    }
    body.push_str(&format!(
        "\nProposed {}.",
        now.strftime("%Y-%m-%d %H:%M UTC")
    ));
    (title, body)
}

#[cfg(test)]
#[path = "rules_report_tests.rs"]
mod tests;
