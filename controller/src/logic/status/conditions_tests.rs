//! Unit tests of `logic/status/conditions.rs`.

use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

#[test]
fn adds_then_keeps_the_transition_time_while_the_status_holds() {
    let c = set(
        &[],
        Observed::new("Ready", true, "Synced", "ok"),
        Some(1),
        at(0),
    );
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].last_transition_time, Time(at(0)));
    let c = set(
        &c,
        Observed::new("Ready", true, "Synced", "still ok"),
        Some(2),
        at(50),
    );
    assert_eq!(c[0].last_transition_time, Time(at(0)));
    assert_eq!(c[0].message, "still ok");
    assert_eq!(c[0].observed_generation, Some(2));
    let c = set(
        &c,
        Observed::new("Ready", false, "Unauthorized", "token refused"),
        Some(2),
        at(90),
    );
    assert_eq!(c[0].last_transition_time, Time(at(90)));
    assert_eq!(
        (c[0].status.as_str(), c[0].reason.as_str()),
        ("False", "Unauthorized")
    );
}

#[test]
fn other_types_are_untouched_and_order_is_stable() {
    let c = set(
        &[],
        Observed::new("Ready", true, "Synced", "ok"),
        Some(1),
        at(0),
    );
    let c = set(
        &c,
        Observed::new("Diverged", true, "EditedInYnab", "x"),
        Some(1),
        at(5),
    );
    let c = set(
        &c,
        Observed::new("Blocked", Status::Unknown, "Checking", "y"),
        Some(1),
        at(6),
    );
    let types: Vec<&str> = c.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Blocked", "Diverged", "Ready"]);
    let c = remove(&c, "Diverged");
    assert!(get(&c, "Diverged").is_none());
    assert_eq!(get(&c, "Ready").unwrap().last_transition_time, Time(at(0)));
    assert_eq!(get(&c, "Blocked").unwrap().status, "Unknown");
}
