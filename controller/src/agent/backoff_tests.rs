//! The retry delays, and their count per key.

use super::*;

#[test]
fn backoff_doubles_and_is_capped() {
    assert_eq!(capped_backoff(1), Duration::from_millis(250));
    assert_eq!(capped_backoff(2), Duration::from_millis(500));
    assert_eq!(capped_backoff(5), Duration::from_millis(4000));
    assert_eq!(capped_backoff(8), Duration::from_secs(30));
    assert_eq!(capped_backoff(1000), Duration::from_secs(30));
}

#[test]
fn each_key_backs_off_on_its_own_until_it_succeeds() {
    let attempts = Attempts::default();
    assert_eq!(attempts.backoff("a"), Duration::from_millis(250));
    assert_eq!(attempts.backoff("a"), Duration::from_millis(500));
    assert_eq!(attempts.backoff("b"), Duration::from_millis(250));
    attempts.succeeded("a");
    assert_eq!(attempts.backoff("a"), Duration::from_millis(250));
}
