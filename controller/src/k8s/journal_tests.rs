use super::*;

#[test]
fn the_admission_policy_protects_the_journal_label() {
    assert_eq!(
        JOURNAL_LABEL,
        crate::api::admission::configmaps::JOURNAL_LABEL
    );
}

#[test]
fn a_plan_of_any_name_has_a_valid_label_value() {
    for plan in ["p", &"a".repeat(70), &"undo-".repeat(50)] {
        let label = plan_label(plan);
        assert_eq!(label.len(), 40);
        assert!(label.bytes().all(|b| b.is_ascii_hexdigit()), "{label}");
    }
    assert_ne!(plan_label("a"), plan_label("b"));
}

#[test]
fn entries_written_before_chunks_existed_still_read() {
    let old = r#"{"operationId":"op","plan":"p","budget":"b","appliedAt":"2026-09-01T00:00:00Z","changes":[]}"#;
    let entry: Entry = serde_json::from_str(old).unwrap();
    assert_eq!(
        (entry.chunk, entry.chunks, entry.started_at.as_str()),
        (0, 1, "2026-09-01T00:00:00Z")
    );
}
