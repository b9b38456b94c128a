//! Unit tests of `logic/transaction/check.rs`.

use super::*;
use crate::logic::plan::fixtures::mirror;
use crate::logic::transaction::converge::test_states::{category, split};

#[test]
fn checks_what_ynab_can_take() {
    let memo_only = EndState {
        memo: Some("x".into()),
        ..EndState::default()
    };
    let cases: Vec<(&str, &str, EndState, Result<(), &str>)> = vec![
        ("a category", "tx-048", category("cat-groceries"), Ok(())),
        (
            "the split YNAB already holds is not an error",
            "tx-split",
            split(&[("cat-groceries", -30_000), ("cat-transport", -30_000)]),
            Ok(()),
        ),
        (
            "a category over a split is not invalid either: converge decides",
            "tx-split",
            category("cat-groceries"),
            Ok(()),
        ),
        (
            "a split that adds up",
            "tx-048",
            split(&[("cat-groceries", -8_000), ("cat-transport", -400)]),
            Ok(()),
        ),
        (
            "a split that does not add up",
            "tx-048",
            split(&[("cat-groceries", -8_000), ("cat-transport", -500)]),
            Err(
                "The split lines of tx-048 add up to -8.50 but the transaction is -8.40: make the lines add up to its amount.",
            ),
        ),
        (
            "a split whose lines overflow",
            "tx-048",
            split(&[("cat-groceries", i64::MIN), ("cat-transport", -1)]),
            Err(
                "The split lines of tx-048 add up to more than an amount can hold (±9223372036854775.807): make the lines add up to the transaction's amount, -8.40.",
            ),
        ),
        (
            "every line's category is checked, each problem once",
            "tx-048",
            split(&[("cat-old", -4_000), ("cat-nope", -4_000), ("cat-old", -400)]),
            Err(
                "Category cat-nope is not in the Budget's YNAB plan: use a categoryId from the Budget's categories. Category cat-old is hidden: unhide it in YNAB or choose another.",
            ),
        ),
        (
            "a transfer between budget accounts takes no split",
            "tx-014",
            split(&[("cat-groceries", -200_000), ("cat-transport", -200_000)]),
            Err(
                "Transaction tx-014 is a transfer between two on-budget accounts: YNAB gives it no category.",
            ),
        ),
        ("a memo on a transfer is fine", "tx-014", memo_only, Ok(())),
    ];
    let m = mirror();
    for (name, id, target, want) in cases {
        let tx = m.transactions.get(id).expect("in the fixture");
        assert_eq!(
            check_target(tx, &target, &m),
            want.map_err(str::to_owned),
            "{name}"
        );
    }
}
