//! Spreading the requests nobody waits for across the hour. Left first come, first served, a
//! busy minute (a config repository push, a month-end, an editor annotating in a loop) spent a
//! whole hour's budget in under three minutes and left nothing for the 57 after it. The share
//! of the hour they may spend (what the reserve for people leaves) goes out as a bounded burst
//! and then at a steady pace, so that over any hour it adds up to no more than that share.
//!
//! The pace is a generic cell rate algorithm (a token bucket kept as one instant): each request
//! moves the theoretical arrival time one interval on, and a request may go out while that time
//! is at most a burst's worth of intervals ahead of now.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::api::budget::BudgetSpec;

/// The span the pool is spread over: the request window's rolling hour.
const WINDOW: SignedDuration = SignedDuration::from_hours(1);

/// The 5-minute spans of an hour: the burst is one span's share of the pool.
const SPANS_PER_HOUR: u32 = 12;

/// A token's hourly limit, and how much of it only people's decisions may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests per rolling hour (a Budget's `spec.requestsPerHour`).
    pub per_hour: u32,
    /// The percentage of `per_hour` kept for approved writes and asked syncs
    /// (`spec.reservedRequestsPercent`).
    pub reserved_percent: u8,
}

impl Limits {
    /// `per_hour` with nothing kept back.
    pub fn unreserved(per_hour: u32) -> Self {
        Self {
            per_hour,
            reserved_percent: 0,
        }
    }

    /// `per_hour`, all kept for what people wait for (the rest is never sent).
    pub fn unpaced(per_hour: u32) -> Self {
        Self {
            per_hour,
            reserved_percent: 100,
        }
    }

    /// A Budget's limits, from its spec.
    pub fn of(spec: &BudgetSpec) -> Self {
        Self {
            per_hour: spec.requests_per_hour,
            reserved_percent: spec.reserved_requests_percent,
        }
    }

    /// Requests per hour kept for people (rounded down).
    pub fn reserved(self) -> u32 {
        let kept = u64::from(self.per_hour) * u64::from(self.reserved_percent.min(100)) / 100;
        u32::try_from(kept).unwrap_or(self.per_hour)
    }

    /// Requests per hour the rest may spend: what the reserve leaves.
    pub fn pool(self) -> u32 {
        self.per_hour - self.reserved()
    }

    /// How many of the pool may go out back to back: one 5-minute span's share of it, at least
    /// one. A quarter (tried first) let the soak's first minute spend 37 requests on bulk updates
    /// of one to nine items each, where the same requests later in the hour carried twenty to a
    /// hundred: work that waits a little coalesces.
    pub fn burst(self) -> u32 {
        (self.pool() / SPANS_PER_HOUR).max(1).min(self.pool())
    }

    /// The steady pace after a burst: the rest of the pool, evenly over the hour.
    pub fn interval(self) -> SignedDuration {
        let steady = self.pool().saturating_sub(self.burst()).max(1);
        WINDOW / i32::try_from(steady).unwrap_or(i32::MAX)
    }
}

/// The pace of one token's paced requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pace {
    /// When the next request would be due at the steady pace; `None` before the first.
    due: Option<Timestamp>,
}

impl Pace {
    /// `Ok` if a paced request may go out at `now`, else the earliest instant it may.
    pub fn check(&self, now: Timestamp, limits: Limits) -> Result<(), Timestamp> {
        if limits.pool() == 0 {
            return Err(now + WINDOW);
        }
        let ahead = i32::try_from(limits.burst() - 1)
            .ok()
            .and_then(|n| limits.interval().checked_mul(n))
            .unwrap_or(WINDOW);
        match self.due {
            Some(due) if now < due - ahead => Err(due - ahead),
            _ => Ok(()),
        }
    }

    /// Counts a paced request sent at `now` (after [`Pace::check`] allowed it).
    pub fn take(&mut self, now: Timestamp, limits: Limits) {
        let from = self.due.map_or(now, |due| due.max(now));
        self.due = Some(from + limits.interval());
    }

    /// This pace, or the one `sent` (paced requests, oldest first) leaves, whichever holds the
    /// next request back longer: a process that takes over from another (a restart, a new
    /// leader) goes on at the pace rather than with a fresh burst.
    pub fn replayed(self, sent: impl IntoIterator<Item = Timestamp>, limits: Limits) -> Self {
        let mut replay = Self::default();
        for at in sent {
            replay.take(at, limits);
        }
        if replay.due > self.due { replay } else { self }
    }
}

#[cfg(test)]
#[path = "pacing_tests.rs"]
mod tests;
