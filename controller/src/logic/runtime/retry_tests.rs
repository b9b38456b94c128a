//! Unit tests of `logic/runtime/retry.rs`.

use super::*;
use Failure::*;
use RequestKind::*;

#[test]
fn reads_retry_on_any_failure_with_growing_pauses() {
    for failure in [ServerError, Transport] {
        assert_eq!(
            next_delay(Read, failure, 1),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            next_delay(Read, failure, 2),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(next_delay(Read, failure, 3), None);
    }
}

#[test]
fn writes_by_id_retry_only_on_server_errors() {
    assert_eq!(
        next_delay(IdempotentWrite, ServerError, 1),
        Some(Duration::from_millis(250))
    );
    assert_eq!(next_delay(IdempotentWrite, Transport, 1), None);
    assert_eq!(next_delay(IdempotentWrite, ServerError, MAX_ATTEMPTS), None);
}

#[test]
fn creates_never_retry() {
    assert_eq!(next_delay(Create, ServerError, 1), None);
    assert_eq!(next_delay(Create, Transport, 1), None);
}
