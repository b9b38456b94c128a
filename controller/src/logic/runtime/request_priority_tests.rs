//! Unit tests of `logic/runtime/request_priority.rs`.

use super::*;

#[test]
fn syncs_and_writes_by_table() {
    use Priority::*;
    use WriteDecision::*;
    use WriteSource::*;
    assert_eq!(of_sync(true), Asked);
    assert_eq!(of_sync(false), Background);
    let writes = [
        (Person, Applied, Approved),
        (Person, ConfigRepo, Approved),
        (Policy, Applied, Unasked),
        (Policy, ConfigRepo, Background),
    ];
    for (decision, source, expected) in writes {
        assert_eq!(
            of_write(decision, source),
            expected,
            "{decision:?} {source:?}"
        );
    }
}

#[test]
fn only_what_people_wait_for_spends_the_reserve() {
    let reserved: Vec<bool> = Priority::ALL.iter().map(|p| p.reserved()).collect();
    assert_eq!(reserved, [true, true, false, false]);
    let gathers: Vec<bool> = Priority::ALL.iter().map(|p| p.gathers()).collect();
    assert_eq!(
        gathers,
        [false, true, true, true],
        "only an approved write skips the window"
    );
    let labels: Vec<&str> = Priority::ALL.iter().map(|p| p.label()).collect();
    assert_eq!(labels, ["approved", "asked", "unasked", "background"]);
}

#[test]
fn a_batch_goes_out_at_its_highest_priority() {
    use Priority::*;
    assert_eq!(of_batch([Background, Approved, Unasked]), Approved);
    assert_eq!(of_batch([Background, Unasked]), Unasked);
    assert_eq!(of_batch([Asked]), Asked);
    assert_eq!(of_batch([]), Background);
}
