//! Unit tests of `logic/values/yaml_text.rs`.

use serde_json::{Value, json};

use super::to_string;

#[test]
fn long_lines_stay_whole_and_every_value_reads_back_as_written() {
    let long = "x ".repeat(100).trim_end().to_owned();
    let value = json!({
        "pattern": "^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}|last-used)$",
        "rule": "self.verdict == 'Approve' || (has(self.comment) && size(self.comment.trim()) > 0)",
        "long": long,
        "lines": "first line\nsecond line\n",
        "number_as_text": "500",
        "bool_as_text": "yes",
        "null_as_text": "null",
        "leading_space": "  indented",
        "colon": "a: b",
        "hash": "# not a comment",
        "empty": "",
        "list": [],
        "map": {},
        "amount": -42100,
    });
    let yaml = to_string(&value).unwrap();
    assert!(yaml.contains(&format!("long: {long}\n")), "{yaml}");
    assert!(yaml.contains("lines: |\n"), "{yaml}");
    let back: Value = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(back, value, "{yaml}");
}
