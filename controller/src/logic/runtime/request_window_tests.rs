//! Unit tests of `logic/runtime/request_window.rs`.

use super::*;
use crate::logic::runtime::pacing::Limits;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn allows_the_limit_then_refuses_until_the_oldest_leaves_the_hour() {
    let mut w = RequestWindow::new(3);
    for s in [0, 10, 20] {
        assert_eq!(w.try_acquire(at(s), Priority::Approved), Ok(()));
    }
    assert_eq!(
        w.try_acquire(at(30), Priority::Approved),
        Err(Denied::BudgetSpent { until: at(3600) })
    );
    assert_eq!(w.used(at(30)), 3);
    assert_eq!(
        w.try_acquire(at(3599), Priority::Approved),
        Err(Denied::BudgetSpent { until: at(3600) })
    );
    assert_eq!(w.try_acquire(at(3600), Priority::Approved), Ok(()));
    assert_eq!(w.used(at(3600)), 3);
    assert_eq!(w.used(at(3620)), 1);
}

#[test]
fn refusals_are_not_counted() {
    let mut w = RequestWindow::new(1);
    assert_eq!(w.try_acquire(at(0), Priority::Approved), Ok(()));
    for s in 1..100 {
        assert!(w.try_acquire(at(s), Priority::Approved).is_err());
    }
    assert_eq!(w.used(at(100)), 1);
}

#[test]
fn a_429_pauses_with_doubling_up_to_an_hour_and_resets_after_an_answer() {
    let mut w = RequestWindow::new(200);
    assert_eq!(w.rate_limited(at(0)), at(60));
    assert_eq!(
        w.try_acquire(at(59), Priority::Approved),
        Err(Denied::RateLimited { until: at(60) })
    );
    assert_eq!(w.paused_until(at(59)), Some(at(60)));
    assert_eq!(w.try_acquire(at(60), Priority::Approved), Ok(()));
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
        w.try_acquire(at(s), Priority::Approved).unwrap();
    }
    w.set_limits(Limits::unreserved(5));
    assert_eq!(
        w.try_acquire(at(6), Priority::Approved),
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
        assert_eq!(before.try_acquire(at(s), Priority::Approved), Ok(()));
    }
    let record = before.minutes(at(140));
    assert_eq!(record.values().sum::<u32>(), 3);

    let mut after = RequestWindow::new(4);
    after.absorb(&record, at(200));
    assert_eq!(after.used(at(200)), 3);
    assert_eq!(after.try_acquire(at(200), Priority::Approved), Ok(()));
    // The oldest counts until an hour after the last second of its minute.
    let oldest = end_of(minute_of(at(0)));
    assert_eq!(
        after.try_acquire(at(210), Priority::Approved),
        Err(Denied::BudgetSpent {
            until: oldest + WINDOW
        })
    );
    // Absorbing again, or what it already counts itself, adds nothing.
    after.absorb(&record, at(220));
    after.absorb(&after.clone().minutes(at(220)), at(220));
    assert_eq!(after.used(at(220)), 4);
    assert_eq!(
        after.try_acquire(oldest + WINDOW, Priority::Approved),
        Ok(())
    );
}

/// With 180 an hour and a quarter kept for people, the background may send its burst and then
/// only at its pace, and never the last 45; a person's approved write goes out at once whatever
/// the background did.
#[test]
fn background_work_never_spends_the_reserve_and_is_paced() {
    let limits = Limits {
        per_hour: 180,
        reserved_percent: 25,
    };
    let mut w = RequestWindow::with(limits);
    let mut sent = 0;
    while w.try_acquire(at(0), Priority::Background).is_ok() {
        sent += 1;
    }
    assert_eq!(sent, limits.burst());
    let Err(Denied::Paced { until }) = w.try_acquire(at(0), Priority::Unasked) else {
        panic!("the burst is spent")
    };
    assert!(until > at(0) && until < at(60), "{until}");
    assert_eq!(w.next_paced(at(0)), Some(until));
    assert_eq!(w.try_acquire(at(0), Priority::Approved), Ok(()));
    assert_eq!(w.try_acquire(at(0), Priority::Asked), Ok(()));
    // The unasked write told to wait goes first at its turn; the background steps aside.
    assert!(matches!(
        w.try_acquire(until, Priority::Background),
        Err(Denied::Paced { .. })
    ));
    assert_eq!(w.try_acquire(until, Priority::Unasked), Ok(()));
    // An hour's greedy background: the burst, then one every 3600/124 s, 134 before the
    // hour ends; the reserve stays.
    let mut now = until;
    while now < at(3599) {
        match w.try_acquire(now, Priority::Background) {
            Ok(()) => {}
            Err(denied) => now = denied.until().min(at(3599)),
        }
    }
    let used = w.used_by(at(3599));
    assert_eq!(
        used,
        [
            (Priority::Approved, 1),
            (Priority::Asked, 1),
            (Priority::Unasked, 1),
            (Priority::Background, 133)
        ]
    );
    assert!(w.next_paced(at(3599)).is_some());
    // People spend the rest of the reserve at once, then wait for the pace like the rest.
    while w.try_acquire(at(3599), Priority::Approved).is_ok() {}
    assert_eq!(w.used_by(at(3599))[0], (Priority::Approved, 1 + 43));
    assert!(matches!(
        w.try_acquire(at(3599), Priority::Approved),
        Err(Denied::Paced { .. })
    ));
}

/// People may spend what the background left: the reserve is a floor for them, not a ceiling.
/// Beyond it they are paced too, so a backlog of approvals (a person answering a hundred
/// requests in the morning, or automation holding `approve`) does not spend the token's hour in
/// minutes and leave it silent for the rest.
#[test]
fn people_spend_the_reserve_at_once_and_the_rest_at_its_pace() {
    let limits = Limits {
        per_hour: 8,
        reserved_percent: 25,
    };
    let mut w = RequestWindow::with(limits);
    let mut sent = 0;
    while w.try_acquire(at(0), Priority::Approved).is_ok() {
        sent += 1;
    }
    assert_eq!(
        sent,
        limits.reserved() + limits.burst(),
        "the reserve, then the burst"
    );
    let mut now = at(0);
    let mut times = Vec::new();
    while now < at(3600) {
        match w.try_acquire(now, Priority::Approved) {
            Ok(()) => times.push(now),
            Err(denied) => now = denied.until(),
        }
    }
    // The reserve and the burst at once, then one every 12 minutes: 7 of the 8 in the hour.
    assert_eq!(w.used(at(3599)), 7, "the hour, spread: {times:?}");
    assert!(
        times.iter().all(|t| *t > at(600)),
        "no burst after the first: {times:?}"
    );
}

/// What a process before this one recorded spends the reserve first, then the paced share, and
/// the pace goes on from it: a restart (or a new leader) gives neither a fresh reserve nor a
/// fresh burst. Before, the soak's leader kills each brought both, and the hour was spent in
/// its first five minutes.
#[test]
fn recorded_requests_spend_the_reserve_first_and_the_pace_goes_on() {
    let limits = Limits {
        per_hour: 200,
        reserved_percent: 25,
    };
    let mut before = RequestWindow::with(limits);
    let burst = limits.burst() as usize;
    for _ in 0..burst {
        before.try_acquire(at(0), Priority::Background).unwrap();
    }
    for _ in 0..limits.reserved() {
        before.try_acquire(at(0), Priority::Approved).unwrap();
    }
    let paced =
        |w: &mut RequestWindow, p| matches!(w.try_acquire(at(10), p), Err(Denied::Paced { .. }));
    assert!(paced(&mut before, Priority::Background));
    assert!(paced(&mut before, Priority::Approved));

    let mut after = RequestWindow::with(limits);
    after.absorb(&before.minutes(at(10)), at(10));
    assert_eq!(after.used(at(10)), 12 + 50);
    assert!(paced(&mut after, Priority::Background), "no fresh burst");
    assert!(paced(&mut after, Priority::Approved), "no fresh reserve");
    // The pace goes on: the next paced request goes at its turn, people's first.
    let turn = after.next_turn(at(10), Priority::Approved).unwrap();
    assert!(turn <= at(60) + limits.interval(), "{turn}");
    assert_eq!(after.try_acquire(turn, Priority::Approved), Ok(()));

    // Fewer than the reserve recorded: they spend it, and the paced share is untouched.
    let mut quiet = RequestWindow::new(200);
    for _ in 0..3 {
        quiet.try_acquire(at(0), Priority::Approved).unwrap();
    }
    let mut after = RequestWindow::with(limits);
    after.absorb(&quiet.minutes(at(10)), at(10));
    assert_eq!(after.try_acquire(at(10), Priority::Background), Ok(()));
    assert_eq!(after.try_acquire(at(10), Priority::Approved), Ok(()));
}

/// Once the burst is spent, a background batch's fresh read waits for its turn, and the bulk
/// update decided on it goes out right after rather than wait for the next turn (where the read
/// would go out again, and its write wait again, for ever); the pace then counts both, and the
/// reserve still holds for writes.
#[test]
fn a_write_follows_its_read_and_the_pace_counts_both() {
    let limits = Limits {
        per_hour: 180,
        reserved_percent: 25,
    };
    let mut w = RequestWindow::with(limits);
    while w.try_acquire(at(0), Priority::Background).is_ok() {}
    let Err(Denied::Paced { until: turn }) = w.try_acquire(at(0), Priority::Background) else {
        panic!("the burst is spent")
    };
    assert_eq!(w.try_acquire(turn, Priority::Background), Ok(()));
    assert_eq!(w.try_acquire_write(turn, Priority::Background), Ok(()));
    let Err(Denied::Paced { until: next }) = w.try_acquire(turn, Priority::Background) else {
        panic!("the next read waits")
    };
    let interval = turn.duration_since(at(0));
    assert!(next.duration_since(turn) > interval, "{turn} {next}");

    // A write never spends the reserve: with the pool spent, it waits like any paced request.
    let mut full = RequestWindow::with(Limits {
        per_hour: 8,
        reserved_percent: 25,
    });
    // Six writes that followed their reads: the pool of six is spent.
    for _ in 0..6 {
        full.try_acquire_write(at(0), Priority::Background).unwrap();
    }
    assert!(matches!(
        full.try_acquire_write(at(10), Priority::Unasked),
        Err(Denied::Paced { .. })
    ));
    assert_eq!(full.try_acquire_write(at(10), Priority::Approved), Ok(()));
}

/// Two Budgets share a token, both with more work than the pace lets out, each coming back at
/// the time it was told; the busy one always asks first. Without turns it takes every one;
/// with them, the hour's paced requests split evenly. A Budget asking for people is never held.
#[test]
fn budgets_sharing_a_token_take_turns_at_the_paced_share() {
    let limits = Limits {
        per_hour: 180,
        reserved_percent: 25,
    };
    let mut w = RequestWindow::with(limits);
    let mut next = [at(0), at(0)];
    let mut got = [0u32, 0];
    let budgets = ["ns/busy", "ns/quiet"];
    for second in 0..3600 {
        let now = at(second);
        for i in 0..2 {
            if next[i] > now {
                continue;
            }
            let claim = Claim {
                priority: Priority::Background,
                budget: budgets[i],
            };
            match w.try_acquire(now, claim) {
                Ok(()) => got[i] += 1,
                Err(denied) => next[i] = denied.until(),
            }
        }
    }
    let total = got[0] + got[1];
    assert!(
        total <= limits.pool() && total + 2 >= limits.pool(),
        "{got:?}"
    );
    assert!(got[0].abs_diff(got[1]) <= 1, "{got:?}");

    let people = Claim {
        priority: Priority::Approved,
        budget: "ns/busy",
    };
    assert_eq!(w.try_acquire(at(3599), people), Ok(()));
    // Each Budget's status shows its own share of the token's hour.
    let busy = w.request_use(at(3599), "ns/busy");
    assert_eq!(busy.for_this_budget, Some(got[0] + 1));
    assert_eq!(
        w.request_use(at(3599), "ns/quiet").for_this_budget,
        Some(got[1])
    );
    assert_eq!(busy.used_last_hour, got[0] + got[1] + 1);
}
