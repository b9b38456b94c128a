use super::*;

#[test]
fn only_a_full_commit_id_goes_into_a_path() {
    assert!(checked_sha(&"a".repeat(40)).is_ok());
    for bad in ["", "abc", &"g".repeat(40), &format!("{}/x", "a".repeat(38))] {
        assert!(checked_sha(bad).is_err(), "{bad}");
    }
}
