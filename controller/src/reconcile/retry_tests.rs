//! How long a failed reconcile waits before it is tried again.

use std::time::Duration;

use super::retry_after;
use crate::backoff::{Attempts, FIRST, LONGEST};

/// The bounds of the `n`th (from 1) delay of one object: 250 ms doubled n-1 times, at most
/// 20 s, plus jitter of less than itself.
fn nth(n: u32) -> (Duration, Duration) {
    let base = (FIRST * 2u32.pow(n - 1)).min(LONGEST);
    (base, base * 2)
}

#[test]
fn a_conflict_looks_again_at_once_and_anything_else_backs_off_per_object() {
    let failures = Attempts::default();
    // (conflict, object, draw) → the delay's bounds, in the order they happen.
    let table: [(bool, &str, u64, (Duration, Duration)); 9] = [
        (false, "a", 0, nth(1)),
        (false, "a", 0, nth(2)),
        (false, "a", 0, nth(3)),
        // Another object starts from the first delay, whatever `a` went through.
        (false, "b", 0, nth(1)),
        // A conflict is no failure of the object: 30 ms plus up to 120 ms by the draw.
        (true, "a", 0, (ms(30), ms(31))),
        (true, "a", 119, (ms(149), ms(150))),
        (true, "a", 120, (ms(30), ms(31))),
        // ...and it leaves the object's backoff where it was.
        (false, "a", 0, nth(4)),
        (false, "b", 0, nth(2)),
    ];
    for (i, (conflict, key, draw, (least, most))) in table.into_iter().enumerate() {
        let delay = retry_after(conflict, &failures, key, draw);
        assert!(
            delay >= least && delay < most,
            "row {i}: {delay:?} not in {least:?}..{most:?}"
        );
    }
}

#[test]
fn a_success_starts_the_object_again_from_the_first_delay() {
    let failures = Attempts::default();
    for _ in 0..10 {
        retry_after(false, &failures, "a", 0);
    }
    let long = retry_after(false, &failures, "a", 0);
    assert!(long >= LONGEST, "{long:?}");
    failures.succeeded("a");
    let (least, most) = nth(1);
    let first = retry_after(false, &failures, "a", 0);
    assert!(first >= least && first < most, "{first:?}");
}

#[test]
fn the_delays_stay_bounded_however_long_an_object_fails() {
    let failures = Attempts::default();
    for _ in 0..200 {
        assert!(retry_after(false, &failures, "a", 0) < LONGEST * 2);
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
