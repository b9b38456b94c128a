//! Unit tests of `logic/runtime/fair_share.rs`.

use super::*;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

#[test]
fn a_budget_steps_aside_only_for_one_that_used_less_and_whose_turn_has_come() {
    // (who else waits and until when, what each used, who asks) → steps aside until
    let used = |b: &str| if b == "busy" { 10 } else { 2 };
    type Case = (
        &'static [(&'static str, i64)],
        &'static str,
        Option<Timestamp>,
    );
    let cases: [Case; 7] = [
        (&[], "busy", None),
        (&[("quiet", 100)], "busy", Some(at(105))),
        (&[("quiet", 100)], "quiet", None),
        (&[("busy", 100)], "quiet", None),
        (&[("quiet", 101)], "busy", None),
        (&[("quiet", 70)], "busy", None),
        (&[("other", 100)], "quiet", None),
    ];
    for (waiting, asks, want) in cases {
        let mut turns = Turns::default();
        for (budget, until) in waiting {
            turns.wait(budget, at(*until));
        }
        assert_eq!(
            turns.step_aside(at(100), asks, used),
            want,
            "{waiting:?} {asks}"
        );
    }
}

#[test]
fn a_budget_served_is_no_longer_waited_for() {
    let mut turns = Turns::default();
    turns.wait("quiet", at(100));
    turns.served("quiet");
    assert_eq!(
        turns.step_aside(at(100), "busy", |b| usize::from(b == "busy")),
        None
    );
}
