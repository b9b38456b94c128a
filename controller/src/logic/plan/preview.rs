//! What applying a plan would change, computed from the mirror: before and after for every
//! transaction that moves, how many already hold, and the hash an approval binds to.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::hash::preview_hash;
use super::preview_step::PreviewStep;
use crate::api::budget::ManagedField;
use crate::api::common::{Amount, CategoryChange};
use crate::api::plan::{Assignment, Preview};
use crate::logic::budget::mirror::Mirror;
use crate::logic::values::money::to_decimal;
use crate::ynab_model::TransactionSummary;

/// One transaction whose category a write would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// Before and after, as the person who approves sees it.
    pub change: CategoryChange,
    /// YNAB id of the payee: the approval policy tells a new payee by it, not by its name.
    pub payee_id: Option<String>,
    /// Split lines the money moves out of (YNAB's) and into (the target's); empty when neither
    /// side is a split, as in every plan.
    pub lines: LineMoves,
    /// Managed fields other than a single category that the change writes; empty in a plan.
    pub fields: Vec<ManagedField>,
}

/// The categories of the split lines on either side of a change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMoves {
    pub out_of: Vec<CategoryRef>,
    pub into: Vec<CategoryRef>,
}

/// A category id, with its name when the mirror knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRef {
    pub id: String,
    pub name: Option<String>,
}

/// What applying a plan, or undoing one, would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanPreview {
    /// SHA-256 (hex) over what would be written and the state of every transaction involved.
    pub hash: String,
    /// The mirror's `server_knowledge` the preview was computed at.
    pub server_knowledge: i64,
    /// Ordered by date, then transaction id.
    pub changes: Vec<PlannedChange>,
    /// Transactions already where the plan puts them.
    pub unchanged_count: u32,
    /// For an undo: transactions changed since the operation, left alone. Sorted.
    pub conflicts: Vec<String>,
}

impl PlanPreview {
    /// Nothing would be written.
    pub fn nothing_to_do(&self) -> bool {
        self.changes.is_empty()
    }
}

/// How many changes (and conflicts) a status or an ApprovalRequest lists: a plan may hold 5,000,
/// and every object must stay far below etcd's size limit. The counts cover them all, and the
/// hash binds every one.
pub const SHOWN: usize = 100;

impl From<PlanPreview> for Preview {
    fn from(p: PlanPreview) -> Self {
        Self {
            hash: p.hash,
            server_knowledge: p.server_knowledge,
            change_count: count(p.changes.len()),
            changes: p
                .changes
                .into_iter()
                .take(SHOWN)
                .map(|c| c.change)
                .collect(),
            unchanged_count: p.unchanged_count,
            conflicts: p.conflicts.into_iter().take(SHOWN).collect(),
            review: None,
        }
    }
}

/// What a preview reads: one Budget's mirror, optionally with some transactions shown as they
/// were before an approved write landed (see [`super::approved`]).
#[derive(Debug, Clone, Copy)]
pub struct State<'a> {
    /// Names the Budget and YNAB plan: the same moves in another Budget hash apart.
    pub scope: &'a str,
    pub mirror: &'a Mirror,
    /// Transactions to read instead of the mirror's.
    pub before: Option<&'a HashMap<String, TransactionSummary>>,
    pub decimal_digits: u8,
}

impl<'a> State<'a> {
    /// The mirror as it is.
    pub fn new(scope: &'a str, mirror: &'a Mirror, decimal_digits: u8) -> Self {
        Self {
            scope,
            mirror,
            before: None,
            decimal_digits,
        }
    }

    /// The transaction `id` as this state shows it.
    pub fn transaction(&self, id: &str) -> Option<&'a TransactionSummary> {
        self.before
            .and_then(|b| b.get(id))
            .or_else(|| self.mirror.transactions.get(id))
    }
}

/// Previews `assignments`, which [`super::validate`] accepted: a transaction missing from the
/// mirror has nothing to preview and is left out.
pub fn preview(assignments: &[Assignment], state: &State<'_>) -> PlanPreview {
    let steps = assignments
        .iter()
        .filter_map(|a| {
            let transaction = state.transaction(&a.transaction_id)?;
            Some(PreviewStep::Set {
                transaction,
                to: Some(&a.category_id),
            })
        })
        .collect();
    assemble(steps, state)
}

/// The preview of `steps`: plans and undos differ only in how they choose the steps.
pub(super) fn assemble(steps: Vec<PreviewStep<'_>>, state: &State<'_>) -> PlanPreview {
    let (mirror, decimal_digits) = (state.mirror, state.decimal_digits);
    let hash = preview_hash(state.scope, &steps);
    let mut changes = Vec::new();
    let mut unchanged = 0;
    let mut conflicts = Vec::new();
    for step in steps {
        match step {
            PreviewStep::Set { transaction, to } if transaction.category_id.as_deref() == to => {
                unchanged += 1;
            }
            PreviewStep::Set { transaction, to } => {
                changes.push(planned_change(transaction, to, mirror, decimal_digits));
            }
            PreviewStep::Conflict { transaction_id, .. } => {
                conflicts.push(transaction_id.to_owned())
            }
        }
    }
    changes.sort_by(|a, b| by_date_then_id(&a.change, &b.change));
    conflicts.sort();
    PlanPreview {
        hash,
        server_knowledge: mirror.server_knowledge,
        changes,
        unchanged_count: count(unchanged),
        conflicts,
    }
}

pub(super) fn planned_change(
    tx: &TransactionSummary,
    to: Option<&str>,
    mirror: &Mirror,
    decimal_digits: u8,
) -> PlannedChange {
    let name = |id: Option<&str>| Some(mirror.categories.get(id?)?.name.clone());
    let from = tx.category_id.as_deref();
    PlannedChange {
        change: CategoryChange {
            transaction_id: tx.id.clone(),
            date: tx.date.clone(),
            amount: Amount(to_decimal(tx.amount, decimal_digits)),
            // Bank text, carried as data only.
            payee: tx
                .payee_id
                .as_ref()
                .and_then(|id| mirror.payees.get(id))
                .map(|p| p.name.clone()),
            from_category_id: from.map(str::to_owned),
            from_category: name(from),
            to_category_id: to.map(str::to_owned),
            to_category: name(to),
        },
        payee_id: tx.payee_id.clone(),
        lines: LineMoves::default(),
        fields: Vec::new(),
    }
}

fn by_date_then_id(a: &CategoryChange, b: &CategoryChange) -> Ordering {
    (&a.date, &a.transaction_id).cmp(&(&b.date, &b.transaction_id))
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::plan::test_support::{assign, at, mirror, recategorise};

    fn change(
        tx: &str,
        date: &str,
        amount: &str,
        payee: &str,
        from: Option<(&str, &str)>,
        to: (&str, &str),
    ) -> CategoryChange {
        CategoryChange {
            transaction_id: tx.into(),
            date: date.into(),
            amount: Amount(amount.into()),
            payee: Some(payee.into()),
            from_category_id: from.map(|(id, _)| id.into()),
            from_category: from.map(|(_, name)| name.into()),
            to_category_id: Some(to.0.into()),
            to_category: Some(to.1.into()),
        }
    }

    fn seed_002() -> Vec<Assignment> {
        vec![
            assign("tx-048", "cat-groceries"),
            assign("tx-049", "cat-transport"),
        ]
    }

    #[test]
    fn seed_002_two_changes_nothing_unchanged() {
        let m = mirror();
        let p = preview(&seed_002(), &at(&m));
        let shown: Vec<_> = p.changes.iter().map(|c| c.change.clone()).collect();
        assert_eq!(
            shown,
            [
                change(
                    "tx-048",
                    "2026-09-16",
                    "-8.40",
                    "CB BOULANGERIE DU PORT FACT 160926 525130******1",
                    None,
                    ("cat-groceries", "Groceries")
                ),
                change(
                    "tx-049",
                    "2026-09-18",
                    "-45.00",
                    "RAIL CO",
                    None,
                    ("cat-transport", "Transport")
                ),
            ]
        );
        assert_eq!(p.changes[1].payee_id.as_deref(), Some("payee-rail"));
        assert_eq!((p.unchanged_count, p.conflicts.len()), (0, 0));
        assert_eq!(p.server_knowledge, 100);
        assert!(!p.nothing_to_do());
        assert_eq!(p.hash.len(), 64);
        assert!(p.hash.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn counts_changes_and_assignments_that_already_hold() {
        let cases: Vec<(&str, Vec<Assignment>, Vec<&str>, u32)> = vec![
            ("no assignment", vec![], vec![], 0),
            (
                "already there",
                vec![assign("tx-065", "cat-groceries")],
                vec![],
                1,
            ),
            (
                "a move between categories, and one already there",
                vec![
                    assign("tx-065", "cat-transport"),
                    assign("tx-052", "cat-investments"),
                ],
                vec!["tx-065"],
                1,
            ),
            (
                "ordered by date whatever the plan's order",
                vec![
                    assign("tx-066", "cat-groceries"),
                    assign("tx-049", "cat-transport"),
                    assign("tx-048", "cat-groceries"),
                ],
                vec!["tx-048", "tx-049", "tx-066"],
                0,
            ),
            (
                "a transaction missing from the mirror is left out",
                vec![assign("tx-gone", "cat-groceries")],
                vec![],
                0,
            ),
        ];
        let m = mirror();
        for (name, assignments, changed, unchanged) in cases {
            let p = preview(&assignments, &at(&m));
            let ids: Vec<_> = p
                .changes
                .iter()
                .map(|c| c.change.transaction_id.as_str())
                .collect();
            assert_eq!(ids, changed, "{name}");
            assert_eq!(p.unchanged_count, unchanged, "{name}");
            assert_eq!(p.nothing_to_do(), changed.is_empty(), "{name}");
        }
    }

    #[test]
    fn names_the_category_a_transaction_leaves() {
        let p = preview(&[assign("tx-065", "cat-transport")], &at(&mirror()));
        let c = &p.changes[0].change;
        assert_eq!(
            (c.from_category_id.as_deref(), c.from_category.as_deref()),
            (Some("cat-groceries"), Some("Groceries"))
        );
        assert_eq!(c.amount, Amount("-37.05".into()));
    }

    #[test]
    fn a_transaction_without_payee_shows_none() {
        let p = preview(&[assign("tx-090", "cat-transport")], &at(&mirror()));
        assert_eq!(
            (
                p.changes[0].change.payee.as_ref(),
                p.changes[0].payee_id.as_ref()
            ),
            (None, None)
        );
    }

    #[test]
    fn converts_into_the_status_preview() {
        let p = preview(
            &[
                assign("tx-048", "cat-groceries"),
                assign("tx-065", "cat-groceries"),
            ],
            &at(&mirror()),
        );
        let status = Preview::from(p.clone());
        assert_eq!(
            status,
            Preview {
                hash: p.hash.clone(),
                server_knowledge: 100,
                change_count: 1,
                changes: vec![p.changes[0].change.clone()],
                unchanged_count: 1,
                conflicts: vec![],
                review: None,
            }
        );
    }

    #[test]
    fn the_hash_binds_the_plan_and_the_transactions_it_touches() {
        let m = mirror();
        let base = preview(&seed_002(), &at(&m)).hash;
        let hash_with = |assignments: &[Assignment], edit: &dyn Fn(&mut Mirror)| {
            let mut m = mirror();
            edit(&mut m);
            preview(assignments, &at(&m)).hash
        };
        let mut reversed = seed_002();
        reversed.reverse();
        let mut more = seed_002();
        more.push(assign("tx-065", "cat-groceries"));
        let other_target = [
            assign("tx-048", "cat-groceries"),
            assign("tx-049", "cat-groceries"),
        ];
        let cases: Vec<(&str, String, bool)> = vec![
            (
                "same plan, same state",
                hash_with(&seed_002(), &|_| {}),
                true,
            ),
            ("assignment order", hash_with(&reversed, &|_| {}), true),
            (
                "an untouched transaction recategorised",
                hash_with(&seed_002(), &|m| {
                    recategorise(m, "tx-066", Some("cat-transport"))
                }),
                true,
            ),
            (
                "a sync that changed nothing touched",
                hash_with(&seed_002(), &|m| m.server_knowledge = 250),
                true,
            ),
            (
                "a category renamed",
                hash_with(&seed_002(), &|m| {
                    m.categories.get_mut("cat-groceries").unwrap().name = "Food".into()
                }),
                true,
            ),
            (
                "a memo-only edit",
                hash_with(&seed_002(), &|m| {
                    m.transactions.get_mut("tx-048").unwrap().memo = Some("bread".into())
                }),
                true,
            ),
            ("another target", hash_with(&other_target, &|_| {}), false),
            ("one more assignment", hash_with(&more, &|_| {}), false),
            (
                "a touched transaction recategorised",
                hash_with(&seed_002(), &|m| {
                    recategorise(m, "tx-049", Some("cat-groceries"))
                }),
                false,
            ),
            (
                "a touched transaction's amount",
                hash_with(&seed_002(), &|m| {
                    m.transactions.get_mut("tx-048").unwrap().amount = -9_400
                }),
                false,
            ),
            (
                "a touched transaction's payee",
                hash_with(&seed_002(), &|m| {
                    m.transactions.get_mut("tx-048").unwrap().payee_id = Some("payee-rail".into())
                }),
                false,
            ),
            (
                "a touched transaction's date",
                hash_with(&seed_002(), &|m| {
                    m.transactions.get_mut("tx-048").unwrap().date = "2026-09-17".into()
                }),
                false,
            ),
        ];
        for (name, hash, same) in cases {
            assert_eq!(hash == base, same, "{name}");
        }
    }
}
