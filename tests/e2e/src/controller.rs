//! `ledgerops run` as a real process against a test control plane: started, probed, killed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ledgerops_testenv::{ControlPlane, Guarded, free_port};

/// The `ledgerops` binary, built once per test binary in the profile the tests run in.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| build("ledgerops", "ledgerops"))
}

/// The `kubectl-ledgerops` plugin binary, built once per test binary like [`binary`].
pub fn plugin_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| build("ledgerops-plugin", "kubectl-ledgerops"))
}

/// `kubectl` on `plane` as a person runs the plugin: `KUBECONFIG` set, and the directory of
/// `kubectl-ledgerops` first on `PATH`, where kubectl looks for plugins.
pub fn kubectl_with_plugin(plane: &ControlPlane) -> tokio::process::Command {
    let dir = plugin_binary().parent().expect("the plugin's directory");
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = tokio::process::Command::new(plane.kubectl().get_program());
    cmd.env("KUBECONFIG", plane.kubeconfig()).env("PATH", path);
    cmd
}

/// Builds `bin` of `package` into the profile of the running executable and returns its path.
fn build(package: &str, bin: &str) -> PathBuf {
    // Tests and benches live in <target>/<profile>/deps, binaries such as the demo in
    // <target>/<profile>; the binary is built into the same profile, so a benchmark measures
    // an optimised controller.
    let exe = std::env::current_exe().expect("test executable path");
    let mut profile = exe
        .parent()
        .expect("the executable's directory")
        .to_path_buf();
    if profile.ends_with("deps") {
        profile.pop();
    }
    let release = profile.ends_with("release");
    let mut args = vec!["build", "--quiet", "-p", package, "--bin", bin];
    if package == "ledgerops" {
        // The features `cargo test` builds it with (see tests/e2e/Cargo.toml).
        args.extend(["--features", "test-hooks"]);
    }
    if release {
        args.push("--release");
    }
    let mut cargo = Command::new(env!("CARGO"));
    // What cargo set for this test process describes its package (ledgerops-e2e). Passed on, a
    // dependency's build script that reads such a variable (ring's does) would see another
    // value than in the build that compiled the tests, and both builds would keep rebuilding it
    // and everything above it.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let of_package = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || name.starts_with("CARGO_BIN_")
            || matches!(
                name.as_ref(),
                "CARGO_CRATE_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR" | "OUT_DIR"
            );
        if of_package {
            cargo.env_remove(name.as_ref());
        }
    }
    let status = cargo.args(&args).status().expect("running cargo build");
    assert!(status.success(), "cargo build -p {package} failed");
    let path = profile.join(bin);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The allowlist every suite's controller gets unless it sets its own: any simulator on
/// 127.0.0.1, whatever its port, under `/v1` (the simulator's controls, outside `/v1`, are not).
pub const TEST_API_URLS: &str = "http://127.0.0.1:*/v1";

/// A running `ledgerops run`. Dropping it kills the process with SIGKILL, like a crash.
pub struct Ledgerops {
    process: Guarded,
    probe: String,
    log: PathBuf,
}

impl Ledgerops {
    /// Like [`Ledgerops::start`], with extra `ledgerops run` arguments and environment (for
    /// example the Gitea flags of the `/agent` commands).
    pub async fn start_with(
        plane: &ControlPlane,
        extra_args: &[&str],
        extra_env: &[(&str, &str)],
    ) -> Self {
        // `--listen host:port` in `extra_args` wins (a restarted controller keeps its port).
        let given = extra_args
            .windows(2)
            .find(|w| w[0] == "--listen")
            .map(|w| w[1].to_owned());
        let listen = given
            .clone()
            .unwrap_or_else(|| format!("127.0.0.1:{}", free_port().expect("a free port")));
        let port = listen.rsplit(':').next().unwrap_or_default().to_owned();
        let log = plane.dir().join(format!("ledgerops-{port}.log"));
        let mut cmd = Command::new(binary());
        cmd.arg("run");
        if given.is_none() {
            cmd.args(["--listen", &listen]);
        }
        let own_allowlist = extra_args.contains(&"--ynab-api-url-allow")
            || extra_env
                .iter()
                .any(|(k, _)| *k == "LEDGEROPS_YNAB_API_URL_ALLOW");
        if !own_allowlist {
            cmd.args(["--ynab-api-url-allow", TEST_API_URLS]);
        }
        cmd.args(extra_args)
            .env("KUBECONFIG", plane.kubeconfig())
            .env("RUST_LOG", "info,ledgerops=debug,kube=warn")
            .envs(extra_env.iter().copied());
        let process = Guarded::spawn(cmd, &log).expect("starting ledgerops");
        let me = Self {
            process,
            probe: format!("http://127.0.0.1:{port}"),
            log,
        };
        me.wait_ready().await;
        me
    }

    /// Base URL of the controller's HTTP endpoints, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> &str {
        &self.probe
    }

    /// Starts the controller against `plane` and waits until `/readyz` answers.
    pub async fn start(plane: &ControlPlane) -> Self {
        Self::start_with(plane, &[], &[]).await
    }

    /// One controller per test binary, for suites that share the control plane. Tests that kill
    /// the controller start their own plane and process instead.
    pub async fn shared() -> &'static Ledgerops {
        static SHARED: tokio::sync::OnceCell<Ledgerops> = tokio::sync::OnceCell::const_new();
        SHARED
            .get_or_init(|| Ledgerops::start(ControlPlane::shared()))
            .await
    }

    /// Stops the process with SIGTERM, as Kubernetes stops a pod, and waits (at most 30 s) until
    /// it has exited; returns its log.
    pub async fn stop(self) -> String {
        self.process.terminate();
        let start = Instant::now();
        while !self.process.exited() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "ledgerops did not stop within 30s of SIGTERM; its log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.log()
    }

    /// Whether the process has exited by itself.
    pub fn exited(&self) -> bool {
        self.process.exited()
    }

    /// Resident memory of the process, in KiB, from /proc.
    pub fn rss_kib(&self) -> Option<u64> {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.process.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The controller's log so far, for assertion messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The text of `/metrics`.
    pub async fn metrics(&self) -> String {
        reqwest::get(format!("{}/metrics", self.probe))
            .await
            .expect("/metrics")
            .text()
            .await
            .expect("metrics body")
    }

    async fn wait_ready(&self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            if let Ok(r) = reqwest::get(format!("{}/readyz", self.probe)).await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "ledgerops did not become ready within 60s; its log:\n{}",
            self.log()
        );
    }
}
