//! The YNAB request budget: at most `limit` requests in any rolling hour per token, a share of
//! them kept for what people wait for, the rest paced (see [`super::pacing`]), and a pause after
//! YNAB answers 429.

use std::collections::{BTreeMap, VecDeque};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::fair_share::Turns;
use super::pacing::{Limits, Pace};
use super::request_priority::Priority;
use crate::api::budget::{RequestUse, RequestsByPriority};

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
    limits: Limits,
    sent: VecDeque<Sent>,
    pace: Pace,
    turns: Turns,
    paused_until: Option<Timestamp>,
    consecutive_429: u32,
}

/// Which share of the hour a request is taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    Reserve,
    Pool,
}

/// A request in the window.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Sent {
    at: Timestamp,
    priority: Priority,
    /// The Budget it went out for (`namespace/name`; empty when not told).
    budget: String,
    /// Taken from the paced share (the pool), not the reserve kept for people.
    pooled: bool,
}

/// A request asking for a place: why it goes out, and for which Budget (`namespace/name`),
/// so that Budgets sharing a token take turns at the paced share (see [`super::fair_share`]).
#[derive(Debug, Clone, Copy)]
pub struct Claim<'a> {
    pub priority: Priority,
    pub budget: &'a str,
}

/// How a Budget is named in the window: `namespace/name`.
pub fn budget_of(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// A request for no Budget in particular.
impl From<Priority> for Claim<'static> {
    fn from(priority: Priority) -> Self {
        Claim {
            priority,
            budget: "",
        }
    }
}

/// Why a request may not go out now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// Our own budget is spent; the oldest request leaves the window at this time.
    BudgetSpent { until: Timestamp },
    /// YNAB answered 429; we wait until this time.
    RateLimited { until: Timestamp },
    /// A request nobody waits for, held back for the share kept for people or by the pace; it
    /// may go out at this time.
    Paced { until: Timestamp },
}

impl Denied {
    /// When a request may be tried again.
    pub fn until(self) -> Timestamp {
        match self {
            Denied::BudgetSpent { until }
            | Denied::RateLimited { until }
            | Denied::Paced { until } => until,
        }
    }
}

impl RequestWindow {
    /// A window allowing `limit` requests per rolling hour, all of them kept for what people
    /// wait for: nothing of theirs is paced.
    pub fn new(limit: u32) -> Self {
        Self::with(Limits::unpaced(limit))
    }

    /// A window with `limits`.
    pub fn with(limits: Limits) -> Self {
        Self {
            limits,
            sent: VecDeque::new(),
            pace: Pace::default(),
            turns: Turns::default(),
            paused_until: None,
            consecutive_429: 0,
        }
    }

    /// Changes the limits (a Budget's `requestsPerHour` or `reservedRequestsPercent` was
    /// edited); past requests still count.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The limit per rolling hour.
    pub fn limit(&self) -> u32 {
        self.limits.per_hour
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Requests sent in the hour before `now`.
    pub fn used(&mut self, now: Timestamp) -> u32 {
        self.forget_before(now);
        u32::try_from(self.sent.len()).unwrap_or(u32::MAX)
    }

    /// Requests sent in the hour before `now` at each priority, highest first.
    pub fn used_by(&mut self, now: Timestamp) -> [(Priority, u32); 4] {
        self.forget_before(now);
        Priority::ALL.map(|p| {
            let n = self.sent.iter().filter(|s| s.priority == p).count();
            (p, u32::try_from(n).unwrap_or(u32::MAX))
        })
    }

    /// Records a request at `now` with `priority` if the budget allows it: every request counts
    /// against the hour's limit; one nobody waits for may not spend the reserve, and is paced.
    /// What people wait for spends the reserve at once, then the paced share at its pace,
    /// ahead of the rest: a backlog of approvals cannot spend the token's hour in minutes
    /// either. Between Budgets sharing the token, one whose turn comes while another that has
    /// used fewer waits for it steps aside.
    pub fn try_acquire<'a>(
        &mut self,
        now: Timestamp,
        claim: impl Into<Claim<'a>>,
    ) -> Result<(), Denied> {
        self.acquire(now, claim.into(), true)
    }

    /// Like [`RequestWindow::try_acquire`], for a bulk update sent right after the fresh read it
    /// was decided on: that read waited for the pace, so its write does not (held back, the
    /// write would send the read again at the next turn and be held again, for ever). It still
    /// moves the pace on, and may not spend the reserve or pass the hour's limit.
    pub fn try_acquire_write<'a>(
        &mut self,
        now: Timestamp,
        claim: impl Into<Claim<'a>>,
    ) -> Result<(), Denied> {
        self.acquire(now, claim.into(), false)
    }

    fn acquire(
        &mut self,
        now: Timestamp,
        claim: Claim<'_>,
        check_pace: bool,
    ) -> Result<(), Denied> {
        let Claim { priority, budget } = claim;
        let mut admitted = self.admits(now, priority, check_pace);
        if matches!(admitted, Ok(Take::Pool)) && check_pace {
            let sent = &self.sent;
            let used = |b: &str| sent.iter().filter(|s| s.pooled && s.budget == b).count();
            if let Some(until) = self.turns.step_aside(now, budget, priority, used) {
                admitted = Err(Denied::Paced { until });
            }
        }
        if let Err(Denied::Paced { until }) = admitted {
            self.turns.wait(budget, priority, until);
        }
        let pooled = admitted? == Take::Pool;
        if pooled {
            self.pace.take(now, self.limits);
            self.turns.served(budget, priority);
        }
        self.sent.push_back(Sent {
            at: now,
            priority,
            budget: budget.to_owned(),
            pooled,
        });
        Ok(())
    }

    /// What the status of the Budget `budget` (`namespace/name`, see [`budget_of`]) says of the
    /// window at `now`.
    pub fn request_use(&mut self, now: Timestamp, budget: &str) -> RequestUse {
        let [approved, asked, unasked, background] = self.used_by(now).map(|(_, n)| n);
        RequestUse {
            used_last_hour: self.used(now),
            limit_per_hour: self.limits.per_hour,
            rate_limited_until: self.paused_until(now).map(Time),
            reserved_per_hour: self.limits.reserved(),
            by_priority: Some(RequestsByPriority {
                approved,
                asked,
                unasked,
                background,
            }),
            next_paced_at: self.next_paced(now).map(Time),
            for_this_budget: Some(
                u32::try_from(self.sent.iter().filter(|s| s.budget == budget).count())
                    .unwrap_or(u32::MAX),
            ),
        }
    }

    /// When a request nobody waits for could go out, if not at `now`.
    pub fn next_paced(&mut self, now: Timestamp) -> Option<Timestamp> {
        self.next_turn(now, Priority::Background)
    }

    /// When a request at `priority` could go out, if not at `now` (turns between Budgets
    /// aside).
    pub fn next_turn(&mut self, now: Timestamp, priority: Priority) -> Option<Timestamp> {
        self.admits(now, priority, true).err().map(Denied::until)
    }

    fn admits(
        &mut self,
        now: Timestamp,
        priority: Priority,
        check_pace: bool,
    ) -> Result<Take, Denied> {
        if let Some(until) = self.paused_until {
            if now < until {
                return Err(Denied::RateLimited { until });
            }
            self.paused_until = None;
        }
        self.forget_before(now);
        if self.sent.len() >= self.limits.per_hour as usize {
            let oldest = self.sent.front().expect("a full window is not empty").at;
            return Err(Denied::BudgetSpent {
                until: oldest + WINDOW,
            });
        }
        let kept = self.sent.iter().filter(|s| !s.pooled).count();
        if priority.reserved() && kept < self.limits.reserved() as usize {
            return Ok(Take::Reserve);
        }
        let mut pooled = self.sent.iter().filter(|s| s.pooled);
        if pooled.clone().count() >= self.limits.pool() as usize {
            let until = pooled.next().map_or(now + WINDOW, |s| s.at + WINDOW);
            return Err(Denied::Paced { until });
        }
        if !check_pace {
            return Ok(Take::Pool);
        }
        self.pace
            .check(now, self.limits)
            .map(|()| Take::Pool)
            .map_err(|until| Denied::Paced { until })
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
        for sent in &self.sent {
            *out.entry(minute_of(sent.at)).or_default() += 1;
        }
        out
    }

    /// Counts what `record` says went out (from this process or one before it) and this window
    /// does not hold yet: each minute's excess at the last second of that minute, the latest it
    /// could have gone out, so none leaves the window before YNAB lets it go. The record keeps no
    /// priorities: what it adds spends the reserve first, then the paced share, and the pace goes
    /// on from it. A restart (the soak kills the leader every few minutes) gives neither a fresh
    /// reserve nor a fresh burst, so it cannot spend the hour in minutes.
    pub fn absorb(&mut self, record: &Minutes, now: Timestamp) {
        let ours = self.minutes(now);
        let mut kept = self.sent.iter().filter(|s| !s.pooled).count();
        let reserved = self.limits.reserved() as usize;
        let mut sent: Vec<Sent> = self.sent.drain(..).collect();
        for (minute, count) in record {
            let missing = count.saturating_sub(ours.get(minute).copied().unwrap_or(0));
            for _ in 0..missing {
                let pooled = kept >= reserved;
                kept += usize::from(!pooled);
                sent.push(Sent {
                    at: end_of(*minute),
                    priority: Priority::Background,
                    budget: String::new(),
                    pooled,
                });
            }
        }
        sent.sort();
        self.sent = sent.into();
        self.forget_before(now);
        let paced = self.sent.iter().filter(|s| s.pooled).map(|s| s.at);
        self.pace = std::mem::take(&mut self.pace).replayed(paced, self.limits);
    }

    fn forget_before(&mut self, now: Timestamp) {
        while self.sent.front().is_some_and(|s| s.at + WINDOW <= now) {
            self.sent.pop_front();
        }
    }
}

#[cfg(test)]
#[path = "request_window_tests.rs"]
mod tests;
