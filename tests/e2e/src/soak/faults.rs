//! The fault schedule, drawn from the soak's generator: kill -9 of either replica of the
//! controller or of the one leading (restarted a moment later), kill -9 of the API server's
//! store (kine on disk, started again at once), Gitea not answering for a while, YNAB answering
//! 429, 500 or 503, a write that lands but whose connection drops before the answer, latency,
//! and YNAB's clock off the controller's.

use std::time::Duration;

use ledgerops_testenv::gitea::Gitea;
use ynab_sim::{ClockSet, DropFault, RequestMatch, StatusFault, now_ms};

use super::actors::Recorder;
use super::history::Fault;
use super::rng::Rng;
use super::setup::{REPLICAS, World};

/// The most YNAB's clock is set off the controller's, either way: within what a host with NTP
/// drifts, well under the approval expiry and the sync interval.
pub const SKEW_SECONDS: u64 = 120;

async fn real_clock(w: &World) {
    let real = ClockSet {
        real: Some(true),
        ..Default::default()
    };
    w.s.sim
        .control()
        .set_clock(&real)
        .await
        .expect("the real clock");
}

/// The first fault, and the gap between two, in seconds.
pub const GAP_SECONDS: (u64, u64) = (8, 30);

/// Injects one fault.
pub async fn inject(w: &mut World, rng: &mut Rng, rec: &mut Recorder) {
    let control = w.s.sim.control();
    let what = match rng.below(0, 100) {
        0..15 => {
            let replica = usize::try_from(rng.below(0, REPLICAS as u64)).unwrap_or(0);
            let pause = rng.below(0, 3_000);
            kill_and_restart(w, replica, pause).await;
            format!("kill -9 of replica {replica}, restarted after {pause} ms")
        }
        15..25 => {
            // The leader, which may be in the middle of a write; the standby takes over once
            // the lease runs out.
            let leader = w.leader().await;
            let pause = rng.below(0, 20_000);
            kill_and_restart(w, leader.unwrap_or(0), pause).await;
            format!("kill -9 of the leader ({leader:?}), restarted after {pause} ms")
        }
        25..33 => {
            let took = w.restart_store().await;
            format!("kill -9 of the API server's store, ready again after {took:?}")
        }
        33..60 => match pending(&control).await {
            Some(left) => format!("no new YNAB fault: {left} still pending"),
            None => {
                let status = *rng.pick(&[429u16, 500, 503]);
                let count = u32::try_from(rng.below(1, 4)).unwrap_or(1);
                let method = rng
                    .pick(&[None, Some("GET"), Some("PATCH")])
                    .map(String::from);
                let fault = StatusFault {
                    status,
                    count,
                    detail: None,
                    only: RequestMatch {
                        method: method.clone(),
                        ..Default::default()
                    },
                };
                control.inject_status(&fault).await.expect("a status fault");
                format!("YNAB answers {status} to the next {count} {method:?} requests")
            }
        },
        60..85 => match pending(&control).await {
            Some(left) => format!("no new YNAB fault: {left} still pending"),
            None => {
                let hold_ms = rng.below(0, 3_000);
                let fault = DropFault {
                    count: 1,
                    hold_ms,
                    only: RequestMatch {
                        method: Some("PATCH".into()),
                        ..Default::default()
                    },
                };
                control
                    .drop_after_write(&fault)
                    .await
                    .expect("a drop fault");
                format!("the next bulk update lands, its connection dropped after {hold_ms} ms")
            }
        },
        85..89 => {
            // The controller's Gitea calls (job comments, permission checks) hang meanwhile;
            // the people wait too, as they would for a server that does not answer.
            let secs = rng.below(5, 30);
            let gitea = Gitea::shared();
            gitea.pause();
            tokio::time::sleep(Duration::from_secs(secs)).await;
            gitea.resume();
            format!("Gitea did not answer for {secs} s")
        }
        89..93 => {
            let latency = rng.below(0, 800);
            control.set_latency(latency).await.expect("latency");
            format!("YNAB answers {latency} ms late")
        }
        _ => {
            let skew = i64::try_from(rng.below(0, 2 * SKEW_SECONDS)).unwrap_or(0)
                - i64::try_from(SKEW_SECONDS).unwrap_or(0);
            real_clock(w).await;
            control.advance_clock(skew).await.expect("clock skew");
            format!("YNAB's clock {skew:+} s off the controller's")
        }
    };
    rec.faults.push(Fault {
        at_ms: now_ms(),
        what,
        planned: true,
    });
}

/// The YNAB faults armed and not yet used up, said for the report; `None` when there are none.
/// A fault is armed only when the last one is used up: faults counted in requests would
/// otherwise queue faster than a paced controller sends requests, and it would meet nothing
/// but failures.
async fn pending(control: &ynab_sim::SimControl) -> Option<String> {
    let faults = control.faults().await.expect("the pending faults");
    let statuses: u32 = faults.statuses.iter().map(|f| f.count).sum();
    let drops: u32 = faults.drops.iter().map(|f| f.count).sum();
    (statuses + drops > 0).then(|| format!("{statuses} failing answers and {drops} dropped writes"))
}

/// Starts the store again if it exited on its own, and records that as a fault nobody planned:
/// the run goes on, and the report says it happened.
pub async fn heal_store(w: &mut World, rec: &mut Recorder) {
    if !w.plane.store_exited() {
        return;
    }
    let took = w.restart_store().await;
    rec.faults.push(Fault {
        at_ms: now_ms(),
        what: format!(
            "the API server's store exited on its own (its log: kine.log), ready again after {took:?}"
        ),
        planned: false,
    });
}

/// kill -9 of `replica`, started again `pause_ms` later.
async fn kill_and_restart(w: &mut World, replica: usize, pause_ms: u64) {
    w.kill(replica);
    tokio::time::sleep(Duration::from_millis(pause_ms)).await;
    w.restart(replica).await;
}

/// Every fault stops: no pending fault, no latency, every replica running.
pub async fn stop(w: &mut World) {
    w.s.sim
        .control()
        .clear_faults()
        .await
        .expect("faults cleared");
    for replica in w.stopped() {
        w.restart(replica).await;
    }
}
