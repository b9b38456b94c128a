//! Unit tests of `logic/runtime/request_record.rs`.

use super::*;
use crate::logic::runtime::request_window::minute_of;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn minutes_merge_by_the_larger_count_and_forget_the_hour_before() {
    let now = at(7200);
    let m = minute_of(now);
    let recorded = Minutes::from([(m - 70, 9), (m - 30, 4), (m - 1, 2)]);
    let ours = Minutes::from([(m - 30, 3), (m - 1, 5), (m, 1)]);
    // (what, recorded, ours) → merged
    let cases = [
        ("nothing", Minutes::new(), Minutes::new(), Minutes::new()),
        (
            "both: the larger count of each minute, the hour before dropped",
            recorded.clone(),
            ours.clone(),
            Minutes::from([(m - 30, 4), (m - 1, 5), (m, 1)]),
        ),
        (
            "only the record (a new process)",
            recorded.clone(),
            Minutes::new(),
            Minutes::from([(m - 30, 4), (m - 1, 2)]),
        ),
        (
            "only ours (no record yet)",
            Minutes::new(),
            ours.clone(),
            ours.clone(),
        ),
    ];
    for (what, recorded, ours, want) in cases {
        assert_eq!(merged(&recorded, &ours, now), want, "{what}");
    }
}

#[test]
fn a_minute_counts_until_an_hour_after_its_last_second() {
    let m = minute_of(at(0));
    let record = Minutes::from([(m, 1)]);
    assert_eq!(end_of(m), Timestamp::from_second(m * 60 + 59).unwrap());
    assert_eq!(
        merged(
            &record,
            &Minutes::new(),
            end_of(m) + WINDOW - k8s_openapi::jiff::SignedDuration::from_secs(1)
        ),
        record
    );
    assert!(merged(&record, &Minutes::new(), end_of(m) + WINDOW).is_empty());
}

#[test]
fn the_record_reads_back_what_was_written_and_refuses_anything_else() {
    let minutes = Minutes::from([(29_833_333, 4), (29_833_334, 1)]);
    assert_eq!(parse(&render(&minutes)), Ok(minutes));
    assert_eq!(render(&Minutes::from([(5, 2)])), r#"{"5":2}"#);
    for bad in ["", "[]", r#"{"x":1}"#, r#"{"5":-1}"#] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
}
