//! What a soak saw, as the checker reads it: the simulator's journal (every request, every
//! change with its record before and after), what the actors declared and decided, the faults,
//! and how every object ended. Plain data, so the checker's tests build histories by hand.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ynab_sim::Entry;

/// An object a proposer applied: which transactions it asks to move to which category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// `Transaction/<name>` or `CategorizationPlan/<name>`: as an ApprovalRequest's subject.
    pub subject: String,
    pub proposer: String,
    /// When it was created (wall-clock ms).
    pub at_ms: u64,
    /// Transaction id → the category it asks for. Empty for an undo (the undone plan says).
    pub targets: BTreeMap<String, String>,
    /// The plan this one undoes.
    pub undo_of: Option<String>,
}

/// An ApprovalRequest as it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub name: String,
    pub subject: String,
    /// Everyone who shaped the change (the request's lineage).
    pub proposed_by: Vec<String>,
    pub expires_ms: u64,
    /// `(transaction, from, to)`, as the request showed them.
    pub changes: Vec<(String, Option<String>, Option<String>)>,
    pub decision: Option<Decided>,
}

/// A decision recorded on an ApprovalRequest: who, what, and when the API accepted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decided {
    pub by: String,
    pub approve: bool,
    pub at_ms: u64,
}

/// An object as it ended, after the faults stopped and one more sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    pub subject: String,
    pub phase: Option<String>,
    /// Whether its phase is one it rests in (converged, applied, refused, diverged, …).
    pub at_rest: bool,
    /// The reason and message of its `Ready` condition, if it has one.
    pub ready: Option<(String, String)>,
}

/// One change of a plan's write as ledgerops' own journal recorded it (a ConfigMap entry made
/// before the chunk is sent): undo reads it, so whatever landed must be in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journaled {
    pub plan: String,
    pub transaction: String,
    pub from: Option<String>,
    pub to: Option<String>,
    /// When the entry was created (the API server's timestamp: whole seconds).
    pub at_ms: u64,
}

/// A fault the schedule injected (for the report and a violation's context).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub at_ms: u64,
    pub what: String,
    /// False for a fault nobody scheduled: the store exiting on its own (the soak starts it
    /// again and goes on, and the report counts it apart).
    pub planned: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct History {
    pub journal: Vec<Entry>,
    /// The controller's YNAB token: its requests are the ones the rate limit binds.
    pub token: String,
    pub requests_per_hour: u64,
    /// What the policy lets run without a person: an amount (milliunits, absolute) strictly
    /// below which, and at most this many changes.
    pub auto_below_milliunits: i64,
    pub auto_max_changes: usize,
    pub intents: Vec<Intent>,
    pub approvals: Vec<Approval>,
    /// Who holds the power to decide a request (as a decision names them): anyone else's
    /// decision is a violation, and covers nothing.
    pub approvers: Vec<String>,
    /// ledgerops' operation journal of plan writes, as it ended.
    pub journaled: Vec<Journaled>,
    pub faults: Vec<Fault>,
    pub settled: Vec<Settled>,
    /// The controller's peak resident memory, and the bound it must stay under.
    pub peak_rss_kib: Option<u64>,
    pub rss_bound_kib: u64,
}
