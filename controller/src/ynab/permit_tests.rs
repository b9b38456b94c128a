use super::*;

#[test]
fn withdrawing_reaches_every_clone_and_only_them() {
    let permit = Permit::default();
    let held = permit.clone();
    let other = Permit::default();
    assert!(!held.is_withdrawn());
    permit.withdraw();
    assert!(held.is_withdrawn());
    assert!(!other.is_withdrawn());
}
