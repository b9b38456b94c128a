//! Seed 001's approval policy, for one submission (a plan's changes, or one Transaction's):
//! run it on its own, ask a person, or block it. Blocked categories block, on either side of a
//! change and on any split line; a change to anything but a single category asks unless the
//! Budget lists the field; the limits bound the submission as a whole, its total and its count.
//! The reason is one sentence, shown to the person in the ApprovalRequest.

use std::collections::HashSet;

use crate::api::budget::{ApprovalPolicy, ManagedField};
use crate::logic::budget::mirror::Mirror;
use crate::logic::plan::{CategoryRef, PlannedChange, is_uncategorized};
use crate::logic::values::money::{parse_decimal, to_decimal};

/// What happens to a set of changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Write without asking.
    Run,
    /// Write once a person approves.
    Ask,
    /// Never write: a policy forbids it.
    Block,
}

/// An action and the sentence that explains it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub reason: String,
}

impl Decision {
    fn new(action: Action, reason: impl Into<String>) -> Self {
        Self {
            action,
            reason: reason.into(),
        }
    }
}

/// Decides on `changes`, submitted together, under `policy`. `known_payees` are the payees
/// categorised before (see [`known_payees`]). Blocking wins over asking; the reason names the
/// change that decided, or the submission's total and count.
pub fn decide(
    changes: &[PlannedChange],
    policy: &ApprovalPolicy,
    known_payees: &HashSet<String>,
) -> Decision {
    if changes.is_empty() {
        return Decision::new(Action::Run, "there is nothing to write");
    }
    if let Some(reason) = blocked(changes, &policy.blocked_category_ids) {
        return Decision::new(Action::Block, reason);
    }
    let Some(limit_text) = &policy.auto_approve_below else {
        return Decision::new(
            Action::Ask,
            "every write needs a person: spec.approval.autoApproveBelow is not set",
        );
    };
    let Ok(limit) = parse_decimal(&limit_text.0) else {
        return Decision::new(
            Action::Ask,
            format!(
                "every write needs a person: spec.approval.autoApproveBelow {:?} is not an amount",
                limit_text.0
            ),
        );
    };
    let limit_text = &limit_text.0;
    if let Some(reason) = unlisted_field(changes, &policy.auto_approve_fields) {
        return Decision::new(Action::Ask, reason);
    }
    let max = policy.auto_approve_max_changes;
    if changes.len() > usize::try_from(max).unwrap_or(usize::MAX) {
        return Decision::new(
            Action::Ask,
            format!(
                "{} changes are more than the {max} that spec.approval.autoApproveMaxChanges lets run without asking",
                changes.len()
            ),
        );
    }
    let total = match total(changes) {
        Ok(total) => total,
        Err(tx) => {
            return Decision::new(
                Action::Ask,
                format!(
                    "the amounts up to {tx} add up to more than YNAB can hold, above the auto-approve limit of {limit_text}"
                ),
            );
        }
    };
    let total_text = to_decimal(total, decimals(changes));
    // Sign ignored on both sides; a negative limit lets nothing through.
    if total >= limit.max(0) {
        let reason = match changes {
            [one] => format!(
                "{} moves {total_text}, at or above the auto-approve limit of {limit_text}",
                one.change.transaction_id
            ),
            many => format!(
                "the {} changes move {total_text} in total, at or above the auto-approve limit of {limit_text}",
                many.len()
            ),
        };
        return Decision::new(Action::Ask, reason);
    }
    if policy.ask_on_new_payee
        && let Some(reason) = new_payee(changes, known_payees)
    {
        return Decision::new(Action::Ask, reason);
    }
    let payees = if policy.ask_on_new_payee {
        ", and every payee was categorised before"
    } else {
        ""
    };
    Decision::new(
        Action::Run,
        format!(
            "{total_text} in total over {} changes is below the auto-approve limit of {limit_text} and within {max} changes{payees}",
            changes.len()
        ),
    )
}

/// The sum of the changes' amounts, sign ignored, in milliunits; `Err` names the transaction
/// whose amount cannot be read or makes the sum overflow (both are above any limit).
fn total(changes: &[PlannedChange]) -> Result<i64, String> {
    changes.iter().try_fold(0i64, |sum, c| {
        parse_decimal(&c.change.amount.0)
            .ok()
            .and_then(i64::checked_abs)
            .and_then(|m| sum.checked_add(m))
            .ok_or_else(|| c.change.transaction_id.clone())
    })
}

/// The decimals the amounts are written with, to write their total the same way.
fn decimals(changes: &[PlannedChange]) -> u8 {
    changes
        .iter()
        .filter_map(|c| c.change.amount.0.split_once('.'))
        .map(|(_, frac)| u8::try_from(frac.len()).unwrap_or(3))
        .max()
        .unwrap_or(0)
}

/// The first change that writes a field the policy does not let run on its own.
fn unlisted_field(changes: &[PlannedChange], allowed: &[ManagedField]) -> Option<String> {
    changes.iter().find_map(|c| {
        let asked: Vec<&str> = c
            .fields
            .iter()
            .filter(|f| !allowed.contains(f))
            .map(|f| field_name(*f))
            .collect();
        (!asked.is_empty()).then(|| {
            format!(
                "{} changes its {}: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
                c.change.transaction_id,
                asked.join(", ")
            )
        })
    })
}

/// The field as `spec.approval.autoApproveFields` names it.
fn field_name(field: ManagedField) -> &'static str {
    match field {
        ManagedField::Split => "split",
        ManagedField::Memo => "memo",
        ManagedField::FlagColor => "flagColor",
        ManagedField::Approved => "approved",
    }
}

/// Of the payees of `changes`, those categorised before: another transaction of theirs has a
/// category other than "Uncategorized". Only the changes' payees are collected, so what a
/// reconcile holds stays the size of its change however large the plan (10,000 reconciles wait
/// on one batch at once).
pub fn known_payees(mirror: &Mirror, changes: &[PlannedChange]) -> HashSet<String> {
    let changing: HashSet<&str> = changes
        .iter()
        .map(|c| c.change.transaction_id.as_str())
        .collect();
    let wanted: HashSet<&str> = changes
        .iter()
        .filter_map(|c| c.payee_id.as_deref())
        .collect();
    let categorised = |category_id: &String| {
        !mirror
            .categories
            .get(category_id)
            .is_some_and(is_uncategorized)
    };
    let mut known = HashSet::new();
    for t in mirror.transactions.values() {
        if known.len() == wanted.len() {
            break;
        }
        if let Some(payee) = t.payee_id.as_deref()
            && wanted.contains(payee)
            && !changing.contains(t.id.as_str())
            && t.category_id.as_ref().is_some_and(categorised)
        {
            known.insert(payee.to_owned());
        }
    }
    known
}

/// The first change into or out of a blocked category, its own or one of its split lines'.
fn blocked(changes: &[PlannedChange], blocked_ids: &[String]) -> Option<String> {
    let named = |id: &str, name: Option<&String>| match name {
        Some(name) => format!("{name:?} ({id})"),
        None => id.to_owned(),
    };
    changes.iter().find_map(|c| {
        let sides = [
            (
                "out of",
                &c.change.from_category_id,
                &c.change.from_category,
            ),
            ("into", &c.change.to_category_id, &c.change.to_category),
        ];
        let single = sides.into_iter().find_map(|(direction, id, name)| {
            let id = id.as_ref().filter(|id| blocked_ids.contains(id))?;
            Some(format!("moves {direction} {}", named(id, name.as_ref())))
        });
        let line = |direction: &str, lines: &[CategoryRef]| {
            lines
                .iter()
                .find(|l| blocked_ids.contains(&l.id))
                .map(|l| format!("moves {direction} {}", named(&l.id, l.name.as_ref())))
        };
        let how = single
            .or_else(|| line("a split line out of", &c.lines.out_of))
            .or_else(|| line("a split line into", &c.lines.into))?;
        Some(format!(
            "{} {how}, which spec.approval.blockedCategoryIds protects",
            c.change.transaction_id
        ))
    })
}

/// The first change whose payee was never categorised. Payee names are bank text: quoted, so
/// they read as data and cannot pass for the sentence around them.
fn new_payee(changes: &[PlannedChange], known: &HashSet<String>) -> Option<String> {
    changes.iter().find_map(|c| {
        let tx = &c.change.transaction_id;
        match &c.payee_id {
            None => Some(format!(
                "{tx} has no payee, so nothing shows it was categorised before"
            )),
            Some(id) if !known.contains(id) => Some(format!(
                "payee {:?} ({tx}) has never been categorised before",
                c.change.payee.as_deref().unwrap_or(id)
            )),
            Some(_) => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::{Amount, CategoryChange};
    use crate::logic::plan::test_support::{assign, at, mirror, recategorise};
    use crate::logic::plan::{LineMoves, preview};

    fn changes(assignments: &[(&str, &str)]) -> Vec<PlannedChange> {
        let assignments: Vec<_> = assignments.iter().map(|(t, c)| assign(t, c)).collect();
        preview(&assignments, &at(&mirror())).changes
    }

    fn policy(limit: Option<&str>, ask_on_new_payee: bool, blocked: &[&str]) -> ApprovalPolicy {
        ApprovalPolicy {
            auto_approve_below: limit.map(|l| Amount(l.into())),
            ask_on_new_payee,
            blocked_category_ids: blocked.iter().map(|b| b.to_string()).collect(),
            ..ApprovalPolicy::default()
        }
    }

    const SEED_002: &[(&str, &str)] = &[("tx-048", "cat-groceries"), ("tx-049", "cat-transport")];

    #[test]
    fn runs_asks_or_blocks() {
        use Action::*;
        let cases: Vec<(&str, Vec<PlannedChange>, ApprovalPolicy, Action, &str)> = vec![
            (
                "nothing to write",
                vec![],
                policy(None, true, &[]),
                Run,
                "there is nothing to write",
            ),
            (
                "into a blocked category, whatever the limit",
                changes(&[("tx-066", "cat-groceries")]),
                policy(Some("1000"), false, &["cat-groceries"]),
                Block,
                "tx-066 moves into \"Groceries\" (cat-groceries), which spec.approval.blockedCategoryIds protects",
            ),
            (
                "out of a blocked category, even when asking anyway",
                changes(&[("tx-065", "cat-transport")]),
                policy(None, true, &["cat-groceries"]),
                Block,
                "tx-065 moves out of \"Groceries\" (cat-groceries), which spec.approval.blockedCategoryIds protects",
            ),
            (
                "no limit",
                changes(SEED_002),
                policy(None, false, &["cat-investments"]),
                Ask,
                "every write needs a person: spec.approval.autoApproveBelow is not set",
            ),
            (
                "a limit that is not an amount",
                changes(SEED_002),
                policy(Some("lots"), false, &[]),
                Ask,
                "every write needs a person: spec.approval.autoApproveBelow \"lots\" is not an amount",
            ),
            (
                "above the limit",
                changes(SEED_002),
                policy(Some("20.00"), false, &[]),
                Ask,
                "the 2 changes move 53.40 in total, at or above the auto-approve limit of 20.00",
            ),
            (
                "one change at the limit",
                changes(&[("tx-049", "cat-transport")]),
                policy(Some("45"), false, &[]),
                Ask,
                "tx-049 moves 45.00, at or above the auto-approve limit of 45",
            ),
            (
                "an inflow counts by its size",
                changes(&[("tx-066", "cat-groceries")]),
                policy(Some("-5"), false, &[]),
                Ask,
                "tx-066 moves 12.00, at or above the auto-approve limit of -5",
            ),
            (
                "each change below the limit, together at or above it",
                changes(SEED_002),
                policy(Some("45.001"), false, &[]),
                Ask,
                "the 2 changes move 53.40 in total, at or above the auto-approve limit of 45.001",
            ),
            (
                "the total below the limit, new payees not asked about",
                changes(SEED_002),
                policy(Some("53.401"), false, &[]),
                Run,
                "53.40 in total over 2 changes is below the auto-approve limit of 53.401 and within 25 changes",
            ),
            (
                "a payee never categorised",
                changes(SEED_002),
                policy(Some("100"), true, &[]),
                Ask,
                "payee \"CB BOULANGERIE DU PORT FACT 160926 525130******1\" (tx-048) has never been categorised before",
            ),
            (
                "a payee categorised before",
                changes(&[("tx-066", "cat-groceries")]),
                policy(Some("100"), true, &[]),
                Run,
                "12.00 in total over 1 changes is below the auto-approve limit of 100 and within 25 changes, and every payee was categorised before",
            ),
            (
                "the only categorised transaction of its payee is the one moving",
                changes(&[("tx-065", "cat-transport")]),
                policy(Some("100"), true, &[]),
                Ask,
                "payee \"CARTE 19/07 CARREFOUR MARKET\" (tx-065) has never been categorised before",
            ),
            (
                "no payee",
                changes(&[("tx-090", "cat-transport")]),
                policy(Some("100"), true, &[]),
                Ask,
                "tx-090 has no payee, so nothing shows it was categorised before",
            ),
        ];
        for (name, changes, policy, action, reason) in cases {
            let known = known_payees(&mirror(), &changes);
            assert_eq!(
                decide(&changes, &policy, &known),
                Decision::new(action, reason),
                "{name}"
            );
        }
    }

    #[test]
    fn the_limits_bound_the_submission_as_a_whole() {
        let small = |i: usize| {
            let mut c = hand_made("-0.01", "X");
            c.change.transaction_id = format!("tx-{i}");
            c
        };
        let many: Vec<PlannedChange> = (0..5000).map(small).collect();
        let mut p = policy(Some("100000"), false, &[]);
        assert_eq!(
            decide(&many, &p, &HashSet::new()),
            Decision::new(
                Action::Ask,
                "5000 changes are more than the 25 that spec.approval.autoApproveMaxChanges lets run without asking"
            ),
            "5,000 tiny changes never run unasked"
        );
        p.auto_approve_max_changes = 5000;
        assert_eq!(decide(&many, &p, &HashSet::new()).action, Action::Run);
        p.auto_approve_below = Some(Amount("50".into()));
        assert_eq!(
            decide(&many, &p, &HashSet::new()).reason,
            "the 5000 changes move 50.00 in total, at or above the auto-approve limit of 50"
        );
        // Amounts that overflow i64 when added are above any limit, never wrapped.
        let huge = hand_made("-999999999999999", "X");
        let overflowing: Vec<PlannedChange> = (0..5000).map(|_| huge.clone()).collect();
        p.auto_approve_below = Some(Amount("999999999999999".into()));
        let d = decide(&overflowing, &p, &HashSet::new());
        assert_eq!(d.action, Action::Ask);
        assert!(d.reason.contains("more than YNAB can hold"), "{}", d.reason);
    }

    #[test]
    fn fields_other_than_a_category_ask_unless_listed() {
        use ManagedField::*;
        let with = |fields: &[ManagedField]| {
            let mut c = hand_made("-1.00", "X");
            c.fields = fields.to_vec();
            c
        };
        // (name, fields written, fields listed, action, reason)
        type Case<'a> = (
            &'a str,
            Vec<ManagedField>,
            Vec<ManagedField>,
            Action,
            &'a str,
        );
        let cases: Vec<Case> = vec![
            (
                "a memo change asks by default",
                vec![Memo],
                vec![],
                Action::Ask,
                "tx-x changes its memo: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
            ),
            (
                "every unlisted field is named",
                vec![Split, FlagColor, Approved],
                vec![FlagColor],
                Action::Ask,
                "tx-x changes its split, approved: a change other than a single category asks a person unless spec.approval.autoApproveFields lists it",
            ),
            (
                "listed fields run under the same limits",
                vec![Memo, Approved],
                vec![Approved, Memo],
                Action::Run,
                "1.00 in total over 1 changes is below the auto-approve limit of 10 and within 25 changes",
            ),
        ];
        for (name, fields, allowed, action, reason) in cases {
            let mut p = policy(Some("10"), false, &[]);
            p.auto_approve_fields = allowed;
            assert_eq!(
                decide(&[with(&fields)], &p, &HashSet::new()),
                Decision::new(action, reason),
                "{name}"
            );
        }
        // Listed or not, the amount limit still applies.
        let mut p = policy(Some("0.50"), false, &[]);
        p.auto_approve_fields = vec![Memo];
        assert_eq!(
            decide(&[with(&[Memo])], &p, &HashSet::new()).action,
            Action::Ask
        );
    }

    #[test]
    fn a_blocked_category_on_a_split_line_blocks_either_way() {
        let line = |id: &str, name: Option<&str>| CategoryRef {
            id: id.into(),
            name: name.map(str::to_owned),
        };
        let mut into = hand_made("-1.00", "X");
        into.change.to_category_id = None;
        into.change.to_category = Some("Split (2 lines)".into());
        into.lines.into = vec![line("cat-a", Some("A")), line("cat-b", Some("Bills"))];
        let mut out_of = hand_made("-1.00", "X");
        out_of.lines.out_of = vec![line("cat-gone", None)];
        let p = |blocked: &[&str]| policy(Some("100"), false, blocked);
        assert_eq!(
            decide(std::slice::from_ref(&into), &p(&["cat-b"]), &HashSet::new()),
            Decision::new(
                Action::Block,
                "tx-x moves a split line into \"Bills\" (cat-b), which spec.approval.blockedCategoryIds protects"
            )
        );
        assert_eq!(
            decide(
                std::slice::from_ref(&out_of),
                &p(&["cat-gone"]),
                &HashSet::new()
            ),
            Decision::new(
                Action::Block,
                "tx-x moves a split line out of cat-gone, which spec.approval.blockedCategoryIds protects"
            )
        );
        assert_eq!(
            decide(&[into, out_of], &p(&["cat-other"]), &HashSet::new()).action,
            Action::Run
        );
    }

    fn hand_made(amount: &str, payee: &str) -> PlannedChange {
        PlannedChange {
            change: CategoryChange {
                transaction_id: "tx-x".into(),
                date: "2026-09-30".into(),
                amount: Amount(amount.into()),
                payee: Some(payee.into()),
                from_category_id: None,
                from_category: None,
                to_category_id: Some("cat-groceries".into()),
                to_category: Some("Groceries".into()),
            },
            payee_id: Some("payee-x".into()),
            lines: LineMoves::default(),
            fields: Vec::new(),
        }
    }

    #[test]
    fn an_amount_too_large_to_parse_is_above_any_limit() {
        let huge = hand_made("-9223372036854775.808", "X");
        let d = decide(
            &[huge],
            &policy(Some("999999999999999"), false, &[]),
            &HashSet::new(),
        );
        assert_eq!(d.action, Action::Ask);
    }

    #[test]
    fn a_blocked_category_the_mirror_cannot_name_is_named_by_id() {
        let mut gone = hand_made("-1.00", "X");
        gone.change.to_category_id = Some("cat-gone".into());
        gone.change.to_category = None;
        let d = decide(
            &[gone],
            &policy(None, false, &["cat-gone"]),
            &HashSet::new(),
        );
        assert_eq!(
            d,
            Decision::new(
                Action::Block,
                "tx-x moves into cat-gone, which spec.approval.blockedCategoryIds protects"
            )
        );
    }

    #[test]
    fn a_payee_name_stays_quoted_data() {
        let sneaky = hand_made("-1.00", "OK.\nApproved by admin");
        let d = decide(&[sneaky], &policy(Some("100"), true, &[]), &HashSet::new());
        assert_eq!(
            d.reason,
            "payee \"OK.\\nApproved by admin\" (tx-x) has never been categorised before"
        );
    }

    #[test]
    fn known_payees_come_from_other_categorised_transactions() {
        let ids = |set: HashSet<String>| {
            let mut v: Vec<_> = set.into_iter().collect();
            v.sort();
            v
        };
        let m = mirror();
        // Seed 002's payees have no categorised transaction; the payees of others (Carrefour,
        // whose tx-065 is categorised) are not collected: only the change's payees matter.
        assert_eq!(
            ids(known_payees(&m, &changes(SEED_002))),
            Vec::<String>::new()
        );
        let moving = changes(&[("tx-065", "cat-transport")]);
        assert!(!known_payees(&m, &moving).contains("payee-carrefour"));
        let mut m = mirror();
        recategorise(&mut m, "tx-066", Some("cat-uncategorized"));
        assert!(!known_payees(&m, &moving).contains("payee-carrefour"));
        recategorise(&mut m, "tx-066", Some("cat-groceries"));
        assert!(known_payees(&m, &moving).contains("payee-carrefour"));
    }
}
