//! Unit tests of `logic/runtime/pacing.rs`.

use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

/// Sends a paced request whenever one may go out, from `from` for `secs`, and returns when each
/// went out.
fn greedy(limits: Limits, from: i64, secs: i64) -> Vec<i64> {
    let mut pace = Pace::default();
    let mut sent = Vec::new();
    let mut now = at(from);
    while now < at(from + secs) {
        match pace.check(now, limits) {
            Ok(()) => {
                pace.take(now, limits);
                sent.push(now.as_second() - at(0).as_second());
            }
            Err(next) => {
                assert!(next > now, "a refusal names a later instant");
                now = next;
            }
        }
    }
    sent
}

#[test]
fn shares_by_table() {
    // (per hour, reserved %, reserved, pool, burst)
    let table = [
        (180, 25, 45, 135, 11),
        (200, 25, 50, 150, 12),
        (200, 0, 0, 200, 16),
        (2_000, 0, 0, 2_000, 166),
        (4, 25, 1, 3, 1),
        (1, 25, 0, 1, 1),
        (10, 90, 9, 1, 1),
        (10, 100, 10, 0, 0),
        (10, 255, 10, 0, 0),
    ];
    for (per_hour, reserved_percent, reserved, pool, burst) in table {
        let l = Limits {
            per_hour,
            reserved_percent,
        };
        assert_eq!(
            (l.reserved(), l.pool(), l.burst()),
            (reserved, pool, burst),
            "{l:?}"
        );
    }
}

/// Demand that never stops gets the burst at once, then the pool's rest evenly: never more
/// than the pool in any hour, and no five minutes without a request.
#[test]
fn a_burst_then_a_steady_pace_that_never_exceeds_the_pool_in_any_hour() {
    let limits = Limits {
        per_hour: 180,
        reserved_percent: 25,
    };
    let sent = greedy(limits, 0, 3 * 3600);
    assert_eq!(sent[..11], [0; 11]);
    assert!(sent[11] > 0, "one 5-minute span's share, no more");
    for start in 0..(2 * 3600) {
        let in_hour = sent
            .iter()
            .filter(|s| (start..start + 3600).contains(*s))
            .count();
        assert!(
            in_hour <= 135,
            "{in_hour} paced requests in the hour from {start}s"
        );
    }
    let longest_gap = sent.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(longest_gap < 300, "a gap of {longest_gap}s");
    // 124 more in the first hour, one every 3600/124 s.
    let first_hour = sent.iter().filter(|s| **s < 3600).count();
    assert_eq!(first_hour, 135);
}

/// A quiet spell refills the burst, and no more than the burst.
#[test]
fn idle_time_refills_the_burst_only() {
    let limits = Limits {
        per_hour: 200,
        reserved_percent: 25,
    };
    let mut pace = Pace::default();
    for _ in 0..12 {
        pace.check(at(0), limits).unwrap();
        pace.take(at(0), limits);
    }
    assert!(pace.check(at(0), limits).is_err());
    let later = at(10 * 3600);
    for _ in 0..12 {
        pace.check(later, limits).unwrap();
        pace.take(later, limits);
    }
    assert_eq!(pace.check(later, limits), Err(later + limits.interval()));
}

#[test]
fn a_pool_of_nothing_waits_an_hour() {
    let limits = Limits {
        per_hour: 10,
        reserved_percent: 100,
    };
    assert_eq!(Pace::default().check(at(0), limits), Err(at(3600)));
}
