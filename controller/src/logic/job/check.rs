//! How long a failing authorization check (the comment fetch or the permission call) is tried
//! again before the job ends Rejected. Bounded in attempts and in time, so that one job whose
//! check keeps failing (403 from a bot without rights, a 5xx, a timeout) never holds the FIFO
//! behind it for longer than the bound.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

/// The bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// Time from the first failure after which no further attempt is made.
    pub max_elapsed: Duration,
}

/// The bound of `ledgerops run`: 6 attempts (about 8 seconds of backoff), or 2 minutes when
/// each attempt is slow.
pub const BOUND: Bound = Bound {
    max_attempts: 6,
    max_elapsed: Duration::from_secs(120),
};

/// How a check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Asking again cannot help (the job names an impossible repository, Gitea refused the
    /// request as malformed).
    Definite,
    /// It may pass later: a 5xx, a timeout, 401/403 to a bot whose rights may be fixed.
    Transient,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again after this pause.
    RetryIn(Duration),
    /// End the job as Rejected with the error.
    GiveUp,
}

/// After the `attempt`-th failed attempt (counting from 1), the first of which failed at
/// `first_failure`.
pub fn after_failure(
    bound: Bound,
    failure: Failure,
    attempt: u32,
    first_failure: Timestamp,
    now: Timestamp,
) -> Next {
    if failure == Failure::Definite || attempt >= bound.max_attempts {
        return Next::GiveUp;
    }
    let elapsed = Duration::try_from(now.duration_since(first_failure)).unwrap_or_default();
    let Some(left) = bound
        .max_elapsed
        .checked_sub(elapsed)
        .filter(|d| !d.is_zero())
    else {
        return Next::GiveUp;
    };
    let backoff = Duration::from_millis(250u64 << attempt.saturating_sub(1).min(7));
    Next::RetryIn(backoff.min(Duration::from_secs(30)).min(left))
}

#[cfg(test)]
mod tests {
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
}
