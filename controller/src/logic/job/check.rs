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
#[path = "check_tests.rs"]
mod tests;
