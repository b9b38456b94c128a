//! How the controller spread its token's hour: its YNAB requests per 5-minute span, how many
//! transactions it wrote, and the spans in which it sent nothing while a proposal waited on it
//! (`silent-while-waiting`: a controller that spends its hour in a burst and then sends nothing
//! leaves everything waiting for the rest of the hour).

use std::collections::HashMap;

use ynab_sim::{By, Event};

use super::checker::{SILENT, Violation};
use super::history::History;

/// The span requests are counted in.
pub const SPAN_MS: u64 = 300_000;

/// The controller's requests per span, from its first request to the end of the journal (the
/// last span may be partial).
pub fn spans(history: &History) -> Vec<u64> {
    let Some((came, first, end)) = requests(history) else {
        return Vec::new();
    };
    let mut spans = vec![0; ((end - first) / SPAN_MS + 1) as usize];
    for at in came {
        spans[((at - first) / SPAN_MS) as usize] += 1;
    }
    spans
}

/// The transactions the controller wrote (each counted once, however often written).
pub fn written(history: &History) -> usize {
    let mut ids: Vec<&str> = api_writes(history).map(|(id, _)| id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

/// Every full span with no request from the controller in which some proposal waited on it: one
/// made before the span ended that the controller had not yet written to any of its
/// transactions when the span began, and that it either wrote later or left waiting on itself
/// at the end (`Pending`, `Writing`, `Applying`, `Interrupted`). A proposal waiting on a person,
/// or refused, waits on nobody's request.
pub fn silent_while_waiting(history: &History) -> Vec<Violation> {
    let Some((came, first, end)) = requests(history) else {
        return Vec::new();
    };
    let mut writes_of: HashMap<&str, Vec<u64>> = HashMap::new();
    for (id, at) in api_writes(history) {
        writes_of.entry(id).or_default().push(at);
    }
    let left_waiting = |subject: &str| {
        history.settled.iter().any(|s| {
            s.subject == subject
                && s.phase
                    .as_deref()
                    .is_some_and(|p| ["Pending", "Writing", "Applying", "Interrupted"].contains(&p))
        })
    };
    // When each proposal began waiting, and when it stopped (`u64::MAX`: never).
    let waits: Vec<(&str, u64, u64)> = history
        .intents
        .iter()
        .filter_map(|intent| {
            let written = intent
                .targets
                .keys()
                .filter_map(|id| writes_of.get(id.as_str()))
                .flatten()
                .filter(|at| **at >= intent.at_ms)
                .min()
                .copied();
            match written {
                Some(at) => Some((intent.subject.as_str(), intent.at_ms, at)),
                None if left_waiting(&intent.subject) => {
                    Some((intent.subject.as_str(), intent.at_ms, u64::MAX))
                }
                None => None,
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut start = first;
    while start + SPAN_MS <= end {
        let stop = start + SPAN_MS;
        let quiet = !came.iter().any(|at| (start..stop).contains(at));
        let waiting = waits
            .iter()
            .find(|(_, from, to)| *from < stop && *to > start);
        if let (true, Some((subject, ..))) = (quiet, waiting) {
            out.push(Violation {
                rule: SILENT,
                about: (*subject).to_string(),
                detail: format!(
                    "no YNAB request in the 5 minutes from {start} ms while {subject} waited on the controller"
                ),
                events: Vec::new(),
            });
        }
        start = stop;
    }
    out
}

/// When each of the controller's requests came, in order, with the first of them and the end of
/// the journal; `None` when it made none.
fn requests(history: &History) -> Option<(Vec<u64>, u64, u64)> {
    let mut came: Vec<u64> = history
        .journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request { token, came_ms, .. } if *token == history.token => Some(*came_ms),
            _ => None,
        })
        .collect();
    came.sort_unstable();
    let first = *came.first()?;
    let end = history.journal.last()?.at_ms.max(first);
    Some((came, first, end))
}

/// Every transaction the controller's requests changed, with when.
fn api_writes(history: &History) -> impl Iterator<Item = (&str, u64)> {
    history.journal.iter().flat_map(|e| match &e.event {
        Event::Change {
            by: By::Api,
            touched,
            ..
        } => touched
            .iter()
            .map(|t| (t.after.summary.id.as_str(), e.at_ms))
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
#[path = "pace_tests.rs"]
mod tests;
