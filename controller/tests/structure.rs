//! The shape the code keeps, checked on the source tree: `logic/` grouped in a few folders, no
//! file too long to read, pure logic that imports no adapter, no adapter that imports another,
//! no two files that import each other (directly or round a loop), and the small checks that
//! drifted apart when they were written out in several places kept to their one home.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `controller/src`, by module path (`logic::job::state`), test files
/// (`*_tests.rs`, `tests.rs`) left out: they import what they test by design.
fn modules() -> BTreeMap<String, (PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap();
            if !name.ends_with(".rs") || name.ends_with("_tests.rs") || name == "tests.rs" {
                continue;
            }
            let relative = path.strip_prefix(&root).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_str().unwrap().to_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            let text = fs::read_to_string(&path).unwrap();
            out.insert(parts.join("::"), (path, text));
        }
    }
    out
}

/// The lines of a file before its tests.
fn code(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .collect()
}

/// The `use` declarations of a file's code, each as one string.
fn uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in code(text) {
        let trimmed = line.trim();
        match current.as_mut() {
            Some(open) => open.push_str(trimmed),
            None => {
                let Some(rest) = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
                    .iter()
                    .find_map(|p| trimmed.strip_prefix(p))
                else {
                    continue;
                };
                current = Some(rest.to_owned());
            }
        }
        if trimmed.ends_with(';') {
            out.push(
                current
                    .take()
                    .unwrap_or_default()
                    .trim_end_matches(';')
                    .to_owned(),
            );
        }
    }
    out
}

/// The paths a file's code names outside its `use` declarations (`super::x::run(…)`).
fn inline_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code(text) {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with("use ") || line.starts_with("pub use ") {
            continue;
        }
        for start in ["crate::", "super::"] {
            let mut rest = line;
            while let Some(at) = rest.find(start) {
                let tail = &rest[at..];
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(tail.len());
                out.push(tail[..end].trim_end_matches(':').to_owned());
                rest = &tail[end..];
            }
        }
    }
    out
}

/// Every path a file names, from its `use` declarations and its code.
fn paths(text: &str) -> Vec<String> {
    uses(text)
        .iter()
        .flat_map(|tree| expand(tree))
        .chain(inline_paths(text))
        .collect()
}

/// The paths a `use` tree names, braces expanded: `a::{b, c::d}` is `a::b` and `a::c::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree = without_renames(tree);
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.len() - 1];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// `tree` without spaces and without its renames (`a as b` is `a`).
fn without_renames(tree: &str) -> String {
    let mut out = String::new();
    let mut words = tree.split_whitespace();
    while let Some(word) = words.next() {
        if word == "as" {
            let alias = words.next().unwrap_or_default();
            out.extend(alias.chars().filter(|c| matches!(c, ',' | '{' | '}')));
        } else {
            out.push_str(word);
        }
    }
    out
}

/// The module of `known` that `path`, written in module `at`, reaches: the longest prefix
/// that is a file. Paths from outside the crate reach none.
fn resolve(path: &str, at: &str, known: &BTreeSet<String>) -> Option<String> {
    let mut base: Vec<&str> = at.split("::").filter(|s| !s.is_empty()).collect();
    let mut segments = path.split("::").peekable();
    match segments.peek().copied() {
        Some("crate") => base.clear(),
        Some("super") => {
            while segments.peek() == Some(&"super") {
                segments.next();
                base.pop();
            }
        }
        Some("self") => {}
        _ => return None,
    }
    let full: Vec<&str> = base
        .into_iter()
        .chain(segments.filter(|s| !matches!(*s, "crate" | "self")))
        .collect();
    (1..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|m| known.contains(m))
}

fn parent(module: &str) -> &str {
    module.rsplit_once("::").map_or("", |(p, _)| p)
}

#[test]
fn logic_lists_at_most_twelve_modules() {
    let all = modules();
    let (_, text) = &all["logic"];
    let listed = text
        .lines()
        .filter(|l| l.starts_with("pub mod ") || l.starts_with("mod "))
        .count();
    assert!(listed <= 12, "logic/mod.rs lists {listed} modules");
}

#[test]
fn no_file_has_more_than_500_lines_before_its_tests() {
    let long: Vec<String> = modules()
        .values()
        .filter(|(_, text)| code(text).len() > 500)
        .map(|(path, text)| format!("{} ({} lines)", path.display(), code(text).len()))
        .collect();
    assert!(long.is_empty(), "split these files: {long:#?}");
}

#[test]
fn tests_attach_one_way_from_a_sibling_file() {
    let inline: Vec<String> = modules()
        .values()
        .filter(|(_, text)| {
            text.lines()
                .any(|l| l.trim_start().starts_with("mod tests {"))
        })
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(
        inline.is_empty(),
        "move these tests to a sibling <file>_tests.rs attached with #[path]: {inline:#?}"
    );
}

#[test]
fn pure_logic_imports_no_adapter() {
    let all = modules();
    let known: BTreeSet<String> = all.keys().cloned().collect();
    let mut found = Vec::new();
    for (module, (_, text)) in all.iter().filter(|(m, _)| m.starts_with("logic")) {
        for used in paths(text) {
            let Some(target) = resolve(&used, module, &known) else {
                continue;
            };
            let layer = target.split("::").next().unwrap();
            if !matches!(layer, "logic" | "api" | "ynab_model") {
                found.push(format!("{module} uses {target}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// The adapters: the only code that talks to the outside, each to one system.
const ADAPTERS: [&str; 4] = ["k8s", "ynab", "git", "gitea"];

#[test]
fn no_adapter_imports_another() {
    let all = modules();
    let known: BTreeSet<String> = all.keys().cloned().collect();
    let mut found = Vec::new();
    for (module, (_, text)) in &all {
        let layer = module.split("::").next().unwrap();
        if !ADAPTERS.contains(&layer) {
            continue;
        }
        for used in paths(text) {
            let Some(target) = resolve(&used, module, &known) else {
                continue;
            };
            let other = target.split("::").next().unwrap();
            if other != layer && ADAPTERS.contains(&other) {
                found.push(format!("{module} uses {target}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "an adapter imports another: what they share is a value or a trait in logic, wired in run: {found:#?}"
    );
}

#[test]
fn no_two_files_of_a_folder_import_each_other() {
    let all = modules();
    let known: BTreeSet<String> = all.keys().cloned().collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, (_, text)) in &all {
        for used in paths(text) {
            let Some(target) = resolve(&used, module, &known) else {
                continue;
            };
            // Siblings only: a folder's mod.rs and its files belong together.
            if target != *module && parent(&target) == parent(module) {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    let mut cycles = Vec::new();
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, trail)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if next == start {
                    cycles.push(trail.join(" -> ") + " -> " + start);
                } else if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}

/// Small checks with one home each: written out anywhere else, they drift apart again.
#[test]
fn small_checks_live_in_their_one_home() {
    let homes: &[(&str, &str, &str)] = &[
        (
            "|c| c.decimal_digits",
            "logic::budget::mirror",
            "Mirror::decimal_digits",
        ),
        (
            "!c.hidden && !c.internal && !c.deleted",
            "logic::budget::mirror",
            "Mirror::offers_category",
        ),
        (
            "server_knowledge == 0",
            "logic::budget::mirror",
            "Mirror::has_read, or MirrorSlot::synced_for",
        ),
        (
            "server_knowledge > 0",
            "logic::budget::mirror",
            "Mirror::has_read, or MirrorSlot::synced_for",
        ),
        (
            "server_knowledge != 0",
            "logic::budget::mirror",
            "Mirror::has_read, or MirrorSlot::synced_for",
        ),
        ("e.code == 409", "k8s", "k8s::is_conflict"),
        ("e.code == 404", "k8s", "k8s::is_not_found"),
    ];
    let mut found = Vec::new();
    for (module, (_, text)) in modules() {
        for (pattern, home, instead) in homes {
            if module != *home && text.contains(pattern) {
                found.push(format!("{module} writes `{pattern}` out: use {instead}"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// No function longer than a screen: clippy's `too_many_lines` (which counts code lines, not
/// comments or blank lines) at 100, on for every product crate and run by CI with
/// `-D warnings`. A table of test cases may allow it, with a reason.
#[test]
fn functions_stay_shorter_than_a_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let clippy = fs::read_to_string(root.join("clippy.toml")).unwrap();
    assert!(
        clippy
            .lines()
            .any(|l| l.replace(' ', "") == "too-many-lines-threshold=100"),
        "clippy.toml must set too-many-lines-threshold = 100"
    );
    for krate in ["controller", "plugin"] {
        let manifest = fs::read_to_string(root.join(krate).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains("[lints.clippy]") && manifest.contains("too_many_lines = \"warn\""),
            "{krate}/Cargo.toml must turn clippy's too_many_lines on"
        );
    }
}
