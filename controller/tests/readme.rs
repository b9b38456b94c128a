//! The README's troubleshooting table, which every stalled object's `Stalled` message links:
//! each row a person can be sent to carries the anchor the controller writes, exactly once.

use std::collections::BTreeSet;

use ledgerops::logic::status::kstatus;

const README: &str = include_str!("../../README.md");
const HEADER: &str = "| kind | condition / reason | what it means | what to do | kstatus |";

/// The table's rows, as (first cell, second cell, last cell, the whole line).
fn rows() -> Vec<(String, String, String, &'static str)> {
    let mut lines = README.lines().skip_while(|l| *l != HEADER).skip(2);
    let mut rows = Vec::new();
    for line in lines.by_ref().take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        rows.push((
            cells[0].to_owned(),
            cells[1].to_owned(),
            cells[cells.len() - 1].to_owned(),
            line,
        ));
    }
    assert!(rows.len() > 50, "the table is there: {} rows", rows.len());
    rows
}

/// The kinds a row is about, without the anchors in front of them.
fn kinds(cell: &str) -> Vec<String> {
    let text = cell.rsplit("</a>").next().unwrap_or(cell);
    text.split('(')
        .next()
        .unwrap_or_default()
        .split(',')
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
        .collect()
}

/// The `Ready` reason a row lists: its first word in backticks.
fn reason(cell: &str) -> Option<&str> {
    let rest = cell.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

#[test]
fn every_row_a_stalled_object_points_at_carries_its_anchor_once() {
    let mut expected = BTreeSet::new();
    for (kind_cell, reason_cell, health, _) in rows() {
        if health != "Failed" {
            continue;
        }
        let reason = reason(&reason_cell)
            .unwrap_or_else(|| panic!("a Failed row names its reason first: {reason_cell}"));
        for kind in kinds(&kind_cell) {
            expected.insert(kstatus::anchor(&kind, reason));
        }
    }
    let present: Vec<&str> = README
        .match_indices("<a id=\"stalled-")
        .map(|(at, _)| {
            let id = &README[at + "<a id=\"".len()..];
            &id[..id.find('"').unwrap()]
        })
        .collect();
    for anchor in &expected {
        let count = present.iter().filter(|p| *p == anchor).count();
        assert_eq!(count, 1, "README: anchor {anchor} appears {count} times");
    }
    for anchor in &present {
        assert!(
            expected.contains(*anchor),
            "README: anchor {anchor} is not on a Failed row of its kind and reason"
        );
    }
    assert!(expected.len() >= 55, "{} anchors", expected.len());
}

#[test]
fn the_link_points_at_this_readme() {
    assert!(
        kstatus::troubleshooting("Budget", "Unauthorized").starts_with(kstatus::README),
        "the link's base"
    );
    let row = rows()
        .into_iter()
        .find(|(_, reason, _, _)| reason.starts_with("`Unauthorized`"))
        .expect("the Budget's Unauthorized row");
    assert!(
        row.3
            .contains("<a id=\"stalled-budget-unauthorized\"></a>Budget"),
        "{}",
        row.3
    );
}
