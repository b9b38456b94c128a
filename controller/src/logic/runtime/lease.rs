//! Leader election on a `coordination.k8s.io` Lease, decided without I/O: what to do with the
//! lease as last seen, and whether this process may still act.
//!
//! The rules are client-go's. A lease held by someone else counts as expired only once its
//! record has stayed unchanged for its whole duration *on this process's own monotonic clock*,
//! so nodes whose clocks disagree never cut a holder's term short. A holder that has not renewed
//! within the renew deadline, which is shorter than the duration, stops acting before anybody
//! else may take over.

use std::time::{Duration, Instant};

/// Why the election's timing is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimingError {
    #[error(
        "--leader-elect-renew-deadline ({renew:?}) must be shorter than --leader-elect-lease-duration ({lease:?}): a holder must stop acting before another may take over"
    )]
    RenewNotShorter { renew: Duration, lease: Duration },
    #[error(
        "--leader-elect-retry-period ({retry:?}) must be shorter than --leader-elect-renew-deadline ({renew:?}), or the holder gives up before it tries to renew"
    )]
    RetryNotShorter { retry: Duration, renew: Duration },
    #[error("--leader-elect-lease-duration must be whole seconds, at least 1s (got {0:?})")]
    WholeSeconds(Duration),
}

/// How long a term lasts and how often it is renewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    lease: Duration,
    renew_deadline: Duration,
    retry: Duration,
}

impl Timing {
    pub fn new(
        lease: Duration,
        renew_deadline: Duration,
        retry: Duration,
    ) -> Result<Self, TimingError> {
        if lease.subsec_nanos() != 0 || lease < Duration::from_secs(1) {
            return Err(TimingError::WholeSeconds(lease));
        }
        if renew_deadline >= lease {
            return Err(TimingError::RenewNotShorter {
                renew: renew_deadline,
                lease,
            });
        }
        if retry >= renew_deadline {
            return Err(TimingError::RetryNotShorter {
                retry,
                renew: renew_deadline,
            });
        }
        Ok(Self {
            lease,
            renew_deadline,
            retry,
        })
    }

    /// The lease duration, as the Lease spells it.
    pub fn lease_seconds(&self) -> i32 {
        i32::try_from(self.lease.as_secs()).unwrap_or(i32::MAX)
    }

    pub fn renew_deadline(&self) -> Duration {
        self.renew_deadline
    }

    pub fn retry(&self) -> Duration {
        self.retry
    }
}

/// What a Lease says, as far as the election cares; `version` (the resourceVersion) changes with
/// every write, so a holder's renewals show as changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub version: String,
    /// `None` or empty: released.
    pub holder: Option<String>,
    pub lease_seconds: i32,
    pub transitions: i32,
}

impl Record {
    fn held_by(&self) -> Option<&str> {
        self.holder.as_deref().filter(|h| !h.is_empty())
    }
}

/// A record and when this process first saw it as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub record: Record,
    pub since: Instant,
}

/// Remembers `record`, keeping the time it was first seen if nothing changed since.
pub fn observe(previous: Option<Seen>, record: Record, now: Instant) -> Seen {
    match previous {
        Some(seen) if seen.record == record => seen,
        _ => Seen { record, since: now },
    }
}

/// The holder fields to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub holder: String,
    pub lease_seconds: i32,
    pub transitions: i32,
    /// A new term starts (acquireTime is now); otherwise the holder renews its own.
    pub new_term: bool,
}

/// The next step for `me`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// No Lease exists: create it, holding it.
    Create(Claim),
    /// Write over the record as seen; a conflict means somebody else wrote first.
    Write(Claim),
    /// Held by `holder` for at least this long on our clock: look again then (at most a retry
    /// period later).
    Wait {
        holder: String,
        for_at_most: Duration,
    },
}

/// What `me` does next with the lease last `seen`.
pub fn next(seen: Option<&Seen>, me: &str, timing: &Timing, now: Instant) -> Step {
    let Some(seen) = seen else {
        return Step::Create(Claim {
            holder: me.to_owned(),
            lease_seconds: timing.lease_seconds(),
            transitions: 0,
            new_term: true,
        });
    };
    let record = &seen.record;
    match record.held_by() {
        Some(holder) if holder == me => Step::Write(Claim {
            holder: me.to_owned(),
            lease_seconds: timing.lease_seconds(),
            transitions: record.transitions,
            new_term: false,
        }),
        Some(holder) => {
            let term = Duration::from_secs(u64::try_from(record.lease_seconds.max(1)).unwrap_or(1));
            let expires = seen.since + term;
            if now < expires {
                Step::Wait {
                    holder: holder.to_owned(),
                    for_at_most: (expires - now).min(timing.retry),
                }
            } else {
                take(record, me, timing)
            }
        }
        None => take(record, me, timing),
    }
}

fn take(record: &Record, me: &str, timing: &Timing) -> Step {
    Step::Write(Claim {
        holder: me.to_owned(),
        lease_seconds: timing.lease_seconds(),
        transitions: record.transitions.saturating_add(1),
        new_term: true,
    })
}

/// Whether a holder that last renewed at `renewed` may still act: only within the renew
/// deadline, which ends before anybody else may see the lease as expired.
pub fn may_act(renewed: Option<Instant>, timing: &Timing, now: Instant) -> bool {
    renewed.is_some_and(|at| now.saturating_duration_since(at) < timing.renew_deadline)
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
