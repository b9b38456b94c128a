//! The retry delays, and their count per key.

use super::*;

/// Whether `delay` is the `n`th (from 1) delay: 250ms doubled n-1 times, at most 20s, plus
/// jitter of less than itself.
fn is_nth(delay: Duration, n: u32) -> bool {
    let base = (FIRST * 2u32.pow(n.min(16) - 1)).min(LONGEST);
    delay >= base && delay < base * 2
}

#[test]
fn delays_double_with_jitter_and_are_capped() {
    let mut delays = retries();
    for n in 1..=12 {
        let delay = next(&mut delays);
        assert!(is_nth(delay, n), "delay {n}: {delay:?}");
    }
    // Never giving up, never longer than twice the cap.
    for _ in 0..1000 {
        assert!(next(&mut delays) < LONGEST * 2);
    }
}

#[test]
fn delays_of_two_retries_differ() {
    let (a, b): (Vec<Duration>, Vec<Duration>) = {
        let (mut x, mut y) = (retries(), retries());
        (0..8).map(|_| (next(&mut x), next(&mut y))).unzip()
    };
    assert_ne!(
        a, b,
        "jitter: two jobs failing together do not retry in step"
    );
}

#[test]
fn each_key_backs_off_on_its_own_until_it_succeeds() {
    let attempts = Attempts::default();
    assert!(is_nth(attempts.backoff("a"), 1));
    assert!(is_nth(attempts.backoff("a"), 2));
    assert!(is_nth(attempts.backoff("b"), 1));
    attempts.succeeded("a");
    assert!(is_nth(attempts.backoff("a"), 1));
}
