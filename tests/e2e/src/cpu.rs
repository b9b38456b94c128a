//! CPU time of processes, from `/proc`, for benchmarks that say which process their time goes to.

use std::time::{Duration, Instant};

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS: f64 = 100.0;

/// The CPU time (user and system) of process `pid` so far, if it runs.
pub fn time_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(ticks as f64 / TICKS))
}

/// CPU used by a set of processes between two moments, as cores busy on average.
pub struct Cores {
    pids: Vec<u32>,
    before: Duration,
    at: Instant,
}

impl Cores {
    /// Starts measuring `pids`.
    pub fn measure(pids: Vec<u32>) -> Self {
        let before = total(&pids);
        Self {
            pids,
            before,
            at: Instant::now(),
        }
    }

    /// Cores busy on average since the start.
    pub fn busy(&self) -> f64 {
        (total(&self.pids).saturating_sub(self.before)).as_secs_f64()
            / self.at.elapsed().as_secs_f64()
    }
}

fn total(pids: &[u32]) -> Duration {
    pids.iter().filter_map(|p| time_of(*p)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins until `/proc` counts 100 ms of CPU more, however loaded the machine (a spin for a
    /// fixed wall-clock time got a quarter of a core beside a soak and a build, and failed).
    #[test]
    fn this_process_uses_cpu_while_it_spins() {
        let me = std::process::id();
        let cores = Cores::measure(vec![me]);
        let before = time_of(me).expect("this process runs");
        let start = Instant::now();
        let mut x = 0u64;
        while time_of(me).unwrap() < before + Duration::from_millis(100) {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no CPU time counted in two minutes of spinning"
            );
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }
        assert!(cores.busy() > 0.0, "{}", cores.busy());
        assert_eq!(time_of(u32::MAX), None);
    }
}
