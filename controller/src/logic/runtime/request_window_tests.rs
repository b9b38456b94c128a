//! Unit tests of `logic/runtime/request_window.rs`.

use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn allows_the_limit_then_refuses_until_the_oldest_leaves_the_hour() {
    let mut w = RequestWindow::new(3);
    for s in [0, 10, 20] {
        assert_eq!(w.try_acquire(at(s)), Ok(()));
    }
    assert_eq!(
        w.try_acquire(at(30)),
        Err(Denied::BudgetSpent { until: at(3600) })
    );
    assert_eq!(w.used(at(30)), 3);
    assert_eq!(
        w.try_acquire(at(3599)),
        Err(Denied::BudgetSpent { until: at(3600) })
    );
    assert_eq!(w.try_acquire(at(3600)), Ok(()));
    assert_eq!(w.used(at(3600)), 3);
    assert_eq!(w.used(at(3620)), 1);
}

#[test]
fn refusals_are_not_counted() {
    let mut w = RequestWindow::new(1);
    assert_eq!(w.try_acquire(at(0)), Ok(()));
    for s in 1..100 {
        assert!(w.try_acquire(at(s)).is_err());
    }
    assert_eq!(w.used(at(100)), 1);
}

#[test]
fn a_429_pauses_with_doubling_up_to_an_hour_and_resets_after_an_answer() {
    let mut w = RequestWindow::new(200);
    assert_eq!(w.rate_limited(at(0)), at(60));
    assert_eq!(
        w.try_acquire(at(59)),
        Err(Denied::RateLimited { until: at(60) })
    );
    assert_eq!(w.paused_until(at(59)), Some(at(60)));
    assert_eq!(w.try_acquire(at(60)), Ok(()));
    assert_eq!(w.paused_until(at(60)), None);
    assert_eq!(w.rate_limited(at(100)), at(220));
    assert_eq!(w.rate_limited(at(300)), at(540));
    for _ in 0..10 {
        w.rate_limited(at(1000));
    }
    assert_eq!(w.rate_limited(at(1000)), at(4600));
    w.answered();
    assert_eq!(w.rate_limited(at(5000)), at(5060));
}

#[test]
fn lowering_the_limit_counts_past_requests() {
    let mut w = RequestWindow::new(10);
    for s in 0..5 {
        w.try_acquire(at(s)).unwrap();
    }
    w.set_limit(5);
    assert_eq!(
        w.try_acquire(at(6)),
        Err(Denied::BudgetSpent { until: at(3600) })
    );
    assert_eq!(w.limit(), 5);
}

/// A new process (a restart, a new leader) counts what the one before it recorded: with 3 of 4
/// sent by the last process, it sends one more in that hour, not four.
#[test]
fn a_new_window_counts_what_an_earlier_process_recorded() {
    let mut before = RequestWindow::new(4);
    for s in [0, 70, 130] {
        assert_eq!(before.try_acquire(at(s)), Ok(()));
    }
    let record = before.minutes(at(140));
    assert_eq!(record.values().sum::<u32>(), 3);

    let mut after = RequestWindow::new(4);
    after.absorb(&record, at(200));
    assert_eq!(after.used(at(200)), 3);
    assert_eq!(after.try_acquire(at(200)), Ok(()));
    // The oldest counts until an hour after the last second of its minute.
    let oldest = end_of(minute_of(at(0)));
    assert_eq!(
        after.try_acquire(at(210)),
        Err(Denied::BudgetSpent {
            until: oldest + WINDOW
        })
    );
    // Absorbing again, or what it already counts itself, adds nothing.
    after.absorb(&record, at(220));
    after.absorb(&after.clone().minutes(at(220)), at(220));
    assert_eq!(after.used(at(220)), 4);
    assert_eq!(after.try_acquire(oldest + WINDOW), Ok(()));
}
