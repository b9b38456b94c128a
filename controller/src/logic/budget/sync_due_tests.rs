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
        let got = due(elapsed.map(|e| (&last, e)), &now, five_min, &[]);
        assert_eq!(got, want, "{elapsed:?} {now:?}");
    }
}

#[test]
fn syncs_asked_by_an_annotation_alone_run_three_in_ten_minutes() {
    let five_min = Duration::from_secs(300);
    let s = |secs| Duration::from_secs(secs);
    let last = made_for(1, "a", "t");
    let asked = made_for(1, "asked again", "t");
    // (ages of the asked syncs that ran, this reconcile, elapsed since the last sync) → due
    let cases = [
        (vec![], asked.clone(), s(5), Due::Now),
        (vec![s(10), s(20)], asked.clone(), s(5), Due::Now),
        (
            vec![s(10), s(20), s(30)],
            asked.clone(),
            s(5),
            Due::Held(s(570)),
        ),
        (vec![s(10), s(20), s(600)], asked.clone(), s(5), Due::Now),
        (
            vec![s(1), s(2), s(3), s(4)],
            asked.clone(),
            s(5),
            Due::Held(s(596)),
        ),
        // A spec change, rotated credentials, or a sync due anyway: at once.
        (
            vec![s(1), s(2), s(3)],
            made_for(2, "asked again", "t"),
            s(5),
            Due::Now,
        ),
        (
            vec![s(1), s(2), s(3)],
            made_for(1, "asked again", "rotated"),
            s(5),
            Due::Now,
        ),
        (vec![s(1), s(2), s(3)], asked.clone(), s(300), Due::Now),
    ];
    for (ages, now, elapsed, want) in cases {
        let got = due(Some((&last, elapsed)), &now, five_min, &ages);
        assert_eq!(got, want, "{ages:?} {now:?} {elapsed:?}");
    }
    assert!(asked_only(&last, &asked));
    assert!(!asked_only(&last, &last));
    assert!(!asked_only(&last, &made_for(2, "asked again", "t")));
}
