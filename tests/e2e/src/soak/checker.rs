//! The model a soak's history is checked against: what ledgerops promises, rule by rule. Each
//! violation names the rule, the record, and the journal entries that led to it.
//!
//! The controller reads YNAB and then writes; YNAB has no conditional write, so a person's edit
//! that lands between the read and the write cannot be seen. The checker knows the knowledge the
//! controller's last read before each write had at least seen, and holds the controller to what
//! it could have known: an edit it had read and then overwrote is a violation, an edit in that
//! window is a race, counted but not blamed.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;

use ledgerops::ynab_model::ClearedStatus;
use ynab_sim::{By, Entry, Event, Record, Touch};

use super::history::{Approval, History, Intent};

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: &'static str,
    /// The transaction, object or token it is about.
    pub about: String,
    pub detail: String,
    /// The journal entries (sequence numbers) that led to it, oldest first.
    pub events: Vec<u64>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {}: {} (journal entries {:?})",
            self.rule, self.about, self.detail, self.events
        )
    }
}

/// What the checker found besides violations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub violations: Vec<Violation>,
    /// Writes by the controller the checker looked at.
    pub writes: usize,
    /// Edits by a person.
    pub edits: usize,
    /// Edits that landed between the controller's read and its write (not blamed).
    pub races: usize,
}

/// Rule names, as reports and tests spell them.
pub const UNCOVERED: &str = "write-without-decision";
pub const TWICE: &str = "written-twice";
pub const CLOBBER: &str = "person-overwritten";
pub const UNDECLARED: &str = "undeclared-field";
pub const DELETED: &str = "wrote-deleted";
pub const RECONCILED: &str = "wrote-reconciled";
pub const REUSED: &str = "approval-reused";
pub const OWN: &str = "approved-own-proposal";
pub const RATE: &str = "over-request-budget";
pub const STUCK: &str = "stuck-without-reason";
pub const MEMORY: &str = "memory-unbounded";
pub const UNJOURNALED: &str = "write-not-journaled";
pub const POWERLESS: &str = "decided-without-the-power";
pub const RESENT: &str = "resent-after-landing";
pub const SILENT: &str = "silent-while-waiting";

/// One controller write or person edit of one transaction, in journal order.
struct Change<'a> {
    seq: u64,
    at_ms: u64,
    by: By,
    knowledge: i64,
    /// The least knowledge the controller's last read before this change had seen.
    seen: i64,
    touch: &'a Touch,
}

/// Checks `history` against every rule.
pub fn check(history: &History) -> Verdict {
    let changes = changes(history);
    let mut verdict = Verdict::default();
    let mut writes = Writes::new(history);
    let mut by_tx: HashMap<&str, Vec<&Change>> = HashMap::new();
    for change in &changes {
        let id = change.touch.after.summary.id.as_str();
        let earlier = by_tx.entry(id).or_default();
        match change.by {
            By::Person => verdict.edits += 1,
            By::Api => {
                verdict.writes += 1;
                verdict.races += usize::from(raced(change, earlier));
                writes.check(change, earlier, &mut verdict.violations);
            }
        }
        earlier.push(change);
    }
    verdict.violations.extend(own_approvals(&history.approvals));
    verdict.violations.extend(powerless(history));
    verdict.violations.extend(over_budget(history));
    verdict.violations.extend(stuck(history));
    verdict.violations.extend(memory(history));
    verdict
        .violations
        .extend(super::pace::silent_while_waiting(history));
    verdict
}

/// Every change to a transaction, with what the controller had read before it.
fn changes(history: &History) -> Vec<Change<'_>> {
    let mut seen = 0;
    let mut out = Vec::new();
    for entry in &history.journal {
        match &entry.event {
            Event::Request {
                endpoint,
                token,
                status,
                knowledge: Some(k),
                ..
            } if *token == history.token && endpoint.starts_with("GET ") && status == "200" => {
                seen = seen.max(*k);
            }
            Event::Change {
                by,
                knowledge,
                touched,
                ..
            } => out.extend(touched.iter().map(|touch| Change {
                seq: entry.seq,
                at_ms: entry.at_ms,
                by: *by,
                knowledge: *knowledge,
                seen,
                touch,
            })),
            Event::Request { .. } => {}
        }
    }
    out
}

/// Whether someone else changed the transaction after the controller's last read and before
/// this write: the controller could not have known.
fn raced(change: &Change, earlier: &[&Change]) -> bool {
    earlier
        .iter()
        .any(|c| c.by == By::Person && c.knowledge > change.seen)
}

/// A transaction's allocation: its category, or its split lines.
fn allocation(r: &Record) -> (Option<&str>, Vec<(i64, Option<&str>)>) {
    (
        r.summary.category_id.as_deref(),
        r.splits
            .iter()
            .map(|s| (s.amount, s.category_id.as_deref()))
            .collect(),
    )
}

/// A field besides the allocation, read from a record.
type Field = (&'static str, fn(&Record) -> String);

/// The fields no intent of the soak asks the controller to change.
const UNDECLARED_FIELDS: [Field; 6] = [
    ("memo", |r| format!("{:?}", r.summary.memo)),
    ("flag", |r| format!("{:?}", r.summary.flag_color)),
    ("approved", |r| r.summary.approved.to_string()),
    ("amount", |r| r.summary.amount.to_string()),
    ("date", |r| r.summary.date.clone()),
    ("payee", |r| format!("{:?}", r.summary.payee_id)),
];

/// A write a plan asked for, as it landed.
struct Landed {
    id: String,
    from: Option<String>,
    to: Option<String>,
}

/// The controller's writes checked one by one, with the approvals already used.
struct Writes<'h> {
    history: &'h History,
    /// (approval, transaction) → the write that used it.
    used: HashMap<(&'h str, String), u64>,
    /// Plan → the writes it asked for: (transaction, category before, category after).
    undone: BTreeMap<&'h str, Vec<Landed>>,
    /// Subject → its changes run without a person.
    ran: HashMap<&'h str, usize>,
    /// The operation journal's entries (by index) that a landed write used.
    sent: HashSet<usize>,
}

impl<'h> Writes<'h> {
    fn new(history: &'h History) -> Self {
        Writes {
            history,
            used: HashMap::new(),
            undone: BTreeMap::new(),
            ran: HashMap::new(),
            sent: HashSet::new(),
        }
    }

    fn check(&mut self, write: &Change, earlier: &[&Change], out: &mut Vec<Violation>) {
        let touch = write.touch;
        let id = &touch.after.summary.id;
        let Some(before) = &touch.before else {
            return; // ledgerops never creates transactions; the checker has nothing to hold.
        };
        let guarded = if before.summary.deleted {
            Some((
                DELETED,
                "the controller wrote a transaction deleted in YNAB",
            ))
        } else if before.summary.cleared == ClearedStatus::Reconciled {
            Some((RECONCILED, "the controller wrote a reconciled transaction"))
        } else {
            None
        };
        if let Some((rule, what)) = guarded {
            if !raced(write, earlier) {
                out.push(violation(rule, id, what, [write.seq]));
            }
            return;
        }
        if *before == touch.after {
            if !raced(write, earlier) {
                let last = earlier.iter().rev().find(|c| c.by == By::Api);
                out.push(violation(
                    TWICE,
                    id,
                    "the controller wrote what YNAB already held, with nothing changed since its last read: a write sent twice",
                    last.map(|c| c.seq).into_iter().chain([write.seq]),
                ));
            }
            return;
        }
        if allocation(before) != allocation(&touch.after) {
            self.clobbered(write, earlier, out);
            // A person's edit after the controller's last read is a race: the write is held to
            // the state that read showed, which is what was decided and approved.
            let read = earlier
                .iter()
                .find(|c| c.knowledge > write.seen)
                .and_then(|c| c.touch.before.as_ref())
                .unwrap_or(before);
            self.covered(write, read, out);
        }
        for (name, read) in UNDECLARED_FIELDS {
            if read(before) != read(&touch.after) {
                out.push(violation(
                    UNDECLARED,
                    id,
                    &format!(
                        "the controller changed the {name}, which no intent of the soak declares"
                    ),
                    [write.seq],
                ));
            }
        }
    }

    /// A person's category edit the controller had read, overwritten with the value the
    /// controller had written before the edit: it fought the person. Only a newer intent, or an
    /// approval given after the edit for exactly this change (from the person's value), may.
    fn clobbered(&self, write: &Change, earlier: &[&Change], out: &mut Vec<Violation>) {
        let changed = |c: &&&Change| {
            c.touch
                .before
                .as_ref()
                .is_none_or(|b| allocation(b) != allocation(&c.touch.after))
        };
        let Some(edit) = earlier
            .iter()
            .rev()
            .find(changed)
            .filter(|c| c.by == By::Person)
        else {
            return;
        };
        let target = write.touch.after.summary.category_id.as_deref();
        let fought = earlier.iter().any(|c| {
            c.by == By::Api
                && c.knowledge < edit.knowledge
                && c.touch.after.summary.category_id.as_deref() == target
        });
        if edit.knowledge > write.seen || !fought {
            return;
        }
        let id = write.touch.after.summary.id.as_str();
        let newer = self.history.intents.iter().any(|i| {
            i.undo_of.is_none()
                && i.at_ms > edit.at_ms
                && i.targets.get(id).map(String::as_str) == target
        });
        let person_value = edit.touch.after.summary.category_id.as_deref();
        let informed = self.history.approvals.iter().any(|a| {
            a.decision
                .as_ref()
                .is_some_and(|d| d.approve && d.at_ms > edit.at_ms)
                && a.changes.iter().any(|(t, from, to)| {
                    t == id && from.as_deref() == person_value && to.as_deref() == target
                })
        });
        if !newer && !informed {
            out.push(violation(
                CLOBBER,
                id,
                "the controller put back its own earlier category over a person's edit it had read, with no newer intent or approval of exactly that",
                [edit.seq, write.seq],
            ));
        }
    }

    /// A category write must come from an intent, and be run by policy or by a person's
    /// approval showing exactly this change, used once.
    fn covered(&mut self, write: &Change, before: &Record, out: &mut Vec<Violation>) {
        let id = write.touch.after.summary.id.clone();
        let from = before.summary.category_id.clone();
        let to = write.touch.after.summary.category_id.clone();
        let candidates: Vec<&'h Intent> = self
            .history
            .intents
            .iter()
            .filter(|i| i.at_ms <= write.at_ms && self.asks(i, &id, &from, &to))
            .collect();
        for intent in &candidates {
            self.landed(intent, &id, &from, &to);
        }
        // Which object sent the write is not in YNAB's record: a plan is held to its journal
        // only when no Transaction asked for the same change.
        let by_plan = candidates
            .iter()
            .all(|i| i.subject.starts_with("CategorizationPlan/"));
        // Several intents may ask for the same change, and their approvals may be several: the
        // write is covered by any approval not used yet for this transaction, newest intent
        // first, else by the policy (a Transaction asking again for what a used approval once
        // covered runs on its own when small); only when neither covers it is it reuse.
        let mut reused = None;
        for intent in candidates.iter().rev() {
            let fitting: Vec<&'h Approval> =
                approvals_for(self.history, intent, &id, &from, &to, write.at_ms).collect();
            for approval in fitting {
                let key = (approval.name.as_str(), id.clone());
                match self.used.get(&key) {
                    Some(first) => reused = reused.or(Some((approval, *first))),
                    None => {
                        self.used.insert(key, write.seq);
                        if by_plan {
                            self.journaled(intent, write, &from, &to, out);
                        }
                        return;
                    }
                }
            }
        }
        if let Some(intent) = candidates
            .iter()
            .rev()
            .find(|_| self.runs_without_person(before))
        {
            let ran = self.ran.entry(intent.subject.as_str()).or_default();
            *ran += 1;
            if *ran > self.history.auto_max_changes {
                out.push(violation(
                    UNCOVERED,
                    &id,
                    &format!(
                        "{} ran more than {} changes without a person",
                        intent.subject, self.history.auto_max_changes
                    ),
                    [write.seq],
                ));
            }
            if by_plan {
                self.journaled(intent, write, &from, &to, out);
            }
            return;
        }
        if let Some((approval, first)) = reused {
            out.push(violation(
                REUSED,
                &id,
                &format!(
                    "ApprovalRequest {} covered this change once already",
                    approval.name
                ),
                [first, write.seq],
            ));
            return;
        }
        out.push(violation(
            UNCOVERED,
            &id,
            &format!(
                "category {from:?} → {to:?} written with no intent run by policy or approved by a person for exactly this change (candidates: {:?})",
                candidates.iter().map(|i| &i.subject).collect::<Vec<_>>()
            ),
            [write.seq],
        ));
    }

    /// A plan's write must be in ledgerops' operation journal, recorded before it landed (the
    /// entry's time is the API server's, in whole seconds): undo restores only what the journal
    /// holds. One entry is sent once: a second write of it is the operation sending again a
    /// change that had landed, over whatever moved the transaction back since. (A Transaction
    /// keeps its write in its own status instead.)
    fn journaled(
        &mut self,
        intent: &Intent,
        write: &Change,
        from: &Option<String>,
        to: &Option<String>,
        out: &mut Vec<Violation>,
    ) {
        let id = write.touch.after.summary.id.as_str();
        let mut fitting = self.history.journaled.iter().enumerate().filter(|(_, j)| {
            j.transaction == id && j.from == *from && j.to == *to && j.at_ms <= write.at_ms + 1_000
        });
        let (any, unused) = (
            fitting.clone().next(),
            fitting.find(|(i, _)| !self.sent.contains(i)),
        );
        match (any, unused) {
            (_, Some((i, _))) => {
                self.sent.insert(i);
            }
            (Some((_, entry)), None) => out.push(violation(
                RESENT,
                id,
                &format!(
                    "{} wrote category {from:?} → {to:?} again under journal entry of {} that had landed once already",
                    intent.subject, entry.plan
                ),
                [write.seq],
            )),
            (None, None) => out.push(violation(
                UNJOURNALED,
                id,
                &format!(
                    "{} wrote category {from:?} → {to:?} with no entry for it in ledgerops' operation journal before the write",
                    intent.subject
                ),
                [write.seq],
            )),
        }
    }

    /// Whether `intent` asks for transaction `id` to go from `from` to `to`: an undo only where
    /// the plan's write still holds, back to what the plan replaced.
    fn asks(&self, intent: &Intent, id: &str, from: &Option<String>, to: &Option<String>) -> bool {
        match &intent.undo_of {
            Some(plan) => self.undone.get(plan.as_str()).is_some_and(|w| {
                w.iter()
                    .any(|l| l.id == id && l.from == *to && l.to == *from)
            }),
            None => intent.targets.get(id) == to.as_ref(),
        }
    }

    /// Remembers a write a plan asked for, for the plan's undo.
    fn landed(&mut self, intent: &'h Intent, id: &str, from: &Option<String>, to: &Option<String>) {
        if let (None, Some(plan)) = (
            &intent.undo_of,
            intent.subject.strip_prefix("CategorizationPlan/"),
        ) {
            self.undone.entry(plan).or_default().push(Landed {
                id: id.to_string(),
                from: from.clone(),
                to: to.clone(),
            });
        }
    }

    /// The policy's bound on one change: small enough. An undo is a plan like any other to the
    /// policy. (How many changes of one subject ran is counted by the caller.)
    fn runs_without_person(&self, before: &Record) -> bool {
        before.summary.amount.abs() < self.history.auto_below_milliunits
    }
}

/// The approvals that authorize `intent`'s change of `id` from `from` to `to` at `at_ms`:
/// approved by someone with the power other than the proposer, before the write and before it
/// expired, showing exactly that change.
fn approvals_for<'h, 'a>(
    history: &'h History,
    intent: &'a Intent,
    id: &'a str,
    from: &'a Option<String>,
    to: &'a Option<String>,
    at_ms: u64,
) -> impl Iterator<Item = &'h Approval> + 'a
where
    'h: 'a,
{
    history.approvals.iter().filter(move |a| {
        a.subject == intent.subject
            && a.decision.as_ref().is_some_and(|d| {
                d.approve
                    && !a.proposed_by.contains(&d.by)
                    && history.approvers.contains(&d.by)
                    && d.at_ms <= at_ms
                    && d.at_ms < a.expires_ms
            })
            && a.changes
                .iter()
                .any(|(t, f, c)| t == id && f == from && c == to)
    })
}

fn violation(
    rule: &'static str,
    about: &str,
    detail: &str,
    events: impl IntoIterator<Item = u64>,
) -> Violation {
    Violation {
        rule,
        about: about.to_string(),
        detail: detail.to_string(),
        events: events.into_iter().collect(),
    }
}

fn own_approvals(approvals: &[Approval]) -> Vec<Violation> {
    approvals
        .iter()
        .filter(|a| {
            a.decision
                .as_ref()
                .is_some_and(|d| d.approve && a.proposed_by.contains(&d.by))
        })
        .map(|a| {
            violation(
                OWN,
                &a.name,
                &format!(
                    "approved by one who shaped it ({})",
                    a.proposed_by.join(", ")
                ),
                [],
            )
        })
        .collect()
}

/// A decision (either way) recorded for someone who does not hold the power to decide.
fn powerless(history: &History) -> Vec<Violation> {
    history
        .approvals
        .iter()
        .filter_map(|a| a.decision.as_ref().map(|d| (a, d)))
        .filter(|(_, d)| !history.approvers.contains(&d.by))
        .map(|(a, d)| {
            violation(
                POWERLESS,
                &a.name,
                &format!(
                    "decided by {}, who holds no power to decide (approvers: {:?})",
                    d.by, history.approvers
                ),
                [],
            )
        })
        .collect()
}

/// The controller's requests in any rolling hour stay within its budget.
fn over_budget(history: &History) -> Vec<Violation> {
    const HOUR_MS: u64 = 3_600_000;
    let mut window: VecDeque<(u64, u64)> = VecDeque::new();
    let mut out = Vec::new();
    let mut came: Vec<(u64, u64)> = history
        .journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request { token, came_ms, .. } if *token == history.token => {
                Some((*came_ms, e.seq))
            }
            _ => None,
        })
        .collect();
    came.sort_unstable();
    for (at, seq) in came {
        while window.front().is_some_and(|(t, _)| at - t >= HOUR_MS) {
            window.pop_front();
        }
        window.push_back((at, seq));
        if window.len() as u64 > history.requests_per_hour {
            out.push(violation(
                RATE,
                "token",
                &format!(
                    "{} requests within an hour, over requestsPerHour {}",
                    window.len(),
                    history.requests_per_hour
                ),
                [window[0].1, seq],
            ));
            break;
        }
    }
    out
}

fn stuck(history: &History) -> Vec<Violation> {
    history
        .settled
        .iter()
        .filter(|s| !s.at_rest && s.ready.as_ref().is_none_or(|(_, m)| m.trim().is_empty()))
        .map(|s| {
            violation(
                STUCK,
                &s.subject,
                &format!(
                    "phase {:?} at the end, with no Ready condition saying why",
                    s.phase
                ),
                [],
            )
        })
        .collect()
}

fn memory(history: &History) -> Vec<Violation> {
    match history.peak_rss_kib {
        Some(peak) if peak > history.rss_bound_kib => vec![violation(
            MEMORY,
            "controller",
            &format!(
                "peak resident memory {peak} KiB over the bound {} KiB",
                history.rss_bound_kib
            ),
            [],
        )],
        _ => Vec::new(),
    }
}

/// The journal entries a violation names, one line each: who changed what about its record.
pub fn context(journal: &[Entry], v: &Violation) -> Vec<String> {
    journal
        .iter()
        .filter(|e| v.events.contains(&e.seq))
        .map(|e| match &e.event {
            Event::Change {
                by,
                knowledge,
                touched,
                ..
            } => {
                let mine = touched.iter().find(|t| t.after.summary.id == v.about);
                let what = mine.map_or_else(String::new, |t| {
                    let before = t.before.as_ref().map(|b| &b.summary);
                    format!(
                        "{}: category {:?} → {:?}, memo {:?} → {:?}",
                        v.about,
                        before.and_then(|b| b.category_id.as_deref()),
                        t.after.summary.category_id,
                        before.and_then(|b| b.memo.as_deref()),
                        t.after.summary.memo,
                    )
                });
                format!(
                    "#{} at {} ms, {by:?} at knowledge {knowledge} ({} records): {what}",
                    e.seq,
                    e.at_ms,
                    touched.len()
                )
            }
            Event::Request {
                endpoint, status, ..
            } => format!("#{} at {} ms: {endpoint} → {status}", e.seq, e.at_ms),
        })
        .collect()
}

#[cfg(test)]
#[path = "checker_tests.rs"]
mod tests;
