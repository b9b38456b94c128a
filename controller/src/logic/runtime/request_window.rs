//! The YNAB request budget: at most `limit` requests in any rolling hour per token, and a pause
//! after YNAB answers 429.

use std::collections::{BTreeMap, VecDeque};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// Requests by minute (seconds since the epoch / 60): what a window leaves for the next process
/// (see [`super::request_record`]).
pub type Minutes = BTreeMap<i64, u32>;

/// The minute `at` falls in.
pub fn minute_of(at: Timestamp) -> i64 {
    at.as_second().div_euclid(60)
}

/// The latest instant of `minute`: a request recorded in it went out no later.
pub fn end_of(minute: i64) -> Timestamp {
    Timestamp::from_second(minute * 60 + 59).unwrap_or(Timestamp::MAX)
}

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

    /// What went out in the window at `now`, by minute: what the next process counts.
    pub fn minutes(&mut self, now: Timestamp) -> Minutes {
        self.forget_before(now);
        let mut out = Minutes::new();
        for at in &self.sent {
            *out.entry(minute_of(*at)).or_default() += 1;
        }
        out
    }

    /// Counts what `record` says went out (from this process or one before it) and this window
    /// does not hold yet: each minute's excess at the last second of that minute, the latest it
    /// could have gone out, so none leaves the window before YNAB lets it go.
    pub fn absorb(&mut self, record: &Minutes, now: Timestamp) {
        let ours = self.minutes(now);
        let mut sent: Vec<Timestamp> = self.sent.drain(..).collect();
        for (minute, count) in record {
            let missing = count.saturating_sub(ours.get(minute).copied().unwrap_or(0));
            sent.extend(std::iter::repeat_n(end_of(*minute), missing as usize));
        }
        sent.sort();
        self.sent = sent.into();
        self.forget_before(now);
    }

    fn forget_before(&mut self, now: Timestamp) {
        while self.sent.front().is_some_and(|t| *t + WINDOW <= now) {
            self.sent.pop_front();
        }
    }
}

#[cfg(test)]
#[path = "request_window_tests.rs"]
mod tests;
