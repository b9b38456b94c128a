//! Unit tests of `logic/transaction/split.rs`.

use super::*;

fn line(category: &str, amount: i64) -> Line {
    Line {
        amount,
        category_id: category.into(),
        memo: None,
    }
}

fn split(lines: &[(&str, i64)]) -> EndState {
    EndState {
        allocation: Some(Allocation::split(
            lines.iter().map(|(c, a)| line(c, *a)).collect(),
        )),
        ..EndState::default()
    }
}

fn category(id: &str) -> EndState {
    EndState {
        allocation: Some(Allocation::Category(id.into())),
        ..EndState::default()
    }
}

#[test]
fn lines_must_add_up_without_overflowing() {
    let cases: Vec<(&str, i64, Vec<Line>, Option<&str>)> = vec![
        (
            "they add up",
            -4500,
            vec![line("a", -4000), line("b", -500)],
            None,
        ),
        (
            "they do not",
            -4500,
            vec![line("a", -4000), line("b", -400)],
            Some(
                "The split lines of tx-1 add up to -4.40 but the transaction is -4.50: make the lines add up to its amount.",
            ),
        ),
        (
            "an overflow is an error, never a wrap",
            -1,
            vec![line("a", i64::MAX), line("b", 1), line("c", i64::MIN)],
            Some(
                "The split lines of tx-1 add up to more than an amount can hold (±9223372036854775.807): make the lines add up to the transaction's amount, -0.001.",
            ),
        ),
        (
            "a wrapping sum would have matched",
            0,
            vec![line("a", i64::MAX), line("b", i64::MAX), line("c", 2)],
            Some(
                "The split lines of tx-1 add up to more than an amount can hold (±9223372036854775.807): make the lines add up to the transaction's amount, 0.00.",
            ),
        ),
    ];
    for (name, amount, lines, want) in cases {
        assert_eq!(
            sum_problem("tx-1", amount, &lines, 2).as_deref(),
            want,
            "{name}"
        );
    }
}

#[test]
fn a_split_in_ynab_is_never_rewritten() {
    let ours = split(&[("a", -1), ("b", -2)]);
    let cases: Vec<(&str, EndState, EndState, bool)> = vec![
        ("the split holds", ours.clone(), ours.clone(), false),
        (
            "another split",
            split(&[("a", -1), ("c", -2)]),
            ours.clone(),
            true,
        ),
        ("a category over a split", ours.clone(), category("a"), true),
        (
            "a split over a category",
            category("a"),
            ours.clone(),
            false,
        ),
        (
            "the allocation is not managed",
            EndState::default(),
            EndState::default(),
            false,
        ),
    ];
    for (name, current, target, blocked) in cases {
        let got = unwritable("tx-1", &current, &target);
        assert_eq!(got.is_some(), blocked, "{name}");
        if let Some(b) = got {
            assert_eq!(b.reason, "SplitInYnab");
            assert!(b.message.contains("tx-1"), "{}", b.message);
        }
    }
}

#[test]
fn line_categories_are_listed_for_splits_only() {
    assert_eq!(line_categories(&split(&[("b", -2), ("a", -1)])), ["b", "a"]);
    assert!(line_categories(&category("a")).is_empty());
}
