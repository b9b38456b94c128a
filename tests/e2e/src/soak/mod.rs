//! A randomized soak with a model checker: actors propose (with kubectl and by pushing to the
//! config repository), approve, reject (with kubectl and with `/agent` comments in Gitea), and
//! edit YNAB behind ledgerops' back, while a fault schedule kills either replica of the
//! controller, the leader or the API server's store, pauses Gitea and makes YNAB fail; the
//! simulator journals every request and change, and [`checker::check`] holds the history to
//! what ledgerops promises. Reproducible from its seed (the schedule, not the timing).
//!
//! `cargo run -p ledgerops-e2e --bin soak -- --minutes 60 --seed 7`

pub mod actors;
pub mod checker;
pub mod collect;
pub mod faults;
pub mod history;
pub mod pace;
pub mod rng;
pub mod setup;

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use actors::Recorder;
use checker::Verdict;
use history::History;
use rng::Rng;
use setup::World;

#[derive(Debug, Clone)]
pub struct Config {
    pub duration: Duration,
    pub seed: u64,
    /// Purchases in the simulated budget the actors work on.
    pub transactions: usize,
    /// Runs the controller with the planted bug (a bulk update resent after a dropped answer),
    /// to prove the checker catches it.
    pub planted_bug: bool,
}

/// What a soak did and what the checker found.
pub struct Report {
    pub config: Config,
    pub elapsed: Duration,
    pub actions: BTreeMap<&'static str, u64>,
    pub verdict: Verdict,
    pub history: History,
    /// The controller's log, when something was found.
    pub log: String,
}

/// Runs a soak: its own control plane, simulator and controller, for `config.duration`.
pub async fn run(config: Config) -> Report {
    let started = Instant::now();
    let mut rng = Rng::new(config.seed);
    let mut world = World::start(config.transactions, &mut rng, config.planted_bug).await;
    let mut rec = Recorder::default();
    let deadline = Instant::now() + config.duration;
    let mut next_fault = Instant::now()
        + Duration::from_secs(rng.below(faults::GAP_SECONDS.0, faults::GAP_SECONDS.1));
    while Instant::now() < deadline {
        if Instant::now() >= next_fault {
            faults::inject(&mut world, &mut rng, &mut rec).await;
            next_fault = Instant::now()
                + Duration::from_secs(rng.below(faults::GAP_SECONDS.0, faults::GAP_SECONDS.1));
        }
        faults::heal_store(&mut world, &mut rec).await;
        actors::act(&world, &mut rng, &mut rec).await;
        tokio::time::sleep(Duration::from_millis(rng.below(50, 400))).await;
    }
    faults::heal_store(&mut world, &mut rec).await;
    faults::stop(&mut world).await;
    collect::settle(&world).await;
    let history = collect::history(&world, &rec).await;
    let verdict = checker::check(&history);
    // `SOAK_HISTORY=<file>` keeps the whole history for a closer look.
    if let Some(path) = std::env::var_os("SOAK_HISTORY") {
        let json = serde_json::to_vec(&history).expect("the history serializes");
        std::fs::write(&path, json).expect("writing the history");
    }
    let log = if verdict.violations.is_empty() {
        String::new()
    } else {
        world.log()
    };
    // `SOAK_LOG=<file>` keeps every replica's log, whatever the verdict, to read beside it.
    if let Some(path) = std::env::var_os("SOAK_LOG") {
        std::fs::write(&path, world.log()).expect("writing the controllers' log");
    }
    Report {
        config,
        elapsed: started.elapsed(),
        actions: rec.actions.clone(),
        verdict,
        history,
        log,
    }
}

impl Report {
    /// The faults the schedule injected.
    pub fn faults(&self) -> usize {
        self.history.faults.iter().filter(|f| f.planned).count()
    }

    /// The times the store exited on its own (and was started again).
    pub fn unplanned(&self) -> usize {
        self.history.faults.iter().filter(|f| !f.planned).count()
    }

    /// The objects of `kind` the proposer created (undos not counted).
    fn proposed(&self, kind: &str) -> usize {
        self.history
            .intents
            .iter()
            .filter(|i| i.undo_of.is_none() && i.subject.starts_with(kind))
            .count()
    }
}

/// The most violations a report shows in full.
const SHOWN: usize = 20;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.verdict;
        writeln!(
            f,
            "soak: seed {}, {:.1} minutes (asked {:.1}), planted bug: {}",
            self.config.seed,
            self.elapsed.as_secs_f64() / 60.0,
            self.config.duration.as_secs_f64() / 60.0,
            self.config.planted_bug
        )?;
        writeln!(
            f,
            "  {} Transactions and {} plans proposed, {} faults ({} store exits nobody planned), {} journal entries",
            self.proposed("Transaction/"),
            self.proposed("CategorizationPlan/"),
            self.faults(),
            self.unplanned(),
            self.history.journal.len()
        )?;
        writeln!(
            f,
            "  {} controller writes checked, {} edits by a person, {} races (edit between read and write, not blamed)",
            v.writes, v.edits, v.races
        )?;
        let spans = pace::spans(&self.history);
        let shown: Vec<String> = spans.iter().map(u64::to_string).collect();
        writeln!(
            f,
            "  {} YNAB requests, per 5-minute span: {}; {} transactions written",
            spans.iter().sum::<u64>(),
            shown.join(" "),
            pace::written(&self.history)
        )?;
        writeln!(f, "  actions: {:?}", self.actions)?;
        writeln!(f, "  violations: {}", v.violations.len())?;
        for violation in v.violations.iter().take(SHOWN) {
            writeln!(f, "    {violation}")?;
            for line in checker::context(&self.history.journal, violation) {
                writeln!(f, "      {line}")?;
            }
        }
        if v.violations.len() > SHOWN {
            writeln!(f, "    … and {} more", v.violations.len() - SHOWN)?;
        }
        Ok(())
    }
}
