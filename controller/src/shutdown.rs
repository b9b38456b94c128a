//! One shutdown for the whole process: SIGTERM or SIGINT, listened for from the moment `run`
//! starts. kube-runtime's `shutdown_on_signal` starts listening only when its controller is
//! first polled, and once anything listens the signal no longer ends the process: a SIGTERM that
//! came between the two (a pod deleted while it starts) was lost, and the process hung until
//! SIGKILL.

use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// Whether the process was asked to stop; clones see the same request.
#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    /// Listens for SIGTERM and SIGINT from now on (the handlers are in place when this returns).
    pub fn on_signals() -> std::io::Result<Self> {
        let (asked, rx) = watch::channel(false);
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
            tracing::info!("shutdown requested: finishing the reconciles under way");
            asked.send_replace(true);
            // Kept, so that a later `requested()` still sees the request.
            asked.closed().await;
        });
        Ok(Self(rx))
    }

    /// A shutdown that is never asked for (a context that is not the process's).
    pub fn never() -> Self {
        Self(watch::channel(false).1)
    }

    /// Resolves once shutdown is asked for, at once if it already was.
    pub fn requested(&self) -> impl Future<Output = ()> + Send + Sync + 'static {
        let mut rx = self.0.clone();
        async move {
            if rx.wait_for(|asked| *asked).await.is_err() {
                // Nobody can ask any more.
                std::future::pending::<()>().await;
            }
        }
    }
}

#[cfg(test)]
#[path = "shutdown_tests.rs"]
mod tests;
