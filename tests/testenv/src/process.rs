//! Child processes that cannot outlive the test process.

use std::fs::OpenOptions;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use crate::{Result, io};

/// A child process killed when this is dropped, and by the kernel when the test process dies.
pub struct Guarded {
    pid: libc::pid_t,
    exited: Arc<AtomicBool>,
}

impl Guarded {
    /// Spawns `cmd` with its output appended to `log`.
    pub fn spawn(mut cmd: Command, log: &Path) -> Result<Self> {
        // Appended, so a process started again (a restarted store) keeps the log of its first run.
        let out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(io(format!("opening {}", log.display())))?;
        let err = out.try_clone().map_err(io("duplicating a log handle"))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        // SAFETY: prctl and getppid are async-signal-safe, as pre_exec requires.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() == 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let program = cmd.get_program().to_string_lossy().into_owned();
        // PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, so the child is
        // forked from a thread that lives exactly as long as the child (it waits for it).
        let (tx, rx) = mpsc::channel();
        let exited = Arc::new(AtomicBool::new(false));
        let reaped = exited.clone();
        std::thread::spawn(move || match cmd.spawn() {
            Ok(mut child) => {
                let _ = tx.send(Ok(child.id()));
                let _ = child.wait();
                reaped.store(true, Ordering::SeqCst);
            }
            Err(e) => {
                let _ = tx.send(Err(e));
            }
        });
        let pid = rx
            .recv()
            .expect("the spawning thread always answers")
            .map_err(io(format!("starting {program}")))?;
        Ok(Self {
            pid: pid as libc::pid_t,
            exited,
        })
    }
}

impl Guarded {
    /// The process id, for measuring the process (its RSS, say).
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Whether the process has ended (and been reaped), for failing fast while waiting on it.
    pub fn exited(&self) -> bool {
        self.exited.load(Ordering::SeqCst)
    }

    /// Asks the process to stop (SIGTERM), as Kubernetes does before it deletes a pod.
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// Sends `signal` to the process, unless it has exited (its pid may be another's by then).
    pub fn signal(&self, signal: libc::c_int) {
        if self.exited() {
            return;
        }
        // SAFETY: kill has no memory-safety preconditions; the waiting thread reaps the child,
        // and a reaped pid (which may already belong to another process) is not signalled.
        unsafe {
            libc::kill(self.pid, signal);
        }
    }
}

impl Guarded {
    /// Kills the process (SIGKILL) and waits until it is reaped, so what it held (a port, a
    /// file lock) is free when this returns; false if it was still running after `limit`.
    pub fn kill(&self, limit: std::time::Duration) -> bool {
        self.signal(libc::SIGKILL);
        let start = std::time::Instant::now();
        while !self.exited() {
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        true
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // Until it is reaped (bounded), so that what it held is free once it is dropped: a
        // controller restarted on its port on a loaded machine found the killed one still
        // holding it.
        self.kill(std::time::Duration::from_secs(10));
    }
}

/// Statics are never dropped, so a shared instance's directory is removed when the test process
/// exits instead; the kernel kills its processes then (see [`Guarded`]).
pub(crate) fn remove_at_exit(dir: PathBuf) {
    static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    extern "C" fn remove() {
        if let Ok(dirs) = DIRS.lock() {
            for dir in dirs.iter() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
    let mut dirs = DIRS.lock().expect("exit cleanup lock");
    if dirs.is_empty() {
        // SAFETY: `remove` never unwinds: it ignores every error.
        unsafe {
            libc::atexit(remove);
        }
    }
    dirs.push(dir);
}

/// The last lines of a log, for an error: the temp dir, and the log with it, go away with it.
pub(crate) fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| format!("(unreadable: {e})"));
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
