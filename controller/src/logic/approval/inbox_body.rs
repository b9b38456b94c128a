//! What the inbox issue of a request says: while it waits, the one-screen review (the lines to
//! look at first and what the rules disagree on, then the money per category and the groups, or
//! every line of a short change), when it expires and the exact words to answer with; once it
//! ended, the outcome on top (who decided, what was written, what the subject's status now
//! says) and the issue closed. Every piece of outside text (payees, category names, reasons,
//! messages) is escaped: it stays text, never a mention, link or markup.

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use super::inbox::marker;
use crate::api::approval::{ApprovalPhase, ApprovalRequest, SubjectKind, Verdict};
use crate::api::common::{CategoryChange, Review, ReviewGroup};
use crate::logic::job::escape;
use crate::logic::job::report::{cell, cell_code};
use crate::logic::values::money;

/// Up to this many changes every line is listed; beyond, the groups by payee are.
const SHORT: usize = 20;

/// What the subject (plan or Transaction) says now, as its status reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectState {
    /// Its phase, such as `Applied`.
    pub phase: String,
    /// Its Ready condition's message; empty when it has none.
    pub message: String,
}

/// Everything the issue is made from.
pub struct View<'a> {
    /// The request that speaks for the issue (the subject's newest).
    pub request: &'a ApprovalRequest,
    pub subject: Option<SubjectState>,
    /// The logins asked to decide (already checked with the authorizer).
    pub assignees: Vec<String>,
    /// The Budget currency's decimals, for the total.
    pub decimal_digits: u8,
}

/// The issue as it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueState {
    pub title: String,
    pub body: String,
    pub open: bool,
    /// Who it is assigned to; nobody once it ended.
    pub assignees: Vec<String>,
}

/// Where a request ended, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Approved,
    Written,
    NotWritten,
    Rejected,
    Expired,
    Replaced,
}

fn end(r: &ApprovalRequest) -> Option<End> {
    let status = r.status.as_ref();
    let verdict = r.spec.decision.as_ref().map(|d| d.verdict);
    match (status.and_then(|s| s.phase), verdict) {
        (Some(ApprovalPhase::Applied), _) => {
            let written = status
                .and_then(|s| s.used.as_ref())
                .is_some_and(|u| u.written);
            Some(if written {
                End::Written
            } else {
                End::NotWritten
            })
        }
        (Some(ApprovalPhase::Rejected), _) | (_, Some(Verdict::Reject)) => Some(End::Rejected),
        (Some(ApprovalPhase::Approved), _) | (_, Some(Verdict::Approve)) => Some(End::Approved),
        (Some(ApprovalPhase::Expired), _) => Some(End::Expired),
        (Some(ApprovalPhase::Stale | ApprovalPhase::Ignored), _) => Some(End::Replaced),
        (None | Some(ApprovalPhase::Pending), None) => None,
    }
}

pub(super) fn kind(r: &ApprovalRequest) -> &'static str {
    match r.spec.subject.kind {
        SubjectKind::CategorizationPlan => "CategorizationPlan",
        SubjectKind::Transaction => "Transaction",
    }
}

/// The money the request moves, sign ignored: the review's totals per category (which count
/// every line), else the listed lines.
pub(super) fn total(r: &ApprovalRequest, digits: u8) -> String {
    let amounts: Vec<&str> = match &r.spec.review {
        Some(review) if !review.categories.is_empty() => review
            .categories
            .iter()
            .map(|g| g.total.0.as_str())
            .collect(),
        _ => r.spec.changes.iter().map(|c| c.amount.0.as_str()).collect(),
    };
    let sum: i64 = amounts
        .iter()
        .filter_map(|a| money::parse_decimal(a).ok())
        .map(i64::abs)
        .fold(0, i64::saturating_add);
    money::to_decimal(sum, digits)
}

/// The issue for `view`.
pub fn issue(view: &View) -> IssueState {
    let r = view.request;
    let name = r.name_any();
    let what = format!(
        "{} {}: {} change(s), {}",
        kind(r),
        r.spec.subject.name,
        r.spec.change_count,
        total(r, view.decimal_digits)
    );
    let ended = end(r);
    let title = match ended {
        None => format!("Decide: {what} (Budget {})", r.spec.budget_ref.name),
        Some(End::Approved) => format!("Approved: {what}"),
        Some(End::Written) => format!("Approved and written: {what}"),
        Some(End::NotWritten) => format!("Approved, not written: {what}"),
        Some(End::Rejected) => format!("Rejected: {what}"),
        Some(End::Expired) => format!("Expired unanswered: {what}"),
        Some(End::Replaced) => format!("No longer asked: {what}"),
    };
    let mut body = marker(super::inbox::subject_uid(r).unwrap_or_default());
    body.push('\n');
    match ended {
        None => body.push_str(&waiting(view)),
        Some(e) => body.push_str(&outcome(view, e)),
    }
    body.push_str(&format!(
        "\n{} {} of Budget {} in namespace {} asks: {}\n\nWhy a person is asked: {}\n\nProposed by: {}\n\n",
        kind(r),
        cell_code(&r.spec.subject.name),
        cell_code(&r.spec.budget_ref.name),
        cell_code(&r.namespace().unwrap_or_default()),
        cell(&r.spec.summary),
        cell(&r.spec.reason),
        if r.spec.proposed_by.is_empty() {
            "(nobody recorded)".to_owned()
        } else {
            r.spec.proposed_by.iter().map(|p| cell_code(p)).collect::<Vec<_>>().join(", ")
        },
    ));
    body.push_str(&review(r));
    if ended.is_none() {
        body.push_str(&answer(&name));
    }
    IssueState {
        title: crate::logic::job::state::truncate(&title, 250),
        body,
        open: ended.is_none(),
        assignees: if ended.is_none() {
            view.assignees.clone()
        } else {
            Vec::new()
        },
    }
}

fn waiting(view: &View) -> String {
    let r = view.request;
    let asked = if view.assignees.is_empty() {
        "Nobody mapped in the Budget's `approval.giteaUsers` may decide it: a person with `approve` decides with `kubectl ledgerops approve`.".to_owned()
    } else {
        let who: Vec<String> = view.assignees.iter().map(|l| escape::mention(l)).collect();
        format!("Asked: {}.", who.join(", "))
    };
    format!(
        "**Waiting for a decision** on ApprovalRequest {} until {} (then it expires and nothing is written). {asked}\n",
        cell_code(&r.name_any()),
        r.spec.expires_at.0.strftime("%Y-%m-%d %H:%M UTC"),
    )
}

fn outcome(view: &View, e: End) -> String {
    let r = view.request;
    let decision = r.spec.decision.as_ref();
    let by = decision.map_or_else(|| "someone".to_owned(), |d| cell_code(&d.by));
    let when = |t: Option<Timestamp>| {
        t.map_or_else(String::new, |t| {
            format!(" at {}", t.strftime("%Y-%m-%d %H:%M UTC"))
        })
    };
    let decided_at = when(
        r.status
            .as_ref()
            .and_then(|s| s.decided_at.as_ref())
            .map(|t| t.0),
    );
    let said = decision
        .and_then(|d| d.comment.as_deref())
        .filter(|c| !c.trim().is_empty())
        .map(|c| format!(" They said: {}", cell(c)))
        .unwrap_or_default();
    let edited = if decision.and_then(|d| d.edits.as_ref()).is_some() {
        " with edits (what was written is the edited preview)"
    } else {
        ""
    };
    let mut out = match e {
        End::Approved => format!(
            "**Approved** by {by}{decided_at}{edited}; the write follows once the preview still holds.{said}\n"
        ),
        End::Written => {
            format!("**Approved** by {by}{decided_at}{edited}, and **written to YNAB**.{said}\n")
        }
        End::NotWritten => format!(
            "**Approved** by {by}{decided_at}{edited}, but **nothing was written**: YNAB or the {} changed since the preview, and the approval covers only what it showed.{said}\n",
            kind(r)
        ),
        End::Rejected => format!("**Rejected** by {by}{decided_at}; nothing is written.{said}\n"),
        End::Expired => format!(
            "**Expired** at {} without a decision; nothing was written. To apply it, change the {} (or ask for a new preview) and decide the new request in time.\n",
            r.spec.expires_at.0.strftime("%Y-%m-%d %H:%M UTC"),
            kind(r)
        ),
        End::Replaced => format!(
            "**No longer asked**: the {} or YNAB changed since this preview, and no decision is needed now.\n",
            kind(r)
        ),
    };
    if let Some(s) = &view.subject {
        out.push_str(&format!(
            "\n{} {} is now **{}**{}\n",
            kind(r),
            cell_code(&r.spec.subject.name),
            cell(&s.phase),
            if s.message.trim().is_empty() {
                ".".to_owned()
            } else {
                format!(": {}", cell(&s.message))
            }
        ));
    }
    out
}

fn category(name: &Option<String>, id: &Option<String>) -> String {
    cell(name.as_deref().or(id.as_deref()).unwrap_or("uncategorized"))
}

/// One change as the cells of a Markdown table row: transaction, date, payee, amount, from, to.
pub fn line(c: &CategoryChange) -> Vec<String> {
    vec![
        cell_code(&c.transaction_id),
        cell(&c.date),
        cell(c.payee.as_deref().unwrap_or_default()),
        cell(&c.amount.0),
        category(&c.from_category, &c.from_category_id),
        category(&c.to_category, &c.to_category_id),
    ]
}

fn table(out: &mut String, title: &str, headers: &[&str], rows: Vec<Vec<String>>) {
    if rows.is_empty() {
        return;
    }
    out.push_str(&format!(
        "### {title}\n\n| {} |\n|{}\n",
        headers.join(" | "),
        "---|".repeat(headers.len())
    ));
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.push('\n');
}

fn groups(groups: &[ReviewGroup], with_payee: bool) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            let mut row = vec![
                g.category
                    .as_deref()
                    .map_or_else(|| "(uncategorized)".to_owned(), cell),
                g.count.to_string(),
                cell(&g.total.0),
            ];
            if with_payee {
                let payee = g.payee.as_deref();
                row.insert(0, payee.map_or_else(|| "(other payees)".to_owned(), cell));
            }
            row
        })
        .collect()
}

/// The review: exceptions and questions first, then the money per category, then the groups by
/// payee (a long change) or every line (a short one).
fn review(r: &ApprovalRequest) -> String {
    let mut out = String::new();
    let empty = Review::default();
    let review = r.spec.review.as_ref().unwrap_or(&empty);
    let exceptions = review.exceptions.iter().map(|e| {
        let mut row = line(&e.change);
        row.push(cell(&e.why));
        row
    });
    let all = review.exception_count.max(review.exceptions.len() as u32);
    table(
        &mut out,
        &format!(
            "Look at these first ({} of {all} listed)",
            review.exceptions.len()
        ),
        &[
            "transaction",
            "date",
            "payee",
            "amount",
            "from",
            "to",
            "why",
        ],
        exceptions.collect(),
    );
    let questions = review.questions.iter().map(|q| {
        let mut row = line(&q.change);
        row[5] = q
            .categories
            .iter()
            .map(|c| cell(c))
            .collect::<Vec<_>>()
            .join(" or ");
        row.push(
            q.rules
                .iter()
                .map(|c| cell_code(c))
                .collect::<Vec<_>>()
                .join(", "),
        );
        row
    });
    table(
        &mut out,
        "The rules disagree on (answer with `except TRANSACTION=CATEGORY`, or leave them for later)",
        &[
            "transaction",
            "date",
            "payee",
            "amount",
            "from",
            "categories",
            "rules",
        ],
        questions.collect(),
    );
    table(
        &mut out,
        "By category",
        &["category", "lines", "total"],
        groups(&review.categories, false),
    );
    if (r.spec.change_count as usize) > SHORT && !review.groups.is_empty() {
        table(
            &mut out,
            "By payee",
            &["payee", "category", "lines", "total"],
            groups(&review.groups, true),
        );
    } else {
        table(
            &mut out,
            "The changes",
            &["transaction", "date", "payee", "amount", "from", "to"],
            r.spec.changes.iter().map(line).collect(),
        );
    }
    out
}

/// How to answer request `name` (a Kubernetes object name: nothing in it is Markdown).
fn answer(name: &str) -> String {
    format!(
        "### How to answer\n\nComment here (your Gitea login must be mapped in the Budget's `approval.giteaUsers` to a user who holds `approve`, and be no proposer):\n\n- `/agent approve {name}` approves exactly this preview;\n- `/agent approve {name} except tx-1, tx-2=Groceries` approves it without tx-1 and with tx-2 in Groceries;\n- `/agent reject {name} <why>` rejects it.\n\nOr in a terminal: `kubectl ledgerops show {name}`, then `kubectl ledgerops approve {name}`. A change of the plan or of YNAB before the decision makes a new preview, shown here in place of this one.\n"
    )
}

#[cfg(test)]
#[path = "inbox_body_tests.rs"]
mod tests;
