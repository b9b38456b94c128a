use super::*;

/// A new kind must not leave its status writable by anyone.
#[test]
fn covers_the_status_of_every_kind() {
    let mut covered: Vec<String> = RESOURCES
        .iter()
        .map(|r| r.trim_end_matches("/status").to_owned())
        .collect();
    let mut kinds: Vec<String> = crate::api::crds()
        .into_iter()
        .map(|crd| crd.spec.names.plural)
        .collect();
    covered.sort();
    kinds.sort();
    assert_eq!(covered, kinds);
}
