//! What `/agent status` answers: waiting approvals oldest first, Transactions that need a person,
//! and the health of each Budget. Built from the resources as read; pure.

use k8s_openapi::jiff::Timestamp;

use super::escape;
use crate::api::approval::{ApprovalPhase, ApprovalRequest};
use crate::api::budget::Budget;
use crate::api::transaction::{Transaction, TransactionPhase};
use crate::logic::status::conditions;

/// Untrusted text in a table cell or a sentence: one line, short, and escaped (no Markdown,
/// HTML, link, mention or cell break; see [`escape::text`]).
pub fn cell(text: &str) -> String {
    escape::text(&super::state::truncate(text.trim(), 120))
}

/// An untrusted name in a code span inside a table cell (`|` still ends a cell there unless
/// backslash-escaped).
pub fn cell_code(text: &str) -> String {
    escape::code(&super::state::truncate(text.trim(), 120)).replace('|', "\\|")
}

/// Whether a person still has to decide `r`.
pub fn is_waiting(r: &ApprovalRequest) -> bool {
    r.spec.decision.is_none()
        && matches!(
            r.status.as_ref().and_then(|s| s.phase),
            None | Some(ApprovalPhase::Pending)
        )
}

fn created(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Timestamp {
    meta.creation_timestamp
        .as_ref()
        .map(|t| t.0)
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

fn name(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or_default()
}

/// Why a Transaction needs a person, if it does.
fn attention(t: &Transaction) -> Option<(String, String)> {
    let status = t.status.as_ref()?;
    for type_ in ["Diverged", "Blocked"] {
        if let Some(c) = conditions::get(&status.conditions, type_)
            && c.status == "True"
        {
            return Some((type_.to_owned(), c.message.clone()));
        }
    }
    match status.phase {
        Some(TransactionPhase::Diverged) => Some(("Diverged".into(), String::new())),
        Some(TransactionPhase::Blocked) => Some(("Blocked".into(), String::new())),
        _ => None,
    }
}

/// The status report.
pub fn status_report(
    approvals: &[ApprovalRequest],
    transactions: &[Transaction],
    budgets: &[Budget],
) -> String {
    let mut out = String::new();
    let mut waiting: Vec<&ApprovalRequest> = approvals.iter().filter(|r| is_waiting(r)).collect();
    waiting.sort_by(|a, b| {
        (created(&a.metadata), name(&a.metadata)).cmp(&(created(&b.metadata), name(&b.metadata)))
    });
    out.push_str(&format!("### Waiting approvals ({})\n\n", waiting.len()));
    if waiting.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| approval | subject | summary | expires |\n|---|---|---|---|\n");
        for r in &waiting {
            out.push_str(&format!(
                "| {} | {:?} {} | {} | {} |\n",
                cell_code(name(&r.metadata)),
                r.spec.subject.kind,
                cell_code(&r.spec.subject.name),
                cell(&r.spec.summary),
                r.spec.expires_at.0
            ));
        }
        out.push_str("\nAnswer with `/agent approve <approval> [comment]` or `/agent reject <approval> <reason>`.\n");
    }

    let mut flagged: Vec<(&Transaction, String, String)> = transactions
        .iter()
        .filter_map(|t| attention(t).map(|(kind, msg)| (t, kind, msg)))
        .collect();
    flagged.sort_by(|a, b| name(&a.0.metadata).cmp(name(&b.0.metadata)));
    out.push_str(&format!(
        "\n### Diverged or Blocked Transactions ({})\n\n",
        flagged.len()
    ));
    if flagged.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| transaction | state | why |\n|---|---|---|\n");
        for (t, kind, msg) in &flagged {
            out.push_str(&format!(
                "| {} | {kind} | {} |\n",
                cell_code(name(&t.metadata)),
                cell(msg)
            ));
        }
    }

    let mut budgets: Vec<&Budget> = budgets.iter().collect();
    budgets.sort_by(|a, b| name(&a.metadata).cmp(name(&b.metadata)));
    out.push_str(&format!("\n### Budgets ({})\n\n", budgets.len()));
    if budgets.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| budget | phase | ready | last sync |\n|---|---|---|---|\n");
        for b in budgets {
            let status = b.status.clone().unwrap_or_default();
            let ready = conditions::get(&status.conditions, conditions::READY)
                .map(|c| format!("{} ({}) {}", c.status, c.reason, cell(&c.message)))
                .unwrap_or_else(|| "unknown".into());
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                cell_code(name(&b.metadata)),
                status
                    .phase
                    .map(|p| format!("{p:?}"))
                    .unwrap_or_else(|| "Pending".into()),
                ready.trim(),
                status
                    .last_sync_time
                    .map(|t| t.0.to_string())
                    .unwrap_or_else(|| "never".into())
            ));
        }
    }
    out
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
