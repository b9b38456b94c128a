//! Reading one YAML document within what its revision may still hold, so that a push cannot
//! exhaust the controller's memory or time. Aliases count as what they expand to: serde_yaml's
//! alias limit counted jumps, and a 700 KB scalar aliased 60,000 times expanded to 42 GB.

use std::cell::Cell;
use std::rc::Rc;

use serde_json::Value;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{DefaultMessageFormatter, Error, MergeKeyPolicy, MessageFormatter};

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

/// Why a document was not read: the line in its text (1-based) when known, and what to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub line: Option<usize>,
    pub message: String,
}

/// The value of the YAML document `text`, charged to `allowance`. Parsing stops at the first
/// node past a limit, so a refused document costs no more than the limit.
pub fn read(text: &str, allowance: &mut Allowance) -> Result<Value, Unread> {
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
    let value = serde_saphyr::from_str_with_options(text, options);
    let (text_bytes, nodes) = used.get();
    allowance.passed |= text_bytes > allowance.text_bytes || nodes > allowance.nodes;
    allowance.text_bytes = allowance.text_bytes.saturating_sub(text_bytes);
    allowance.nodes = allowance.nodes.saturating_sub(nodes);
    value.map_err(|e| Unread {
        line: e
            .location()
            .and_then(|l| usize::try_from(l.line()).ok())
            .filter(|l| *l > 0),
        message: problem(&e),
    })
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
