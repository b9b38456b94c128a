//! Unit tests of `logic/runtime/fair_share.rs`.

use super::*;
use Priority::{Approved, Background};

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + s).unwrap()
}

#[test]
fn a_request_steps_aside_only_for_one_that_goes_first_and_whose_turn_has_come() {
    // (who else waits, at which priority, until when; who asks, at which priority) → steps
    // aside until
    let used = |b: &str| if b == "busy" { 10 } else { 2 };
    type Case = (
        &'static [(&'static str, Priority, i64)],
        (&'static str, Priority),
        Option<Timestamp>,
    );
    let cases: [Case; 10] = [
        (&[], ("busy", Background), None),
        (
            &[("quiet", Background, 100)],
            ("busy", Background),
            Some(at(105)),
        ),
        (&[("quiet", Background, 100)], ("quiet", Background), None),
        (&[("busy", Background, 100)], ("quiet", Background), None),
        (&[("quiet", Background, 101)], ("busy", Background), None),
        (&[("quiet", Background, 70)], ("busy", Background), None),
        (&[("other", Background, 100)], ("quiet", Background), None),
        // A person's write goes first, whoever used more, even the same Budget's.
        (
            &[("busy", Approved, 100)],
            ("quiet", Background),
            Some(at(105)),
        ),
        (
            &[("busy", Approved, 100)],
            ("busy", Background),
            Some(at(105)),
        ),
        (&[("quiet", Background, 100)], ("busy", Approved), None),
    ];
    for (waiting, (asks, priority), want) in cases {
        let mut turns = Turns::default();
        for (budget, p, until) in waiting {
            turns.wait(budget, *p, at(*until));
        }
        assert_eq!(
            turns.step_aside(at(100), asks, priority, used),
            want,
            "{waiting:?} {asks} {priority:?}"
        );
    }
}

#[test]
fn a_request_served_is_no_longer_waited_for() {
    let mut turns = Turns::default();
    turns.wait("quiet", Background, at(100));
    turns.served("quiet", Background);
    let used = |b: &str| usize::from(b == "busy");
    assert_eq!(turns.step_aside(at(100), "busy", Background, used), None);
}
