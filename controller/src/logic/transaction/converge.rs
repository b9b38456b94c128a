//! Converge-to-target for one transaction (seed 000): decide before writing, from a fresh read
//! of YNAB, whether to write, do nothing, adopt a write that already landed, or stop because
//! someone else changed the record; then check the read-back.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::api::transaction::{AppliedState, Flag, SplitLine, TransactionSpec};
use crate::logic::values::money;
use crate::ynab_model::{self, ClearedStatus, SubTransaction, TransactionSummary};

/// Where a transaction's amount goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Allocation {
    Uncategorized,
    Category(String),
    /// Built by [`Allocation::split`], so that two splits with the same lines compare equal
    /// however YNAB or the spec orders them.
    Split(Vec<Line>),
}

impl Allocation {
    /// A split of `lines`, in a canonical order.
    pub fn split(mut lines: Vec<Line>) -> Self {
        lines.sort();
        Self::Split(lines)
    }
}

/// One line of a split, in milliunits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Line {
    pub amount: i64,
    pub category_id: String,
    pub memo: Option<String>,
}

/// An end state restricted to the fields a write manages: `None` means "not managed".
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
pub struct EndState {
    pub allocation: Option<Allocation>,
    pub memo: Option<String>,
    pub approved: Option<bool>,
    pub flag: Option<Flag>,
}

impl EndState {
    /// A stable hash of exactly these fields, for intents and approvals.
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).expect("an end state always serializes");
        Sha256::digest(&json)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The same fields as `managed` manages, taken from `self`.
    pub fn restrict_to(&self, managed: &EndState) -> EndState {
        EndState {
            allocation: managed.allocation.as_ref().and(self.allocation.clone()),
            memo: managed.memo.as_ref().and(self.memo.clone()),
            approved: managed.approved.and(self.approved),
            flag: managed.flag.and(self.flag),
        }
    }
}

/// The hash an approval binds to: the Budget (`scope`), the transaction (id, account, date,
/// amount, payee), the state it was asked from and the target. Changing any of them makes the
/// approval stale, so an approval can never be carried over to another transaction or amount.
pub fn approval_hash(
    scope: &str,
    tx: &TransactionSummary,
    current: &EndState,
    target: &EndState,
) -> String {
    let bound = (
        "ledgerops.dev/transaction-approval/v2",
        scope,
        &tx.id,
        &tx.account_id,
        &tx.date,
        tx.amount,
        &tx.payee_id,
        current,
        target,
    );
    let json = serde_json::to_vec(&bound).expect("strings, integers and end states serialize");
    Sha256::digest(&json)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a transaction looks like in YNAB now, on the fields `managed` manages.
pub fn observe(tx: &TransactionSummary, lines: &[SubTransaction], managed: &EndState) -> EndState {
    let allocation = if !lines.is_empty() {
        Allocation::split(
            lines
                .iter()
                .map(|l| Line {
                    amount: l.amount,
                    category_id: l.category_id.clone().unwrap_or_default(),
                    memo: l.memo.clone(),
                })
                .collect(),
        )
    } else {
        tx.category_id
            .clone()
            .map_or(Allocation::Uncategorized, Allocation::Category)
    };
    let full = EndState {
        allocation: Some(allocation),
        memo: Some(tx.memo.clone().unwrap_or_default()),
        approved: Some(tx.approved),
        flag: Some(flag_of(tx.flag_color)),
    };
    full.restrict_to(managed)
}

/// YNAB's flag as the CRDs spell it; the only conversion this way.
fn flag_of(flag: Option<ynab_model::FlagColor>) -> Flag {
    match flag {
        None | Some(ynab_model::FlagColor::Empty) => Flag::None,
        Some(ynab_model::FlagColor::Red) => Flag::Red,
        Some(ynab_model::FlagColor::Orange) => Flag::Orange,
        Some(ynab_model::FlagColor::Yellow) => Flag::Yellow,
        Some(ynab_model::FlagColor::Green) => Flag::Green,
        Some(ynab_model::FlagColor::Blue) => Flag::Blue,
        Some(ynab_model::FlagColor::Purple) => Flag::Purple,
    }
}

/// The end state a Transaction's spec declares. Fails on a split amount that is not money.
pub fn target_of(spec: &TransactionSpec) -> Result<EndState, money::MoneyError> {
    let allocation = match (&spec.category_id, &spec.split) {
        (Some(id), _) => Some(Allocation::Category(id.clone())),
        (None, Some(lines)) => Some(Allocation::split(lines_of(lines)?)),
        (None, None) => None,
    };
    Ok(EndState {
        allocation,
        memo: spec.memo.clone(),
        approved: spec.approved,
        flag: spec.flag_color,
    })
}

fn lines_of(lines: &[SplitLine]) -> Result<Vec<Line>, money::MoneyError> {
    lines
        .iter()
        .map(|l| {
            Ok(Line {
                amount: money::parse_decimal(&l.amount.0)?,
                category_id: l.category_id.clone(),
                memo: l.memo.clone(),
            })
        })
        .collect()
}

/// The end state recorded in a Transaction's status as last applied.
pub fn prior_of(applied: &AppliedState) -> EndState {
    let allocation = match (&applied.category_id, &applied.split) {
        (Some(id), _) => Some(Allocation::Category(id.clone())),
        (None, Some(lines)) => lines_of(lines).ok().map(Allocation::split),
        (None, None) => None,
    };
    EndState {
        allocation,
        memo: applied.memo.clone(),
        approved: applied.approved,
        flag: applied.flag_color,
    }
}

/// What the current state is checked against before a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Converge semantics (Transaction): `prior` is what ledgerops last applied, if anything;
    /// only a different non-empty category counts as someone else's edit.
    Prior(Option<EndState>),
    /// Preview semantics (CategorizationPlan): YNAB must still show exactly this state.
    Exactly(EndState),
    /// A Transaction before its first write, whose baseline (this hash, as first read for the
    /// spec) YNAB no longer shows: someone else's edit, unless it is the target itself.
    Unchanged(String),
}

/// The decision made before writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precommit {
    /// YNAB differs from the target and nobody else changed it: write.
    Write,
    /// YNAB holds the target and the target is what was there before: nothing to do.
    NoChange,
    /// YNAB already holds a target that differs from before (a write that landed, or an edit
    /// that happens to match): adopt it, do not write again.
    AlreadyTarget,
    /// Someone else changed the record: report it, do not overwrite.
    Diverged,
}

/// Decides before writing, from `current` (fresh, restricted to the target's fields).
pub fn precommit(current: &EndState, target: &EndState, expect: &Expect) -> Precommit {
    let baseline = match expect {
        Expect::Prior(prior) => prior.as_ref().map(|p| p.restrict_to(target)),
        Expect::Exactly(from) => Some(from.restrict_to(target)),
        Expect::Unchanged(_) => None,
    };
    if current == target {
        return if baseline.as_ref() == Some(current) {
            Precommit::NoChange
        } else {
            Precommit::AlreadyTarget
        };
    }
    match (expect, baseline) {
        (Expect::Exactly(_), Some(from)) if *current != from => Precommit::Diverged,
        (Expect::Unchanged(hash), _) if current.hash() != *hash => Precommit::Diverged,
        (Expect::Prior(_), Some(prior)) => match (&current.allocation, &prior.allocation) {
            // Someone else's allocation: another category, a split of what ledgerops
            // categorised, or a split line moved or recategorised. A memo-only drift is not a
            // divergence, and neither is uncategorized: there is nothing of theirs to protect.
            (Some(now), Some(ours)) if now != ours && *now != Allocation::Uncategorized => {
                Precommit::Diverged
            }
            _ => Precommit::Write,
        },
        _ => Precommit::Write,
    }
}

/// The part of `target` that differs from `current`: what a write sends. A field already in
/// place is not sent again (YNAB refuses to rewrite the lines of a split it already holds).
pub fn still_to_write(current: &EndState, target: &EndState) -> EndState {
    fn differing<T: PartialEq + Clone>(now: &Option<T>, wanted: &Option<T>) -> Option<T> {
        wanted.clone().filter(|w| now.as_ref() != Some(w))
    }
    EndState {
        allocation: differing(&current.allocation, &target.allocation),
        memo: differing(&current.memo, &target.memo),
        approved: differing(&current.approved, &target.approved),
        flag: differing(&current.flag, &target.flag),
    }
}

/// Settles a write an earlier run started but never recorded the outcome of, from a fresh read:
/// landed (YNAB shows its target) → adopt; not landed (YNAB still shows where it started, and
/// `changed_since` the knowledge it was decided on is not `Some(true)`) → write; anything else
/// → someone changed the record since. `None` when the intent no longer applies because the
/// target changed meanwhile.
pub fn settle_intent(
    current: &EndState,
    target: &EndState,
    (intent_target, intent_from): (&str, Option<&str>),
    changed_since: Option<bool>,
) -> Option<Precommit> {
    if target.hash() != intent_target {
        return None;
    }
    let current_hash = current.hash();
    Some(if current == target {
        Precommit::AlreadyTarget
    } else if changed_since == Some(true) {
        // Changed after the decision and not to the target: someone's edit, or the write landed
        // and someone undid it since. Its fields alone cannot tell which; neither is written over.
        Precommit::Diverged
    } else if intent_from.is_none_or(|from| from == current_hash) {
        Precommit::Write
    } else {
        Precommit::Diverged
    })
}

/// How a read-back compares with the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    Match,
    /// The read-back failed; the next read settles it.
    CouldNotConfirm,
    Diverged,
}

/// Compares the state read after a write with its target.
pub fn verify(read_back: Option<&EndState>, target: &EndState) -> Verified {
    match read_back {
        None => Verified::CouldNotConfirm,
        Some(state) if state == target => Verified::Match,
        Some(_) => Verified::Diverged,
    }
}

/// Why a write must not happen silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    pub reason: &'static str,
    pub message: String,
}

/// The guards: a reconciled transaction, or one dated in a closed month (`closed_through`,
/// YYYY-MM, from the Budget: YNAB itself has no closed months), is never edited silently.
pub fn guard(tx: &TransactionSummary, closed_through: Option<&str>) -> Option<Blocked> {
    if tx.cleared == ClearedStatus::Reconciled {
        return Some(Blocked {
            reason: "Reconciled",
            message: format!(
                "Transaction {} is reconciled: ledgerops never edits a reconciled transaction. Unreconcile it in YNAB first, or take the change out of the spec.",
                tx.id
            ),
        });
    }
    let month = tx.date.get(..7).unwrap_or(&tx.date);
    match closed_through {
        Some(closed) if month <= closed => Some(Blocked {
            reason: "ClosedMonth",
            message: format!(
                "Transaction {} is dated {}, in a month the Budget closes (spec.closedThrough: {closed}): reopen the month on the Budget, or take the change out of the spec.",
                tx.id, tx.date
            ),
        }),
        _ => None,
    }
}

/// The bulk-update item that writes `target` to transaction `id`.
pub fn save_item(id: &str, target: &EndState) -> ynab_model::SaveTransactionWithIdOrImportId {
    let mut fields = ynab_model::SaveTransactionWithOptionalFields::default();
    match &target.allocation {
        Some(Allocation::Category(c)) => fields.category_id = Some(Some(c.clone())),
        Some(Allocation::Uncategorized) => fields.category_id = Some(None),
        Some(Allocation::Split(lines)) => {
            fields.category_id = Some(None);
            fields.subtransactions = Some(
                lines
                    .iter()
                    .map(|l| ynab_model::SaveSubTransaction {
                        amount: l.amount,
                        payee_id: None,
                        payee_name: None,
                        category_id: Some(l.category_id.clone()),
                        memo: l.memo.clone(),
                    })
                    .collect(),
            );
        }
        None => {}
    }
    fields.memo = target.memo.clone().map(Some);
    fields.approved = target.approved;
    fields.flag_color = target.flag.map(ynab_flag);
    ynab_model::SaveTransactionWithIdOrImportId {
        id: Some(id.to_owned()),
        import_id: None,
        fields,
    }
}

/// The CRDs' flag as YNAB's wire type; the only conversion this way.
fn ynab_flag(flag: Flag) -> Option<ynab_model::FlagColor> {
    match flag {
        Flag::None => None,
        Flag::Red => Some(ynab_model::FlagColor::Red),
        Flag::Orange => Some(ynab_model::FlagColor::Orange),
        Flag::Yellow => Some(ynab_model::FlagColor::Yellow),
        Flag::Green => Some(ynab_model::FlagColor::Green),
        Flag::Blue => Some(ynab_model::FlagColor::Blue),
        Flag::Purple => Some(ynab_model::FlagColor::Purple),
    }
}

/// End states for tests elsewhere in `logic`.
#[cfg(test)]
pub(crate) mod test_states {
    use super::{Allocation, EndState, Line};

    /// Everything in category `id`.
    pub fn category(id: &str) -> EndState {
        EndState {
            allocation: Some(Allocation::Category(id.into())),
            ..EndState::default()
        }
    }

    /// A split into `(category, milliunits)` lines.
    pub fn split(lines: &[(&str, i64)]) -> EndState {
        EndState {
            allocation: Some(Allocation::split(
                lines
                    .iter()
                    .map(|(c, amount)| Line {
                        amount: *amount,
                        category_id: (*c).into(),
                        memo: None,
                    })
                    .collect(),
            )),
            ..EndState::default()
        }
    }
}

#[cfg(test)]
#[path = "converge_tests.rs"]
mod tests;
