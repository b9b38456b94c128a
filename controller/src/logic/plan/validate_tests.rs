//! Unit tests of `logic/plan/validate.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use super::*;
use crate::logic::plan::fixtures::{assign, at, mirror};
use crate::ynab_model::ClearedStatus;

#[test]
fn reconciled_and_closed_month_changes_are_named() {
    let mut m = mirror();
    let changes = |m: &Mirror| {
        crate::logic::plan::preview(
            &[
                assign("tx-048", "cat-groceries"),
                assign("tx-049", "cat-transport"),
            ],
            &at(m),
        )
        .changes
    };
    assert_eq!(guarded(&changes(&m), &m, None), Ok(()));
    assert_eq!(guarded(&changes(&m), &m, Some("2026-08")), Ok(()));
    let closed = guarded(&changes(&m), &m, Some("2026-09")).unwrap_err();
    assert!(
        closed.contains("tx-048") && closed.contains("tx-049"),
        "{closed}"
    );
    m.transactions.get_mut("tx-049").unwrap().cleared = ClearedStatus::Reconciled;
    let reconciled = guarded(&changes(&m), &m, None).unwrap_err();
    assert!(
        reconciled.contains("tx-049") && !reconciled.contains("tx-048"),
        "{reconciled}"
    );
}

#[test]
fn reports_every_problem_naming_the_id() {
    use PlanError::*;
    let internal = |id: &str, name: &str| Internal {
        id: id.into(),
        name: name.into(),
    };
    let cases: Vec<(&str, Vec<Assignment>, Vec<PlanError>)> = vec![
        (
            "seed 002's plan is valid",
            vec![
                assign("tx-048", "cat-groceries"),
                assign("tx-049", "cat-transport"),
            ],
            vec![],
        ),
        (
            "an assignment that already holds is valid",
            vec![assign("tx-065", "cat-groceries")],
            vec![],
        ),
        (
            "the budget side of a transfer to a tracking account can be categorised",
            vec![assign("tx-052", "cat-transport")],
            vec![],
        ),
        (
            "a transaction listed three times is reported once",
            vec![
                assign("tx-048", "cat-groceries"),
                assign("tx-048", "cat-transport"),
                assign("tx-048", "cat-groceries"),
            ],
            vec![AssignedTwice("tx-048".into())],
        ),
        (
            "a transaction not in the mirror, deleted or never there",
            vec![assign("tx-gone", "cat-groceries")],
            vec![UnknownTransaction("tx-gone".into())],
        ),
        (
            "a split",
            vec![assign("tx-split", "cat-groceries")],
            vec![Split("tx-split".into())],
        ),
        (
            "a tracking account's own transaction",
            vec![assign("tx-056", "cat-groceries")],
            vec![OffBudget("tx-056".into())],
        ),
        (
            "the tracking side of a transfer is off-budget first",
            vec![assign("tx-053", "cat-groceries")],
            vec![OffBudget("tx-053".into())],
        ),
        (
            "a transfer between budget accounts, either side",
            vec![
                assign("tx-014", "cat-groceries"),
                assign("tx-015", "cat-groceries"),
            ],
            vec![Transfer("tx-014".into()), Transfer("tx-015".into())],
        ),
        (
            "YNAB's Uncategorized",
            vec![assign("tx-048", "cat-uncategorized")],
            vec![Uncategorized("cat-uncategorized".into())],
        ),
        (
            "another internal category",
            vec![assign("tx-048", "cat-rta")],
            vec![internal("cat-rta", "Inflow: Ready to Assign")],
        ),
        (
            "a credit card payment category",
            vec![assign("tx-048", "cat-visa")],
            vec![CreditCardPayment("cat-visa".into())],
        ),
        (
            "a hidden category, or one in a hidden group",
            vec![
                assign("tx-048", "cat-old"),
                assign("tx-049", "cat-archived"),
            ],
            vec![Hidden("cat-old".into()), Hidden("cat-archived".into())],
        ),
        (
            "a category not in the mirror",
            vec![assign("tx-048", "cat-nope")],
            vec![UnknownCategory("cat-nope".into())],
        ),
        (
            "every problem is collected, a transaction's and its category's",
            vec![
                assign("tx-split", "cat-nope"),
                assign("tx-048", "cat-groceries"),
                assign("tx-gone", "cat-visa"),
                assign("tx-048", "cat-transport"),
            ],
            vec![
                Split("tx-split".into()),
                UnknownCategory("cat-nope".into()),
                UnknownTransaction("tx-gone".into()),
                CreditCardPayment("cat-visa".into()),
                AssignedTwice("tx-048".into()),
            ],
        ),
    ];
    let m = mirror();
    for (name, assignments, errors) in cases {
        let want = if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        };
        assert_eq!(validate(&assignments, &m), want, "{name}");
    }
}

#[test]
fn a_transfer_to_an_account_the_mirror_does_not_know_is_refused() {
    let mut m = mirror();
    m.accounts.remove("acc-tracking");
    assert_eq!(
        validate(&[assign("tx-052", "cat-groceries")], &m),
        Err(vec![PlanError::Transfer("tx-052".into())])
    );
}

#[test]
fn a_category_is_judged_with_its_group() {
    // Internal because its group is.
    let mut m = mirror();
    m.categories.get_mut("cat-rta").unwrap().internal = false;
    assert_eq!(
        validate(&[assign("tx-048", "cat-rta")], &m),
        Err(vec![PlanError::Internal {
            id: "cat-rta".into(),
            name: "Inflow: Ready to Assign".into(),
        }])
    );
    // A credit card payment by the group name it carries when the group is not mirrored.
    let mut m = mirror();
    m.category_groups.remove("grp-cc");
    m.categories
        .get_mut("cat-visa")
        .unwrap()
        .category_group_name = Some("Credit Card Payments".into());
    assert_eq!(
        validate(&[assign("tx-048", "cat-visa")], &m),
        Err(vec![PlanError::CreditCardPayment("cat-visa".into())])
    );
}

#[test]
fn messages_name_the_id_and_what_to_do() {
    use PlanError::*;
    let cases = [
        (
            AssignedTwice("tx-048".into()),
            "Transaction tx-048 is assigned twice: keep one assignment.",
        ),
        (
            UnknownTransaction("tx-1".into()),
            "Transaction tx-1 is not in the Budget's YNAB plan: use a transactionId from the Budget's transactions.",
        ),
        (
            Split("tx-1".into()),
            "Transaction tx-1 is split across categories: change its lines in YNAB.",
        ),
        (
            OffBudget("tx-1".into()),
            "Transaction tx-1 is on an off-budget account: YNAB gives it no category.",
        ),
        (
            Transfer("tx-1".into()),
            "Transaction tx-1 is a transfer between two on-budget accounts: YNAB gives it no category.",
        ),
        (
            Uncategorized("c".into()),
            "Category c is YNAB's internal Uncategorized: choose a real category.",
        ),
        (
            Internal {
                id: "c".into(),
                name: "Inflow: Ready to Assign".into(),
            },
            "Category c is YNAB's internal \"Inflow: Ready to Assign\": choose a real category.",
        ),
        (
            CreditCardPayment("c".into()),
            "Category c is a credit card payment category, which YNAB ignores on transactions: choose a spending category.",
        ),
        (
            Hidden("c".into()),
            "Category c is hidden: unhide it in YNAB or choose another.",
        ),
        (
            UnknownCategory("c".into()),
            "Category c is not in the Budget's YNAB plan: use a categoryId from the Budget's categories.",
        ),
    ];
    for (error, message) in cases {
        assert_eq!(error.to_string(), message);
    }
}
