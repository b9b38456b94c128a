//! What `show`, `diff`, `approve` and `undo` print about a request or a plan: the heading
//! lines, then the preview block.

use k8s_openapi::jiff::Timestamp;
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::common::{CategoryChange, Review};
use ledgerops::api::plan::CategorizationPlan;
use ledgerops::logic::values::money;

use super::preview;
use super::queue::subject;
use super::review;
use super::table::Style;
use super::time;

/// A request and its preview; `plan` (its subject, when a plan) adds the unchanged count and
/// conflicts.
pub fn request(
    r: &ApprovalRequest,
    plan: Option<&CategorizationPlan>,
    now: Timestamp,
    style: Style,
) -> String {
    let phase = r
        .status
        .as_ref()
        .and_then(|s| s.phase)
        .map(|p| format!("{p:?}"))
        .unwrap_or_else(|| "not confirmed yet".into());
    let escalate = if r.spec.escalate_to.is_empty() {
        "nobody".to_owned()
    } else {
        r.spec.escalate_to.join(", ")
    };
    let mut out = format!(
        "{} {} ({phase}, expires {}, then escalates to {escalate})\n",
        style.bold("ApprovalRequest"),
        r.metadata.name.as_deref().unwrap_or_default(),
        time::until(r.spec.expires_at.0, now),
    );
    out.push_str(&format!(
        "Subject: {}   Budget: {}\nSummary: {}\nAsked because: {}\n",
        subject(r),
        r.spec.budget_ref.name,
        r.spec.summary,
        r.spec.reason
    ));
    if let Some(d) = &r.spec.decision {
        out.push_str(&format!("Decided: {:?} by {}\n", d.verdict, d.by));
    }
    out.push_str(&format!("Preview hash: {}\n\n", r.spec.preview_hash));
    let preview = plan.and_then(|p| p.status.as_ref()?.preview.as_ref());
    let unchanged = preview
        .filter(|p| p.hash == r.spec.preview_hash)
        .map(|p| (p.unchanged_count, p.conflicts.as_slice()));
    out.push_str(&changes(
        r.spec.review.as_ref(),
        &r.spec.changes,
        r.spec.change_count,
        unchanged.map(|u| u.0),
        unchanged.map(|u| u.1).unwrap_or_default(),
        style,
    ));
    out
}

/// The review first (when ledgerops computed one), then every listed line of a short proposal,
/// or only the counts of a long one, whose groups the review showed.
fn changes(
    review: Option<&Review>,
    listed: &[CategoryChange],
    change_count: u32,
    unchanged: Option<u32>,
    conflicts: &[String],
    style: Style,
) -> String {
    let grouped = review::grouped(review, change_count);
    let mut out = review.map_or_else(String::new, |r| review::block(r, grouped, style));
    match review.filter(|_| grouped) {
        // The groups stand for the lines; the totals are the review's, over every line.
        Some(r) => {
            out.push_str(&format!(
                "The first {} lines are listed by kubectl ledgerops show NAME -o yaml.\n",
                listed.len()
            ));
            let moved = r
                .categories
                .iter()
                .filter_map(|c| money::parse_decimal(&c.total.0).ok())
                .fold(0i64, i64::saturating_add);
            let moved = money::to_decimal(moved, 2);
            out.push_str(&preview::counts(
                change_count,
                &moved,
                unchanged,
                conflicts,
                style,
            ));
        }
        None => out.push_str(&preview::block(
            listed,
            change_count,
            unchanged,
            conflicts,
            style,
        )),
    }
    out
}

/// A plan's heading and its current preview (`None` with why when it has none).
pub fn plan(p: &CategorizationPlan, style: Style) -> String {
    let status = p.status.as_ref();
    let phase = status
        .and_then(|s| s.phase)
        .map(|ph| format!("{ph:?}"))
        .unwrap_or_else(|| "not reconciled yet".into());
    let mut out = format!(
        "{} {} ({phase})   Budget: {}\n",
        style.bold("CategorizationPlan"),
        p.metadata.name.as_deref().unwrap_or_default(),
        p.spec.budget_ref.name
    );
    if let Some(of) = &p.spec.undo_of {
        out.push_str(&format!("Undoes: {of}\n"));
    }
    if let Some(s) = status {
        if let Some(r) = &s.approval_request {
            out.push_str(&format!("ApprovalRequest: {r}\n"));
        }
        if let Some(op) = &s.operation_id {
            out.push_str(&format!("Operation: {op}\n"));
        }
        for c in s
            .conditions
            .iter()
            .filter(|c| c.status == "False" || c.type_ == "Blocked")
        {
            out.push_str(&format!("{} {}: {}\n", c.type_, c.status, c.message));
        }
    }
    match status.and_then(|s| s.preview.as_ref()) {
        Some(pv) => {
            out.push_str(&format!(
                "Preview hash: {} (YNAB server knowledge {})\n\n",
                pv.hash, pv.server_knowledge
            ));
            out.push_str(&changes(
                pv.review.as_ref(),
                &pv.changes,
                pv.change_count,
                Some(pv.unchanged_count),
                &pv.conflicts,
                style,
            ));
        }
        None => out.push_str("No preview yet.\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::queue::tests::{NOW, at, request as pending};
    use ledgerops::api::approval::ApprovalPhase;
    use ledgerops::api::plan::{CategorizationPlanStatus, PlanPhase, Preview};
    use serde_json::json;

    const PLAIN: Style = Style { colour: false };

    fn plan_with(hash: &str) -> CategorizationPlan {
        let mut p: CategorizationPlan = serde_json::from_value(json!({
            "apiVersion": "ledgerops.dev/v1alpha1", "kind": "CategorizationPlan",
            "metadata": {"name": "undo-september"},
            "spec": {"budgetRef": {"name": "household"}, "undoOf": "september"}
        }))
        .unwrap();
        p.status = Some(CategorizationPlanStatus {
            phase: Some(PlanPhase::AwaitingApproval),
            approval_request: Some("undo-september-1".into()),
            preview: Some(Preview {
                hash: hash.into(),
                server_knowledge: 7,
                change_count: 0,
                changes: vec![],
                unchanged_count: 3,
                conflicts: vec!["tx-049".into()],
                review: None,
            }),
            ..Default::default()
        });
        p
    }

    #[test]
    fn a_request_shows_who_is_asked_what_and_the_plan_counts_of_its_own_preview() {
        let r = pending(
            "ns",
            "september-1",
            10,
            86_000,
            Some(ApprovalPhase::Pending),
        );
        let cases = [
            (plan_with("sha256:abc"), true),
            (plan_with("sha256:other"), false),
        ];
        for (p, unchanged) in cases {
            let text = request(&r, Some(&p), at(NOW), PLAIN);
            for want in [
                "ApprovalRequest september-1 (Pending, expires in 23h, then escalates to finance-manager)",
                "Subject: CategorizationPlan/september   Budget: household",
                "Preview hash: sha256:abc",
                "(uncategorized) → Groceries",
                "2 to change, 53.40 moved",
            ] {
                assert!(text.contains(want), "{want:?} in {text}");
            }
            assert_eq!(text.contains("3 unchanged"), unchanged, "{text}");
        }
    }

    #[test]
    fn a_plan_shows_its_request_undo_and_conflicts() {
        let text = plan(&plan_with("sha256:abc"), PLAIN);
        for want in [
            "CategorizationPlan undo-september (AwaitingApproval)   Budget: household",
            "Undoes: september",
            "ApprovalRequest: undo-september-1",
            "0 to change, 0.00 moved, 3 unchanged",
            "1 conflicts: changed in YNAB since and left alone: tx-049",
        ] {
            assert!(text.contains(want), "{want:?} in {text}");
        }
    }
}
