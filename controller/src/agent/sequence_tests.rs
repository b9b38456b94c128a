use super::*;

#[test]
fn the_admission_policy_protects_the_sequence_configmap() {
    assert_eq!(
        SEQUENCE_CONFIGMAP,
        crate::api::admission::configmaps::SEQUENCE_CONFIGMAP
    );
}
