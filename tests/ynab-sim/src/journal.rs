//! The history a checker replays: every `/v1` request as it was answered (with the server
//! knowledge it saw), and every change to a transaction with its record before and after, told
//! apart by who made it (the API, or a person through `/__sim`). Bounded: the oldest entries go.

use std::collections::VecDeque;

use ledgerops::ynab_model::{Milliunits, TransactionDetail, TransactionSummary};
use serde::{Deserialize, Serialize};

/// The most entries kept; an hour's soak stays well below it.
pub const JOURNAL_MAX: usize = 500_000;
/// The most entries one `GET /__sim/journal` answers with.
pub const JOURNAL_PAGE: usize = 5_000;

/// Who changed a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    /// A `/v1` request: the client under test.
    Api,
    /// `/__sim`: a person in the app.
    Person,
}

/// A split line as the checker compares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub amount: Milliunits,
    pub category_id: Option<String>,
    pub memo: Option<String>,
}

/// A transaction's fields and split lines at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub summary: TransactionSummary,
    pub splits: Vec<Split>,
}

impl From<&TransactionDetail> for Record {
    fn from(tx: &TransactionDetail) -> Self {
        Record {
            summary: tx.summary.clone(),
            splits: tx
                .subtransactions
                .iter()
                .map(|s| Split {
                    amount: s.amount,
                    category_id: s.category_id.clone(),
                    memo: s.memo.clone(),
                })
                .collect(),
        }
    }
}

/// One transaction a change touched: absent before when it was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touch {
    pub before: Option<Record>,
    pub after: Record,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A `/v1` request, journaled when answered (the entry's time): `knowledge` is the plan's
    /// server knowledge when it came (what a read could at least have seen), `status` the
    /// answer's or `dropped`.
    Request {
        endpoint: String,
        token: String,
        status: String,
        came_ms: u64,
        knowledge: Option<i64>,
    },
    /// A committed change to one plan's transactions at `knowledge`.
    Change {
        by: By,
        plan_id: String,
        knowledge: i64,
        touched: Vec<Touch>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub seq: u64,
    /// Wall-clock milliseconds since the Unix epoch.
    pub at_ms: u64,
    #[serde(flatten)]
    pub event: Event,
}

#[derive(Debug, Default)]
pub struct Journal {
    entries: VecDeque<Entry>,
    next: u64,
}

impl Journal {
    pub fn record(&mut self, at_ms: u64, event: Event) {
        self.next += 1;
        if self.entries.len() == JOURNAL_MAX {
            self.entries.pop_front();
        }
        self.entries.push_back(Entry {
            seq: self.next,
            at_ms,
            event,
        });
    }

    /// Up to [`JOURNAL_PAGE`] entries after `seq`, oldest first.
    pub fn after(&self, seq: u64) -> Vec<Entry> {
        let start = self.entries.partition_point(|e| e.seq <= seq);
        self.entries
            .range(start..)
            .take(JOURNAL_PAGE)
            .cloned()
            .collect()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// The transactions of `after` stamped at `knowledge`, with what `before` held for each.
pub fn touched<'a>(
    before: impl Fn(&str) -> Option<&'a TransactionDetail>,
    after: impl Iterator<Item = (&'a TransactionDetail, i64)>,
    knowledge: i64,
) -> Vec<Touch> {
    after
        .filter(|(_, k)| *k == knowledge)
        .map(|(tx, _)| Touch {
            before: before(&tx.summary.id).map(Record::from),
            after: Record::from(tx),
        })
        .collect()
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
