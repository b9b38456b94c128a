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
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing::new(
            Duration::from_secs(15),
            Duration::from_secs(10),
            Duration::from_secs(2),
        )
        .unwrap()
    }

    fn record(version: &str, holder: Option<&str>, transitions: i32) -> Record {
        Record {
            version: version.into(),
            holder: holder.map(str::to_owned),
            lease_seconds: 15,
            transitions,
        }
    }

    fn claim(transitions: i32, new_term: bool) -> Claim {
        Claim {
            holder: "me".into(),
            lease_seconds: 15,
            transitions,
            new_term,
        }
    }

    #[test]
    fn timing_is_refused_unless_deadline_and_retry_nest_inside_the_term() {
        let s = Duration::from_secs;
        let cases = [
            (s(15), s(10), s(2), None),
            (s(15), s(15), s(2), Some("renew-deadline")),
            (s(15), s(20), s(2), Some("renew-deadline")),
            (s(15), s(10), s(10), Some("retry-period")),
            (
                Duration::from_millis(1500),
                s(1),
                Duration::from_millis(100),
                Some("whole seconds"),
            ),
            (
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
                Some("whole seconds"),
            ),
        ];
        for (lease, renew, retry, refused) in cases {
            let got = Timing::new(lease, renew, retry);
            match refused {
                None => assert!(got.is_ok(), "{lease:?} {renew:?} {retry:?}"),
                Some(word) => {
                    let e = got.unwrap_err().to_string();
                    assert!(e.contains(word), "{lease:?} {renew:?} {retry:?}: {e}");
                }
            }
        }
    }

    #[test]
    fn what_to_do_with_the_lease() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let seen = |r: Record, at: Instant| {
            Some(Seen {
                record: r,
                since: at,
            })
        };
        let cases: Vec<(&str, Option<Seen>, Instant, Step)> = vec![
            ("no lease yet", None, t0, Step::Create(claim(0, true))),
            (
                "ours: renew, same term",
                seen(record("1", Some("me"), 3), t0),
                t0 + s(30),
                Step::Write(claim(3, false)),
            ),
            (
                "released: take, a new term",
                seen(record("1", None, 3), t0),
                t0,
                Step::Write(claim(4, true)),
            ),
            (
                "released as an empty holder",
                seen(record("1", Some(""), 3), t0),
                t0,
                Step::Write(claim(4, true)),
            ),
            (
                "theirs, just renewed: wait a retry period",
                seen(record("1", Some("other"), 3), t0),
                t0 + s(1),
                Step::Wait {
                    holder: "other".into(),
                    for_at_most: s(2),
                },
            ),
            (
                "theirs, about to expire: wait only until then",
                seen(record("1", Some("other"), 3), t0),
                t0 + s(14),
                Step::Wait {
                    holder: "other".into(),
                    for_at_most: s(1),
                },
            ),
            (
                "theirs, unchanged for the whole term: take",
                seen(record("1", Some("other"), 3), t0),
                t0 + s(15),
                Step::Write(claim(4, true)),
            ),
        ];
        for (what, seen, now, want) in cases {
            assert_eq!(next(seen.as_ref(), "me", &timing(), now), want, "{what}");
        }
    }

    #[test]
    fn a_term_counts_from_when_we_saw_the_record_change_not_from_its_clock() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let first = observe(None, record("1", Some("other"), 0), t0);
        // The same record seen again keeps its time: the holder has stopped renewing.
        let same = observe(
            Some(first.clone()),
            record("1", Some("other"), 0),
            t0 + s(10),
        );
        assert_eq!(same.since, t0);
        assert!(matches!(
            next(Some(&same), "me", &timing(), t0 + s(15)),
            Step::Write(_)
        ));
        // A renewal (a new resourceVersion) restarts the term on our clock.
        let renewed = observe(Some(same), record("2", Some("other"), 0), t0 + s(12));
        assert_eq!(renewed.since, t0 + s(12));
        assert!(matches!(
            next(Some(&renewed), "me", &timing(), t0 + s(15)),
            Step::Wait { .. }
        ));
    }

    #[test]
    fn a_holder_acts_only_within_the_renew_deadline() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let cases = [
            (None, t0, false),
            (Some(t0), t0, true),
            (Some(t0), t0 + s(9), true),
            (Some(t0), t0 + s(10), false),
            (Some(t0), t0 + s(60), false),
            // A renewal stamped after `now` (read before it was written) still counts.
            (Some(t0 + s(1)), t0, true),
        ];
        for (renewed, now, want) in cases {
            assert_eq!(
                may_act(renewed, &timing(), now),
                want,
                "{renewed:?} {now:?}"
            );
        }
    }
}
