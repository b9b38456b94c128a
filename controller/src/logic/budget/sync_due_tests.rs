//! Unit tests of `logic/budget/sync_due.rs`.

use super::*;

fn made_for(generation: i64, annotations: &str, credentials: &str) -> SyncedFor {
    SyncedFor {
        generation: Some(generation),
        annotations: annotations.into(),
        credentials: credentials.into(),
    }
}

#[test]
fn only_the_same_ask_within_the_interval_reads_nothing() {
    let five_min = Duration::from_secs(300);
    let s = |secs| Duration::from_secs(secs);
    let last = made_for(1, "a", "t");
    let cases = [
        (None, made_for(1, "a", "t"), Due::Now),
        (Some(s(2)), made_for(1, "a", "t"), Due::In(s(298))),
        (Some(s(299)), made_for(1, "a", "t"), Due::In(s(1))),
        (Some(s(300)), made_for(1, "a", "t"), Due::Now),
        (Some(s(2)), made_for(2, "a", "t"), Due::Now),
        (Some(s(2)), made_for(1, "sync asked", "t"), Due::Now),
        (Some(s(2)), made_for(1, "a", "rotated"), Due::Now),
    ];
    for (elapsed, now, want) in cases {
        let got = due(elapsed.map(|e| (&last, e)), &now, five_min);
        assert_eq!(got, want, "{elapsed:?} {now:?}");
    }
}
