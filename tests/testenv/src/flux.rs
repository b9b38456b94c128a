//! Flux's notification-controller (<https://fluxcd.io/flux/components/notification/>) for tests:
//! the real hub, its CRDs installed on a control plane, its event endpoint on a free loopback
//! port. A suite posts Events to [`NotificationController::events_url`] (`ledgerops run
//! --events-address`) and reads what its Providers deliver.
//!
//! The binary and CRDs come from `tests/tools/build-notification-controller.sh` (built once per
//! version, then cached), or from `$LEDGEROPS_NOTIFICATION_CONTROLLER_BIN`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::process::{Guarded, log_tail};
use crate::{ControlPlane, Error, Result, free_ports};

/// The version the script builds unless `FLUX_NC_VERSION` says otherwise. Keep it equal to the
/// default in `tests/tools/build-notification-controller.sh`.
const DEFAULT_VERSION: &str = "v1.6.0";

/// The directory holding `notification-controller` and `crds/`.
pub fn notification_controller_dir() -> Result<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = match std::env::var_os("LEDGEROPS_NOTIFICATION_CONTROLLER_BIN") {
            Some(dir) => PathBuf::from(dir),
            None => crate::binaries::run_build_script(
                "build-notification-controller.sh",
                &[(
                    "FLUX_NC_VERSION",
                    std::env::var("FLUX_NC_VERSION").unwrap_or_else(|_| DEFAULT_VERSION.into()),
                )],
            )?,
        };
        if dir.join("notification-controller").is_file() && dir.join("crds").is_dir() {
            Ok(dir)
        } else {
            Err(format!(
                "{} has no notification-controller or no crds/",
                dir.display()
            ))
        }
    })
    .clone()
    .map_err(Error::FluxBuild)
}

/// A running notification-controller. It stops when this is dropped, and also when the test
/// process dies, however it dies.
pub struct NotificationController {
    process: Guarded,
    log: PathBuf,
    events_port: u16,
}

impl NotificationController {
    /// Installs the Flux notification CRDs on `plane` (server-side apply, so a second start on
    /// the same plane is a no-op), then starts the controller on it, watching every namespace,
    /// and waits until it is ready. `rate_limit`: how long it drops an Event that repeats one it
    /// already took (Flux's default is 5 minutes; a short one lets a suite see a repeat).
    pub async fn start(plane: &ControlPlane, rate_limit: Duration) -> Result<Self> {
        let dir = notification_controller_dir()?;
        let crds = dir.join("crds");
        plane.kubectl_ok(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            &crds.to_string_lossy(),
        ])?;
        for crd in [
            "alerts.notification.toolkit.fluxcd.io",
            "providers.notification.toolkit.fluxcd.io",
        ] {
            plane.kubectl_ok(&[
                "wait",
                "--for=condition=Established",
                "--timeout=60s",
                &format!("crd/{crd}"),
            ])?;
        }
        let [events, metrics, health, receiver] = free_ports()?;
        let log = plane
            .dir()
            .join(format!("notification-controller-{events}.log"));
        let mut cmd = Command::new(dir.join("notification-controller"));
        cmd.arg(format!("--events-addr=127.0.0.1:{events}"))
            .arg(format!("--metrics-addr=127.0.0.1:{metrics}"))
            .arg(format!("--health-addr=127.0.0.1:{health}"))
            .arg(format!("--receiverAddr=127.0.0.1:{receiver}"))
            .arg("--watch-all-namespaces=true")
            .arg("--enable-leader-election=false")
            .arg(format!(
                "--rate-limit-interval={}ms",
                rate_limit.as_millis()
            ))
            .arg("--log-level=debug")
            .env("KUBECONFIG", plane.kubeconfig())
            .env("RUNTIME_NAMESPACE", "default");
        let process = Guarded::spawn(cmd, &log)?;
        let me = Self {
            process,
            log,
            events_port: events,
        };
        me.wait_ready(health, Duration::from_secs(60)).await?;
        Ok(me)
    }

    /// The event endpoint, e.g. `http://127.0.0.1:40125/`: where controllers post Events.
    pub fn events_url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.events_port)
    }

    /// Its log so far (JSON lines).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Polls `/readyz` until the manager reports ready, and then the event server answers.
    async fn wait_ready(&self, health: u16, limit: Duration) -> Result<()> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| Error::FluxBuild(format!("building the HTTP client: {e}")))?;
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.process.exited() {
                return Err(Error::Exited(
                    "notification-controller",
                    log_tail(&self.log),
                ));
            }
            let ready = http
                .get(format!("http://127.0.0.1:{health}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            // The event server starts with the manager; it answers 405 to a GET once it listens.
            let listening = http.get(self.events_url()).send().await.is_ok();
            if ready && listening {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Err(Error::NotReady(
            "notification-controller",
            limit,
            log_tail(&self.log),
        ))
    }
}
