use std::path::PathBuf;

use super::*;

/// `crds/` must be exactly what the types generate: run `cargo run -- crdgen --out crds` after
/// changing an API type.
#[test]
fn crds_dir_matches_the_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crds");
    let mut stale = Vec::new();
    for (file, yaml) in render() {
        match std::fs::read_to_string(dir.join(&file)) {
            Ok(on_disk) if on_disk == yaml => {}
            _ => stale.push(file),
        }
    }
    assert!(
        stale.is_empty(),
        "crds/ is out of date for {stale:?}: run `cargo run -p ledgerops -- crdgen --out crds`"
    );
}

/// Each admission file is part of what the drift test compares, and parses back into its
/// policy and bindings.
#[test]
fn admission_files_hold_each_policy_and_its_bindings() {
    let files = render();
    for set in api::admission::policies() {
        let (_, yaml) = files
            .iter()
            .find(|(file, _)| *file == set.file())
            .expect("render() includes every admission file");
        let docs = crate::logic::config_repo::yaml::values(yaml).expect("valid YAML");
        let mut expected = vec![serde_json::to_value(&set.policy).unwrap()];
        expected.extend(
            set.bindings
                .iter()
                .map(|b| serde_json::to_value(b).unwrap()),
        );
        assert_eq!(docs, expected, "{}", set.file());
    }
}

#[test]
fn every_kind_has_status_ready_column_and_category() {
    for crd in api::crds() {
        let version = &crd.spec.versions[0];
        let kind = &crd.spec.names.kind;
        assert!(
            version
                .subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some(),
            "{kind} has no status subresource"
        );
        let columns = version
            .additional_printer_columns
            .as_deref()
            .unwrap_or_default();
        assert!(
            columns.iter().any(|c| c.name == "Phase"),
            "{kind} has no Phase column"
        );
        assert_eq!(
            crd.spec.names.categories.as_deref(),
            Some(&["ledgerops".to_string()][..])
        );
        assert!(
            crd.spec
                .names
                .short_names
                .as_ref()
                .is_some_and(|s| !s.is_empty())
        );
    }
}
