//! How a token's hour of YNAB requests is spent in a burst: 500 Transactions a config repository
//! applied and a 300-line plan the policy writes unasked, all at minute 0, periodic syncs every
//! five minutes, and a person's approval of a 2-line plan at minute 5 and another at minute 30.
//!
//! The hour runs on a simulated clock (one step a second) through the controller's own request
//! window (`logic::runtime::request_window`, the code every YNAB request asks first), once as
//! the controller spends it now (shares kept for people, the rest paced) and once first come,
//! first served (the baseline, as before issue 40). The writers are modelled as the batcher
//! behaves: what is waiting goes out together (a fresh read, then bulk updates of up to 1,000),
//! and a flush the window holds back keeps its items for the next one. The Transactions become
//! ready at the rate the soak measured (500 in 167 s), a flush every batch window (2 s), and
//! the watch-triggered syncs the soak saw beside them (116 reads to 84 bulk updates: one sync
//! per 16 Transactions); a sync that waits serves every reason to sync that came meanwhile.
//!
//! Prints, for both: requests per 5-minute span, the longest span without a request while work
//! waited, approve -> written for both approvals, and the hour's total. Asserts only that
//! neither spends more than the hour's limit.
//!
//! `cargo bench -p ledgerops-e2e --bench request_budget`

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use ledgerops::logic::runtime::pacing::Limits;
use ledgerops::logic::runtime::request_priority::{self, Priority};
use ledgerops::logic::runtime::request_window::RequestWindow;

const HOUR: i64 = 3600;
const PER_HOUR: u32 = 180;
const TRANSACTIONS: u32 = 500;
/// The soak's figure: 500 Transactions reached the batcher within 167 s.
const READY_OVER: i64 = 167;
const PLAN_LINES: u32 = 300;
const BATCH_WINDOW: i64 = 2;
const SYNC_INTERVAL: i64 = 300;
const MAX_BULK: u32 = 1_000;
const APPROVALS: [i64; 2] = [300, 1800];
/// Transactions per watch-triggered sync, as the soak measured.
const PER_WATCH_SYNC: u32 = 16;

/// Lines waiting to be written, by priority.
#[derive(Default)]
struct Waiting {
    lines: [u32; 4],
}

impl Waiting {
    fn add(&mut self, p: Priority, n: u32) {
        self.lines[index(p)] += n;
    }

    fn total(&self) -> u32 {
        self.lines.iter().sum()
    }

    fn priority(&self) -> Priority {
        request_priority::of_batch(
            Priority::ALL
                .into_iter()
                .filter(|p| self.lines[index(*p)] > 0),
        )
    }
}

fn index(p: Priority) -> usize {
    Priority::ALL.iter().position(|q| *q == p).unwrap()
}

/// One simulated hour.
struct Run {
    window: RequestWindow,
    /// Whether every request is treated alike (the baseline).
    first_come: bool,
    sent: Vec<i64>,
    waiting: Waiting,
    /// Approvals waiting to be written: (which, when given).
    approvals: Vec<(usize, i64)>,
    written: Vec<Option<i64>>,
    /// Seconds at which work waited and nothing could be sent.
    starved: Vec<i64>,
    /// A background sync is wanted (periodic or watch-triggered).
    sync_wanted: bool,
    /// Lines still waiting when the first approval comes: what the pace alone left unwritten.
    before_approval: u32,
}

impl Run {
    fn new(first_come: bool) -> Self {
        let limits = if first_come {
            Limits::unpaced(PER_HOUR)
        } else {
            Limits {
                per_hour: PER_HOUR,
                reserved_percent: 25,
            }
        };
        Self {
            window: RequestWindow::with(limits),
            first_come,
            sent: Vec::new(),
            waiting: Waiting::default(),
            approvals: Vec::new(),
            written: vec![None; APPROVALS.len()],
            starved: Vec::new(),
            sync_wanted: false,
            before_approval: 0,
        }
    }

    /// A request at `t`; `write` is a bulk update after its batch's read.
    fn acquire(&mut self, t: i64, p: Priority, write: bool) -> bool {
        // The baseline knows no priorities: every request is alike and none is paced.
        let p = if self.first_come {
            Priority::Approved
        } else {
            p
        };
        let ok = if write {
            self.window.try_acquire_write(at(t), p).is_ok()
        } else {
            self.window.try_acquire(at(t), p).is_ok()
        };
        if ok {
            self.sent.push(t);
        }
        ok
    }

    /// A flush of the batcher: a fresh read, then bulk updates of what waits; held back as a
    /// whole when the window refuses the read.
    fn flush(&mut self, t: i64) {
        if self.waiting.total() == 0 {
            return;
        }
        let p = self.waiting.priority();
        if !self.acquire(t, p, false) {
            self.starved.push(t);
            return;
        }
        while self.waiting.total() > 0 {
            let p = self.waiting.priority();
            if !self.acquire(t, p, true) {
                self.starved.push(t);
                return;
            }
            let mut room = MAX_BULK;
            for q in Priority::ALL {
                let n = self.waiting.lines[index(q)].min(room);
                self.waiting.lines[index(q)] -= n;
                room -= n;
            }
            if self.waiting.lines[index(Priority::Approved)] == 0 {
                for (i, given) in self.approvals.drain(..) {
                    self.written[i] = Some(t - given);
                }
            }
        }
    }

    fn hour(mut self) -> Self {
        let mut ready = 0;
        for t in 0..HOUR {
            if t == 0 {
                self.waiting.add(Priority::Unasked, PLAN_LINES);
            }
            let due = (u64::from(TRANSACTIONS) * (t as u64 + 1) / READY_OVER as u64)
                .min(u64::from(TRANSACTIONS)) as u32;
            self.waiting.add(Priority::Background, due - ready);
            if due / PER_WATCH_SYNC > ready / PER_WATCH_SYNC || t % SYNC_INTERVAL == 0 {
                self.sync_wanted = true;
            }
            ready = due;
            if t == APPROVALS[0] {
                self.before_approval = self.waiting.total();
            }
            if let Some(i) = APPROVALS.iter().position(|a| *a == t) {
                self.waiting.add(Priority::Approved, 2);
                self.approvals.push((i, t));
            }
            // A person's write does not wait for the batch window.
            let approved = self.waiting.lines[index(Priority::Approved)] > 0;
            if approved || t % BATCH_WINDOW == 0 {
                self.flush(t);
            }
            if self.sync_wanted {
                self.sync_wanted = !self.acquire(t, Priority::Background, false);
                if self.sync_wanted {
                    self.starved.push(t);
                }
            }
        }
        self
    }

    fn spans(&self) -> Vec<usize> {
        (0..HOUR / 300)
            .map(|s| {
                self.sent
                    .iter()
                    .filter(|t| (s * 300..(s + 1) * 300).contains(*t))
                    .count()
            })
            .collect()
    }

    /// The longest stretch in which work waited and no request went out.
    fn longest_silence(&self) -> i64 {
        let mut longest = 0;
        let mut last = 0;
        for t in 0..HOUR {
            if self.sent.contains(&t) {
                last = t;
            } else if self.starved.contains(&t) {
                longest = longest.max(t - last);
            }
        }
        longest
    }
}

fn at(t: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1_790_000_000 + t)
}

fn show(name: &str, run: &Run) {
    let spans: Vec<String> = run.spans().iter().map(|n| n.to_string()).collect();
    let written: Vec<String> = run
        .written
        .iter()
        .map(|w| w.map_or("not in the hour".into(), |s| format!("{s} s")))
        .collect();
    println!("{name}");
    println!("  requests per 5-minute span:      {}", spans.join(" "));
    println!(
        "  total in the hour:               {} of {PER_HOUR}",
        run.sent.len()
    );
    println!(
        "  longest silence while work waits: {} s",
        run.longest_silence()
    );
    println!("  approve -> written (min 5, 30):  {}", written.join(", "));
    println!("  lines waiting at minute 5:       {}", run.before_approval);
    println!("  lines still waiting at the end:  {}", run.waiting.total());
}

fn main() {
    let paced = Run::new(false).hour();
    let baseline = Run::new(true).hour();
    println!(
        "A burst of {TRANSACTIONS} Transactions and a {PLAN_LINES}-line unasked plan at minute 0, approvals at minutes 5 and 30, {PER_HOUR} requests per hour"
    );
    show("priorities and pacing (25% kept for people):", &paced);
    show("first come, first served (baseline):", &baseline);
    for run in [&paced, &baseline] {
        assert!(run.sent.len() <= PER_HOUR as usize, "over the hour's limit");
    }
    let first = |r: &Run| r.spans()[0];
    println!(
        "requests in the burst's first 5 minutes: {} paced, {} first come (ratio {:.2})",
        first(&paced),
        first(&baseline),
        first(&paced) as f64 / first(&baseline).max(1) as f64
    );
}
