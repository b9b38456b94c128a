//! Unit tests of `logic/job/check.rs`.

use super::*;

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn retries_are_bounded_in_attempts_and_time() {
    use Failure::*;
    use Next::*;
    let ms = Duration::from_millis;
    let cases = [
        // (failure, attempt, seconds since the first failure, expected)
        (Transient, 1, 0, RetryIn(ms(250))),
        (Transient, 2, 0, RetryIn(ms(500))),
        (Transient, 5, 4, RetryIn(ms(4000))),
        (Transient, 6, 8, GiveUp),
        (Transient, 60, 8, GiveUp),
        (Definite, 1, 0, GiveUp),
        // Slow attempts: the time bound ends it before the attempts do.
        (Transient, 3, 119, RetryIn(ms(1000))),
        (Transient, 4, 119, RetryIn(ms(1000))),
        (Transient, 2, 120, GiveUp),
        (Transient, 2, 500, GiveUp),
    ];
    for (failure, attempt, secs, want) in cases {
        assert_eq!(
            after_failure(BOUND, failure, attempt, t(0), t(secs)),
            want,
            "{failure:?} attempt {attempt} after {secs}s"
        );
    }
    // A first failure in the future (a clock step) does not extend the bound.
    assert_eq!(
        after_failure(BOUND, Failure::Transient, 6, t(100), t(0)),
        Next::GiveUp
    );
}

#[test]
fn the_pause_never_passes_the_deadline() {
    let b = Bound {
        max_attempts: 100,
        max_elapsed: Duration::from_secs(10),
    };
    assert_eq!(
        after_failure(b, Failure::Transient, 20, t(0), t(9)),
        Next::RetryIn(Duration::from_secs(1))
    );
}
