//! How the parser delimits a file's documents, and where a document's keys are.

use super::*;

/// Each document of `text` the parser yields: its content line and its text.
fn parts(text: &str) -> Vec<(usize, &str)> {
    documents(text).map(|p| (p.line, p.text)).collect()
}

#[test]
fn empty_documents_are_left_out_and_a_null_one_is_kept() {
    assert_eq!(parts(""), []);
    assert_eq!(parts("# only a comment\n"), []);
    assert_eq!(parts("# nothing\n---\n---\n...\n"), []);
    assert_eq!(
        parts("~\n---\n# null\nnull\n"),
        [(1, "~"), (4, "\n---\n# null\nnull")]
    );
}

#[test]
fn a_document_runs_from_the_end_of_the_one_before_to_its_own_end() {
    let text = "%YAML 1.2\n---\na: 1\n...\n# next\n--- {b: 2}\n--- |\n  text\n";
    assert_eq!(
        parts(text),
        [
            (3, "%YAML 1.2\n---\na: 1\n..."),
            (6, "\n# next\n--- {b: 2}"),
            (8, "\n--- |\n  text\n"),
        ]
    );
}

#[test]
fn after_a_malformed_document_the_next_one_is_read() {
    let text = "a: [unclosed\n---\nb: 1\n---\n]\n---\nc: 3\n";
    assert_eq!(
        parts(text),
        [
            (1, "a: [unclosed\n"),
            (3, "---\nb: 1\n"),
            (5, "---\n]\n"),
            (7, "---\nc: 3\n"),
        ]
    );
}

/// Reads `text`'s only document with the whole revision's allowance.
fn read_one(text: &str) -> Result<(Value, KeyLines), Unread> {
    let part = documents(text).next().expect("one document");
    read(&part, &mut Allowance::default())
}

#[test]
fn keys_are_found_by_path_on_their_own_line() {
    let text = "# c\n---\n\"kind\": X\nmetadata:\n  labels: {a: 1,\n    b: 2}\n  namespace:\n    other\nspec:\n  namespace: not this one\n";
    let (value, keys) = read_one(text).unwrap();
    assert_eq!(value["metadata"]["namespace"], "other");
    let lines: Vec<Option<usize>> = [
        &["kind"][..],
        &["metadata"],
        &["metadata", "labels", "b"],
        &["metadata", "namespace"],
        &["spec", "namespace"],
        &["status"],
    ]
    .iter()
    .map(|path| keys.line(path))
    .collect();
    assert_eq!(lines, [Some(3), Some(4), Some(6), Some(7), Some(10), None]);
}

#[test]
fn errors_name_the_file_line_of_a_later_document() {
    let text = "a: 1\n---\n# c\nb:\n  c: [1\n";
    let part = documents(text).nth(1).unwrap();
    let unread = read(&part, &mut Allowance::default()).unwrap_err();
    assert_eq!(unread.line, Some(5), "{unread:?}");
    assert!(unread.message.starts_with("not valid YAML"), "{unread:?}");
}
