//! Seed 001's approval policy, for a set of category changes: run them on their own, ask a
//! person, or block them. The reason is one sentence, shown to the person in the
//! ApprovalRequest.

use std::collections::HashSet;

use crate::api::budget::ApprovalPolicy;
use crate::logic::mirror::Mirror;
use crate::logic::money::parse_decimal;
use crate::logic::plan::{PlannedChange, is_uncategorized};

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

/// Decides on `changes` under `policy`. `known_payees` are the payees categorised before (see
/// [`known_payees`]). Blocking wins over asking; the reason names the first change that decided.
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
    // Sign ignored on both sides; a negative limit lets nothing through.
    let limit_magnitude = u64::try_from(limit).unwrap_or(0);
    for c in changes {
        let amount = &c.change.amount.0;
        // An amount too large to parse is certainly above the limit.
        if parse_decimal(amount)
            .ok()
            .is_none_or(|m| m.unsigned_abs() >= limit_magnitude)
        {
            return Decision::new(
                Action::Ask,
                format!(
                    "{} moves {}, at or above the auto-approve limit of {}",
                    c.change.transaction_id,
                    amount.trim_start_matches('-'),
                    limit_text.0
                ),
            );
        }
    }
    if policy.ask_on_new_payee
        && let Some(reason) = new_payee(changes, known_payees)
    {
        return Decision::new(Action::Ask, reason);
    }
    let payees = if policy.ask_on_new_payee {
        " and its payee was categorised before"
    } else {
        ""
    };
    Decision::new(
        Action::Run,
        format!("every change moves less than {}{payees}", limit_text.0),
    )
}

/// Payees categorised before: those with a transaction in the mirror, other than the ones being
/// changed, in a category other than Uncategorized. The mirror holds no deleted transaction.
pub fn known_payees(mirror: &Mirror, changes: &[PlannedChange]) -> HashSet<String> {
    let changing: HashSet<&str> = changes
        .iter()
        .map(|c| c.change.transaction_id.as_str())
        .collect();
    let categorised = |category_id: &String| {
        !mirror
            .categories
            .get(category_id)
            .is_some_and(is_uncategorized)
    };
    mirror
        .transactions
        .values()
        .filter(|t| !changing.contains(t.id.as_str()))
        .filter(|t| t.category_id.as_ref().is_some_and(categorised))
        .filter_map(|t| t.payee_id.clone())
        .collect()
}

/// The first change into or out of a blocked category.
fn blocked(changes: &[PlannedChange], blocked_ids: &[String]) -> Option<String> {
    changes.iter().find_map(|c| {
        let sides = [
            (
                "out of",
                &c.change.from_category_id,
                &c.change.from_category,
            ),
            ("into", &c.change.to_category_id, &c.change.to_category),
        ];
        sides.into_iter().find_map(|(direction, id, name)| {
            let id = id.as_ref().filter(|id| blocked_ids.contains(id))?;
            let category = match name {
                Some(name) => format!("{name:?} ({id})"),
                None => id.clone(),
            };
            Some(format!(
                "{} moves {direction} {category}, which spec.approval.blockedCategoryIds protects",
                c.change.transaction_id
            ))
        })
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
    use crate::logic::plan::preview;
    use crate::logic::plan::test_support::{assign, at, mirror, recategorise};

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
                "tx-049 moves 45.00, at or above the auto-approve limit of 20.00",
            ),
            (
                "at the limit",
                changes(SEED_002),
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
                "below the limit, new payees not asked about",
                changes(SEED_002),
                policy(Some("45.001"), false, &[]),
                Run,
                "every change moves less than 45.001",
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
                "every change moves less than 100 and its payee was categorised before",
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
        // tx-065 (Carrefour), tx-038 (salary, in Ready to Assign) and tx-052 (to the tracking
        // account) are categorised; uncategorised ones and transfers without category are not.
        assert_eq!(
            ids(known_payees(&m, &changes(SEED_002))),
            ["payee-carrefour", "payee-salary", "payee-to-acc-tracking"]
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
