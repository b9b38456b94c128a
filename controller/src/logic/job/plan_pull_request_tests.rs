//! The plans `suggest` and `undo` write, their pull requests' words and the suggestion table.

use super::*;

fn suggestion(source: Source) -> Suggestion {
    Suggestion {
        transaction_id: "tx-1".into(),
        date: "2026-11-03".into(),
        amount: -12_340,
        payee: "Corner Shop".into(),
        category_id: "cat-1".into(),
        category_name: "Groceries".into(),
        confidence: 80,
        support: 5,
        source,
    }
}

#[test]
fn a_suggestion_is_named_by_month_and_job() {
    assert_eq!(
        suggestion_name(Some("2026-11"), "aj-0123456789abcdef"),
        "suggest-2026-11-01234567"
    );
    assert_eq!(suggestion_name(None, "aj-ab"), "suggest-ab");
    assert_eq!(scope(Some("2026-11")), " in 2026-11");
    assert_eq!(scope(None), "");
}

#[test]
fn the_table_shows_each_suggestion_and_where_it_comes_from() {
    let rows = [
        suggestion(Source::Rules(vec!["shop".into(), "corner".into()])),
        suggestion(Source::History),
        suggestion(Source::HistoryRulesDisagree(vec!["shop".into()])),
    ];
    let table = suggestion_table(&rows, 2);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], "| date | payee | amount | category | from |");
    assert_eq!(
        lines[2],
        format!(
            "| 2026-11-03 | Corner Shop | -12.34 | Groceries | {} |",
            cell("rule shop, corner")
        )
    );
    assert_eq!(
        lines[3],
        format!(
            "| 2026-11-03 | Corner Shop | -12.34 | Groceries | {} |",
            cell("history: 80% (5 before)")
        )
    );
    assert!(lines[4].ends_with(&format!(
        "| {} |",
        cell("history: 80% (5 before); rules shop disagree")
    )));
    assert_eq!(lines.len(), 5);
}

#[test]
fn the_suggested_plan_assigns_each_category_for_the_budget() {
    let spec = suggestion_spec(
        "home",
        &[suggestion(Source::History)],
        "alice",
        " in 2026-11",
    );
    assert_eq!(spec.budget_ref.name, "home");
    let assignments = spec.assignments.unwrap();
    assert_eq!(assignments.len(), 1);
    assert_eq!(assignments[0].transaction_id, "tx-1");
    assert_eq!(assignments[0].category_id, "cat-1");
    assert_eq!(spec.undo_of, None);
    assert_eq!(
        spec.description.as_deref(),
        Some(
            "Suggested by /agent suggest from @alice for 1 uncategorized transaction(s) in 2026-11."
        )
    );
}

#[test]
fn a_plan_is_written_as_its_manifest_under_the_plans_directory() {
    let spec = undo_spec(
        &LocalRef {
            name: "home".into(),
        },
        "p1",
        "bob",
    );
    let yaml = plan_yaml("undo-p1", "money", &spec).unwrap();
    // Read as the ConfigRepo that applies the pull request reads it.
    let docs = crate::logic::config_repo::yaml::values(&yaml).unwrap();
    let back: CategorizationPlan = serde_json::from_value(docs[0].clone()).unwrap();
    assert_eq!(back.metadata.name.as_deref(), Some("undo-p1"));
    assert_eq!(back.metadata.namespace.as_deref(), Some("money"));
    assert_eq!(back.spec, spec);
    assert!(yaml.contains("kind: CategorizationPlan"));
    assert_eq!(plan_file("plans/", "undo-p1"), "plans/undo-p1.yaml");
    assert_eq!(plan_file("plans", "undo-p1"), "plans/undo-p1.yaml");
}

#[test]
fn an_undo_names_what_it_undoes() {
    assert_eq!(undo_name("p1"), "undo-p1");
    let long = "p".repeat(300);
    let name = undo_name(&long);
    assert!(name.starts_with("undo-p") && !name.ends_with('…'));
    let spec = undo_spec(
        &LocalRef {
            name: "home".into(),
        },
        "p1",
        "bob",
    );
    assert_eq!(spec.undo_of.as_deref(), Some("p1"));
    assert_eq!(spec.assignments, None);
    let (title, body) = undo_pull_request("p1", "undo-p1");
    assert_eq!(title, "Undo CategorizationPlan p1");
    assert!(body.starts_with("CategorizationPlan `undo-p1` with `undoOf: p1`."));
    assert_eq!(
        undone("https://git/pr/1", "p1"),
        "Opened https://git/pr/1 to undo CategorizationPlan `p1`."
    );
}

#[test]
fn the_answers_say_what_was_suggested_and_why_rules_were_not_used() {
    let unused = no_rule_used("the admission policies are not in force");
    assert_eq!(
        unused,
        "\n\nNo CategorizationRule was used: the admission policies are not in force"
    );
    assert_eq!(
        nothing_suggested("", "home", ""),
        "No suggestion: no Blessed CategorizationRule and no payee's history speaks for an uncategorized transaction of Budget `home`."
    );
    let (title, body) = suggestion_pull_request("s-1", "home", 2, " in 2026-11", "TABLE\n");
    assert_eq!(title, "Categorize 2 transaction(s) in 2026-11");
    assert!(body.contains("TABLE\n\nMerging applies it"));
    assert_eq!(
        suggested(2, "", "home", "https://git/pr/2", "TABLE\n", &unused),
        format!(
            "Suggested categories for 2 transaction(s) of Budget `home`: https://git/pr/2\n\nTABLE\n{unused}"
        )
    );
}
