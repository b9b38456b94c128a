//! When a failed YNAB request is tried again. Reads are safe to repeat; updates by id (PUT,
//! PATCH) set the same end state again, so a server error may be retried; a create (POST) is
//! never repeated blindly, and a write cut off in transit is never retried here: its outcome is
//! unknown, and the caller settles it by reading YNAB.

use std::time::Duration;

/// The kind of request that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// GET.
    Read,
    /// PUT or PATCH of records found by id: repeating sets the same values.
    IdempotentWrite,
    /// POST: repeating may create twice.
    Create,
}

/// How the attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// YNAB answered 5xx.
    ServerError,
    /// No answer: connection refused, reset or timed out, before or after the request was sent.
    Transport,
}

/// Attempts per request, the first included.
pub const MAX_ATTEMPTS: u32 = 3;

/// The pause before attempt `attempt + 1` (attempts count from 1), or `None` to give up.
pub fn next_delay(kind: RequestKind, failure: Failure, attempt: u32) -> Option<Duration> {
    let retryable = match (kind, failure) {
        (RequestKind::Read, _) => true,
        (RequestKind::IdempotentWrite, Failure::ServerError) => true,
        (RequestKind::IdempotentWrite, Failure::Transport) | (RequestKind::Create, _) => false,
    };
    (retryable && attempt < MAX_ATTEMPTS)
        .then(|| Duration::from_millis(250 * 4u64.pow(attempt - 1)))
}

#[cfg(test)]
#[path = "retry_tests.rs"]
mod tests;
