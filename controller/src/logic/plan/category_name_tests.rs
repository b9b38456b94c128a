//! Unit tests of `logic/plan/category_name.rs`.

use super::*;
use crate::logic::plan::fixtures::mirror;

fn named(id: &str, name: &str, group: &str) -> NamedCategory {
    NamedCategory {
        id: id.into(),
        name: name.into(),
        group: Some(group.into()),
    }
}

#[test]
fn lists_only_categories_a_change_may_use_by_group_and_name() {
    let m = mirror();
    let listed = assignable(&m);
    assert!(!listed.is_empty());
    for c in &listed {
        assert_eq!(category_problem(&c.id, &m), None, "{c:?}");
    }
    let refused = m
        .categories
        .keys()
        .filter(|id| category_problem(id, &m).is_some())
        .count();
    assert!(refused > 0, "the fixture holds internal or hidden ones");
    assert_eq!(listed.len() + refused, m.categories.len());
    let keys: Vec<_> = listed.iter().map(|c| (&c.group, &c.name)).collect();
    assert!(keys.is_sorted());
}

#[test]
fn resolves_an_id_a_name_or_a_qualified_name() {
    let known = [
        named("cat-g", "Groceries", "Everyday"),
        named("cat-d1", "Dining", "Everyday"),
        named("cat-d2", "Dining", "Travel"),
    ];
    let cases: [(&str, Result<&str, &str>); 8] = [
        ("cat-g", Ok("cat-g")),
        ("Groceries", Ok("cat-g")),
        ("  groceries ", Ok("cat-g")),
        ("Travel/Dining", Ok("cat-d2")),
        ("everyday/dining", Ok("cat-d1")),
        (
            "Dining",
            Err("names 2 categories (Everyday/Dining, Travel/Dining)"),
        ),
        ("Fuel", Err("no category is named \"Fuel\"")),
        ("", Err("no category is named \"\"")),
    ];
    for (typed, want) in cases {
        let got = resolve(typed, &known);
        match want {
            Ok(id) => assert_eq!(got.as_deref(), Ok(id), "{typed}"),
            Err(text) => {
                let msg = got.expect_err(typed).to_string();
                assert!(msg.contains(text), "{typed}: {msg}");
            }
        }
    }
    assert_eq!(name_of("cat-d2", &known), "Dining");
    assert_eq!(name_of("cat-x", &known), "cat-x");
}
