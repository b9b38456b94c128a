use super::*;

const QUIET: Duration = Duration::from_secs(150);

#[test]
fn a_branch_looked_at_is_left_alone_until_a_push_or_the_quiet_time() {
    let t0 = Instant::now();
    let mut looks = Looks::default();
    let look = looks.begin("b", t0, QUIET).expect("never looked at");
    looks.done("b", look);
    assert!(
        looks
            .begin("b", t0 + Duration::from_secs(10), QUIET)
            .is_none()
    );
    assert!(looks.begin("other", t0, QUIET).is_some());
    assert!(looks.begin("b", t0 + QUIET, QUIET).is_some());
    looks.pushed("b");
    let again = looks.begin("b", t0 + Duration::from_secs(11), QUIET);
    assert!(again.is_some(), "a push is looked at at once");
    looks.done("b", again.unwrap());
    assert!(
        looks
            .begin("b", t0 + Duration::from_secs(12), QUIET)
            .is_none()
    );
}

#[test]
fn a_push_during_a_look_is_looked_at_after_it() {
    let t0 = Instant::now();
    let mut looks = Looks::default();
    let look = looks.begin("b", t0, QUIET).unwrap();
    // The branch was read before this push landed.
    looks.pushed("b");
    looks.done("b", look);
    assert!(
        looks
            .begin("b", t0 + Duration::from_secs(1), QUIET)
            .is_some(),
        "the push is not covered by the look that began before it"
    );
}
