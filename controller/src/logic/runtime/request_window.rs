//! The YNAB request budget: at most `limit` requests in any rolling hour per token, and a pause
//! after YNAB answers 429.

use std::collections::VecDeque;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The rolling window YNAB counts requests in.
pub const WINDOW: SignedDuration = SignedDuration::from_hours(1);
const FIRST_PAUSE: SignedDuration = SignedDuration::from_mins(1);

/// Requests sent with one token, and whether YNAB asked us to stop.
#[derive(Debug, Clone)]
pub struct RequestWindow {
    limit: u32,
    sent: VecDeque<Timestamp>,
    paused_until: Option<Timestamp>,
    consecutive_429: u32,
}

/// Why a request may not go out now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// Our own budget is spent; the oldest request leaves the window at this time.
    BudgetSpent { until: Timestamp },
    /// YNAB answered 429; we wait until this time.
    RateLimited { until: Timestamp },
}

impl Denied {
    /// When a request may be tried again.
    pub fn until(self) -> Timestamp {
        match self {
            Denied::BudgetSpent { until } | Denied::RateLimited { until } => until,
        }
    }
}

impl RequestWindow {
    /// A window allowing `limit` requests per rolling hour.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            sent: VecDeque::new(),
            paused_until: None,
            consecutive_429: 0,
        }
    }

    /// Changes the limit (a Budget's `requestsPerHour` was edited); past requests still count.
    pub fn set_limit(&mut self, limit: u32) {
        self.limit = limit;
    }

    /// The limit per rolling hour.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Requests sent in the hour before `now`.
    pub fn used(&mut self, now: Timestamp) -> u32 {
        self.forget_before(now);
        u32::try_from(self.sent.len()).unwrap_or(u32::MAX)
    }

    /// Records a request at `now` if the budget allows it.
    pub fn try_acquire(&mut self, now: Timestamp) -> Result<(), Denied> {
        if let Some(until) = self.paused_until {
            if now < until {
                return Err(Denied::RateLimited { until });
            }
            self.paused_until = None;
        }
        self.forget_before(now);
        if self.sent.len() >= self.limit as usize {
            let oldest = *self.sent.front().expect("a full window is not empty");
            return Err(Denied::BudgetSpent {
                until: oldest + WINDOW,
            });
        }
        self.sent.push_back(now);
        Ok(())
    }

    /// YNAB answered 429 at `now`: pause, one minute the first time, doubling each time in a row
    /// up to an hour (YNAB sends no Retry-After, and others may share the token).
    pub fn rate_limited(&mut self, now: Timestamp) -> Timestamp {
        let doublings = self.consecutive_429.min(6);
        self.consecutive_429 += 1;
        let pause = (FIRST_PAUSE * (1 << doublings)).min(WINDOW);
        let until = now + pause;
        self.paused_until = Some(until);
        until
    }

    /// YNAB answered something other than 429: the next 429 starts from a short pause again.
    pub fn answered(&mut self) {
        self.consecutive_429 = 0;
    }

    /// Until when requests are paused after a 429, if they are.
    pub fn paused_until(&self, now: Timestamp) -> Option<Timestamp> {
        self.paused_until.filter(|until| now < *until)
    }

    fn forget_before(&mut self, now: Timestamp) {
        while self.sent.front().is_some_and(|t| *t + WINDOW <= now) {
            self.sent.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
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
}
