//! Reading a revision's YAML within what it may still hold, so that a push cannot exhaust the
//! controller's memory or time. The parser serde-saphyr runs on (granit, which it re-exports)
//! delimits a file's documents and says where each starts; serde-saphyr reads each one within
//! its budgets, with the line of every key a refusal may name. Aliases count as what they expand
//! to: serde_yaml's alias limit counted jumps, and a 700 KB scalar aliased 60,000 times expanded
//! to 42 GB.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IntoDeserializer, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::granit_parser::{self, Event, Marker, Parser, ScalarStyle, Span};
use serde_saphyr::{DefaultMessageFormatter, Error, MergeKeyPolicy, MessageFormatter, Spanned};

use crate::logic::values::outside_text;

/// Bytes of scalar text (keys and values) a revision's documents may hold, aliases expanded: as
/// much as the git adapter reads of a revision, so aliases cannot make one larger than it could
/// be written out.
pub const MAX_TEXT_BYTES: usize = 16 << 20;
/// Values, lists and mappings a revision's documents may hold, aliases expanded. A repository of
/// 1,000 documents holds some 50,000.
pub const MAX_NODES: usize = 500_000;
/// Nesting levels of one document: Kubernetes objects nest a handful.
pub const MAX_DEPTH: usize = 32;
/// Aliases in one document.
pub const MAX_ALIASES: usize = 1_000;
/// Levels of keys whose lines are kept: `metadata.labels.<label>` is the deepest a refusal names.
const KEY_LEVELS: usize = 3;

/// What the documents of a revision not read yet may still hold.
#[derive(Debug)]
pub struct Allowance {
    text_bytes: usize,
    nodes: usize,
    passed: bool,
}

impl Default for Allowance {
    fn default() -> Self {
        Allowance {
            text_bytes: MAX_TEXT_BYTES,
            nodes: MAX_NODES,
            passed: false,
        }
    }
}

impl Allowance {
    /// Whether a document passed the revision's limits: nothing after it can be read.
    pub fn passed(&self) -> bool {
        self.passed
    }
}

/// One document of a file, as the parser delimits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part<'a> {
    /// From where the document before it ended (so its directives come with it) to its end.
    text: &'a str,
    /// The file line `text` starts on (1-based).
    first_line: usize,
    /// The line its content starts on, or where the parser found it malformed.
    pub line: usize,
    /// Its last line: what is found only at its end (an alias count) is named there.
    last_line: usize,
}

impl Part<'_> {
    /// The file line of line `line` (1-based) of the part's text.
    fn in_file(&self, line: u64) -> Option<usize> {
        let line = usize::try_from(line).ok().filter(|l| *l > 0)?;
        Some(self.first_line + line - 1)
    }
}

/// The documents of `text` that declare something, as the parser reads them, one at a time so
/// that counting them bounds the work. Empty documents (nothing between two markers, or comments
/// only) are left out; `~` is a document, of null. After a malformed document the parser
/// resumes at the next document marker, as a reader of the file would.
pub fn documents(text: &str) -> impl Iterator<Item = Part<'_>> {
    // Comments are not needed to delimit documents, and buffering them has a limit of its own.
    let options = granit_parser::options! { emit_comments: false };
    let mut parser = Parser::new_from_str_with_options(text, options);
    // Where the next document's text starts, byte and line; `None` once the file is read.
    let mut start = Some((0, 1));
    // The current document's first node: its line, and whether the document has content.
    let mut root: Option<(usize, bool)> = None;
    std::iter::from_fn(move || {
        loop {
            let (from, first_line) = start?;
            // Where the document's text ends (`None`: the end of the file, and nothing is read
            // after it), and the last line it names.
            let (end, last) = match parser.next()? {
                Ok((Event::DocumentEnd, span)) => (Some(span.end), last_line(span.start)),
                Ok((event, span)) => {
                    if root.is_none() && event.is_node() {
                        root = Some((span.start.line(), !is_synthesized(&event, span)));
                    }
                    continue;
                }
                Err(e) => {
                    let at = e.marker().line();
                    root = Some((root.map_or(at, |(line, _)| line), true));
                    // The parser resumes at the next document, or the end of the file: the
                    // malformed document's text ends there. When it cannot tell where (a
                    // malformed document right after `...`), the rest of the file is read as
                    // this one, whose error comes first.
                    let resumed = parser
                        .proceed_next_document()
                        .ok()
                        .and_then(|_| Some(parser.peek()?.ok()?.1.start));
                    (resumed, resumed.map_or(at, last_line))
                }
            };
            start = end.map(|m| (offset(m, text), m.line()));
            let Some((line, true)) = root.take() else {
                continue;
            };
            let to = start.map_or(text.len(), |(byte, _)| byte);
            return Some(Part {
                text: text.get(from..to).unwrap_or_default(),
                first_line,
                line,
                last_line: last.max(line),
            });
        }
    })
}

/// The byte offset of `marker` in `text`: a parser over a `&str` gives every marker one.
fn offset(marker: Marker, text: &str) -> usize {
    marker.byte_offset().unwrap_or(text.len())
}

/// The last line of a document that ends at `end`: an end at the start of a line (the next
/// marker, `...`, or the end of the file) closes the line before it.
fn last_line(end: Marker) -> usize {
    if end.col() == 0 {
        end.line().saturating_sub(1)
    } else {
        end.line()
    }
}

/// Whether `event` is the null the parser makes up for a document with no content.
fn is_synthesized(event: &Event<'_>, span: Span) -> bool {
    matches!(event, Event::Scalar(_, ScalarStyle::Plain, 0, None)) && span.is_empty()
}

/// Why a document was not read: the file line when known, and what to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub line: Option<usize>,
    pub message: String,
}

/// The file line of each key in the first [`KEY_LEVELS`] levels of a document.
#[derive(Debug, Default)]
pub struct KeyLines(Vec<(Vec<String>, usize)>);

impl KeyLines {
    /// The line of the key at `path` (`["metadata", "namespace"]`), if the document has it.
    pub fn line(&self, path: &[&str]) -> Option<usize> {
        self.0
            .iter()
            .find(|(p, _)| p.iter().map(String::as_str).eq(path.iter().copied()))
            .map(|(_, line)| *line)
    }
}

/// The value of every document of `text`, read within one revision's limits: what a ConfigRepo
/// would make of a file (the plugin's `apply`, and the suites reading what ledgerops wrote).
pub fn values(text: &str) -> Result<Vec<Value>, Unread> {
    let mut allowance = Allowance::default();
    documents(text)
        .map(|part| read(&part, &mut allowance).map(|(value, _)| value))
        .collect()
}

/// The value of the document `part` and the lines of its keys, charged to `allowance`. Parsing
/// stops at the first node past a limit, so a refused document costs no more than the limit.
pub fn read(part: &Part<'_>, allowance: &mut Allowance) -> Result<(Value, KeyLines), Unread> {
    let used = Rc::new(Cell::new((0, 0)));
    let report = Rc::clone(&used);
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_total_scalar_bytes: allowance.text_bytes,
            max_nodes: allowance.nodes,
            max_depth: MAX_DEPTH,
            max_aliases: MAX_ALIASES,
        },
        // What serde_yaml read before: YAML 1.2 booleans, `0755` and `1_000` as text, `<<` as
        // an ordinary key (merging would be one more way to repeat a value).
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        merge_keys: MergeKeyPolicy::AsOrdinary,
        emit_comments: false,
        with_snippet: false,
    }
    .with_budget_report(move |r| report.set((r.total_scalar_bytes, r.nodes)));
    let mut keys = Vec::new();
    let value = serde_saphyr::with_deserializer_from_str_with_options(part.text, options, |de| {
        Node {
            path: Vec::new(),
            keys: &mut keys,
        }
        .deserialize(de)
    });
    let (text_bytes, nodes) = used.get();
    allowance.passed |= text_bytes > allowance.text_bytes || nodes > allowance.nodes;
    allowance.text_bytes = allowance.text_bytes.saturating_sub(text_bytes);
    allowance.nodes = allowance.nodes.saturating_sub(nodes);
    let value = value.map_err(|e| Unread {
        line: e
            .location()
            .and_then(|l| part.in_file(l.line()))
            .map(|l| l.min(part.last_line)),
        message: problem(&e),
    })?;
    let keys = keys
        .into_iter()
        .filter_map(|(path, line)| Some((path, part.in_file(line)?)))
        .collect();
    Ok((value, KeyLines(keys)))
}

/// A node at `path`: read as serde_json reads it, noting the line of each key in the first
/// [`KEY_LEVELS`] levels (serde-saphyr's [`Spanned`] knows where a key is; the value does not).
struct Node<'k> {
    path: Vec<String>,
    keys: &'k mut Vec<(Vec<String>, u64)>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        if self.path.len() < KEY_LEVELS {
            de.deserialize_any(self)
        } else {
            Value::deserialize(de)
        }
    }
}

/// Scalars become what serde_json makes of them.
macro_rules! as_json {
    ($($visit:ident: $t:ty),* $(,)?) => {$(
        fn $visit<E: de::Error>(self, v: $t) -> Result<Value, E> {
            Value::deserialize(v.into_deserializer())
        }
    )*};
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    as_json!(
        visit_bool: bool,
        visit_i64: i64,
        visit_i128: i128,
        visit_u64: u64,
        visit_u128: u128,
        visit_f64: f64,
        visit_str: &str,
        visit_string: String,
    );

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        self.deserialize(de)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let mut path = self.path.clone();
            path.push(key.value.clone());
            self.keys.push((path.clone(), key.referenced.line()));
            let value = map.next_value_seed(Node {
                path,
                keys: &mut *self.keys,
            })?;
            object.insert(key.value, value);
        }
        Ok(Value::Object(object))
    }
}

/// What is wrong, in the words of the limit it passed when it passed one.
fn problem(e: &Error) -> String {
    let mut cause = e;
    while let Error::AliasError { error, .. } | Error::WithSnippet { error, .. } = cause {
        cause = error;
    }
    let Error::Budget { breach, .. } = cause else {
        let said = DefaultMessageFormatter.format_message(cause);
        return format!(
            "not valid YAML: {}",
            outside_text::sanitize(&said, outside_text::MAX_CHARS)
        );
    };
    match breach {
        BudgetBreach::ScalarBytes { .. } => format!(
            "the revision's YAML holds more than {} MiB of text here, aliases expanded (at most {MAX_TEXT_BYTES} bytes a revision): repeat less through aliases, or split the repository",
            MAX_TEXT_BYTES >> 20
        ),
        BudgetBreach::Nodes { .. } => format!(
            "the revision's YAML holds more than {MAX_NODES} values, lists and mappings here, aliases expanded (the most a revision may hold): repeat less through aliases, or split the repository"
        ),
        BudgetBreach::Depth { .. } => {
            format!("nests deeper than {MAX_DEPTH} levels (the most a document may): flatten it")
        }
        BudgetBreach::Aliases { .. } => format!(
            "uses more than {MAX_ALIASES} aliases (the most a document may): write the values out"
        ),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "uses {aliases} aliases of {anchors} anchors (at most 10 an anchor once a document has 100): write the values out"
        ),
        other => format!("is too large or complex to read ({other:?}): split it"),
    }
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
