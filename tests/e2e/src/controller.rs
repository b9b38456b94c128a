//! `ledgerops run` as a real process against a test control plane: started, probed, killed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ledgerops_testenv::{ControlPlane, Guarded, free_ports};

/// The name that starts the suites' multi-call binary as the controller.
const CONTROLLER: &str = "ledgerops";
/// The name that starts it as the kubectl plugin: kubectl finds plugins by this name on `PATH`.
const PLUGIN: &str = "kubectl-ledgerops";
/// The name that starts it as the plugin's completer, which kubectl runs to complete the plugin.
const COMPLETER: &str = "kubectl_complete-ledgerops";
/// The multi-call binary: `src/bin/demo.rs`. Cargo builds a package's binaries before its
/// tests and benches, in their profile and from the same build of the `ledgerops` library
/// (with `test-hooks`), so the controller the suites run is built once, with the tests.
const MULTI_CALL: &str = "demo";

/// What the multi-call binary was started as, told by the file name it was started under.
pub enum Invoked {
    /// `ledgerops`: the controller's command line.
    Controller,
    /// `kubectl-ledgerops`: the plugin.
    Plugin,
    /// `kubectl_complete-ledgerops`: the plugin's completer.
    Completer,
    /// Any other name: the demo.
    Demo,
}

/// What this process was started as (see [`Invoked`]).
pub fn invoked() -> Invoked {
    let argv0 = std::env::args_os().next().map(PathBuf::from);
    match argv0
        .as_deref()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
    {
        Some(CONTROLLER) => Invoked::Controller,
        Some(PLUGIN) => Invoked::Plugin,
        Some(COMPLETER) => Invoked::Completer,
        _ => Invoked::Demo,
    }
}

/// The controller: the multi-call binary under the name `ledgerops`.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| named(CONTROLLER))
}

/// The `kubectl-ledgerops` plugin: the multi-call binary under that name.
pub fn plugin_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| named(PLUGIN))
}

/// Runs `kubectl-ledgerops` as `user` (the test kubeconfig's context of that name) on `plane`,
/// without a terminal: its exit code, and what it printed (stdout, then stderr).
pub async fn plugin_as(plane: &ControlPlane, user: &str, args: &[&str]) -> (i32, String) {
    let kubeconfig = plane.kubeconfig().display().to_string();
    let out = tokio::process::Command::new(plugin_binary())
        .args(["--kubeconfig", &kubeconfig, "--context", user])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("running kubectl-ledgerops");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// `kubectl` on `plane` as a person runs the plugin: `KUBECONFIG` set, and the directory of
/// `kubectl-ledgerops` and `kubectl_complete-ledgerops` first on `PATH`, where kubectl looks for
/// plugins and their completers.
pub fn kubectl_with_plugin(plane: &ControlPlane) -> tokio::process::Command {
    static COMPLETER_LINK: OnceLock<PathBuf> = OnceLock::new();
    COMPLETER_LINK.get_or_init(|| named(COMPLETER));
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

/// The multi-call binary of the running profile: this process when it is the demo; for a test
/// or bench (in `<target>/<profile>/deps`), the binary cargo built beside it.
fn multi_call() -> PathBuf {
    let exe = std::env::current_exe().expect("the running executable's path");
    let dir = exe.parent().expect("the executable's directory");
    if !dir.ends_with("deps") {
        return exe;
    }
    let path = dir
        .parent()
        .expect("the profile directory")
        .join(MULTI_CALL);
    assert!(
        path.exists(),
        "{} is missing: run the suites with cargo test or cargo bench, which build it",
        path.display()
    );
    path
}

/// A symbolic link called `name` to the multi-call binary, in `<profile>/multi-call/`. Made
/// under a name of this process's, then renamed, so test binaries running at once never see a
/// half-made link.
fn named(name: &str) -> PathBuf {
    let target = multi_call();
    let dir = target
        .parent()
        .expect("the binary's directory")
        .join("multi-call");
    std::fs::create_dir_all(&dir).expect("creating the directory of the binary's names");
    let link = dir.join(name);
    let scratch = dir.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&scratch);
    std::os::unix::fs::symlink(&target, &scratch).expect("linking the binary's name");
    std::fs::rename(&scratch, &link).expect("naming the binary");
    link
}

/// The allowlist every suite's controller gets unless it sets its own: any simulator on
/// 127.0.0.1, whatever its port, under `/v1` (the simulator's controls, outside `/v1`, are not).
pub const TEST_API_URLS: &str = "http://127.0.0.1:*/v1";
/// The Git URLs test controllers may fetch: any loopback port.
pub const TEST_GIT_URLS: &str = "http://127.0.0.1:*/";

/// The directory whose repositories the shared controller's ConfigRepos may name with `file://`.
pub fn shared_file_root() -> PathBuf {
    ControlPlane::shared().dir().join("repos")
}

/// How long a started controller may take to answer `/readyz` (one LIST on the API server).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// A running `ledgerops run`. Dropping it kills the process with SIGKILL, like a crash.
pub struct Ledgerops {
    process: Guarded,
    probe: String,
    webhook: String,
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
        Self::start_within(plane, extra_args, extra_env, READY_WITHIN).await
    }

    /// Like [`Ledgerops::start_with`], waiting at most `ready_within` for `/readyz` (the soak
    /// restarts it while the machine may be busy with other work).
    pub async fn start_within(
        plane: &ControlPlane,
        extra_args: &[&str],
        extra_env: &[(&str, &str)],
        ready_within: Duration,
    ) -> Self {
        // `--listen host:port` in `extra_args` wins (a restarted controller keeps its port).
        let given = extra_args
            .windows(2)
            .find(|w| w[0] == "--listen")
            .map(|w| w[1].to_owned());
        // Both held at once when picked, so that they differ.
        let [free, free_webhook] = free_ports::<2>().expect("two free ports");
        let listen = given.clone().unwrap_or_else(|| format!("127.0.0.1:{free}"));
        let port = listen.rsplit(':').next().unwrap_or_default().to_owned();
        // The Gitea webhook has its own port; `--webhook-listen` in `extra_args` wins too.
        let given_webhook = extra_args
            .windows(2)
            .find(|w| w[0] == "--webhook-listen")
            .map(|w| w[1].to_owned());
        let webhook_listen = given_webhook
            .clone()
            .unwrap_or_else(|| format!("127.0.0.1:{free_webhook}"));
        let log = plane.dir().join(format!("ledgerops-{port}.log"));
        // `LEDGEROPS_E2E_WRAPPER="heaptrack -o /tmp/ht"` runs the controller under a profiler
        // (the pid, for RSS and kills, is then the wrapper's).
        let wrapper = std::env::var("LEDGEROPS_E2E_WRAPPER").unwrap_or_default();
        let mut words = wrapper.split_whitespace();
        let mut cmd = match words.next() {
            Some(program) => {
                let mut cmd = Command::new(program);
                cmd.args(words).arg(binary());
                cmd
            }
            None => Command::new(binary()),
        };
        cmd.arg("run");
        if given.is_none() {
            cmd.args(["--listen", &listen]);
        }
        if given_webhook.is_none() {
            cmd.args(["--webhook-listen", &webhook_listen]);
        }
        let own_allowlist = extra_args.contains(&"--ynab-api-url-allow")
            || extra_env
                .iter()
                .any(|(k, _)| *k == "LEDGEROPS_YNAB_API_URL_ALLOW");
        if !own_allowlist {
            cmd.args(["--ynab-api-url-allow", TEST_API_URLS]);
        }
        // Test Git servers (Gitea, smart HTTP servers of the attack suites) listen on loopback.
        let own_git_allowlist = extra_args.contains(&"--config-repo-url-allow");
        if !own_git_allowlist {
            cmd.args(["--config-repo-url-allow", TEST_GIT_URLS]);
        }
        cmd.args(extra_args)
            .env("KUBECONFIG", plane.kubeconfig())
            .env("RUST_LOG", "info,ledgerops=debug,kube=warn")
            .envs(extra_env.iter().copied());
        let process = Guarded::spawn(cmd, &log).expect("starting ledgerops");
        let me = Self {
            process,
            probe: format!("http://127.0.0.1:{port}"),
            webhook: format!("http://{webhook_listen}/webhooks/gitea"),
            log,
        };
        me.wait_ready(ready_within).await;
        me
    }

    /// Base URL of the controller's HTTP endpoints, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> &str {
        &self.probe
    }

    /// The URL of the controller's Gitea webhook (its own port), e.g.
    /// `http://127.0.0.1:40124/webhooks/gitea`; it answers only when Gitea is configured.
    pub fn webhook_url(&self) -> &str {
        &self.webhook
    }

    /// Starts the controller against `plane` and waits until `/readyz` answers.
    pub async fn start(plane: &ControlPlane) -> Self {
        Self::start_with(plane, &[], &[]).await
    }

    /// One controller per test binary, for suites that share the control plane. Tests that kill
    /// the controller start their own plane and process instead. ConfigRepos may name `file://`
    /// repositories under [`shared_file_root`].
    pub async fn shared() -> &'static Ledgerops {
        static SHARED: tokio::sync::OnceCell<Ledgerops> = tokio::sync::OnceCell::const_new();
        SHARED
            .get_or_init(|| async {
                let plane = ControlPlane::shared();
                let root = shared_file_root();
                std::fs::create_dir_all(&root).expect("the repositories' directory");
                let root = root.display().to_string();
                Ledgerops::start_with(plane, &["--config-repo-file-root", &root], &[]).await
            })
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

    /// The controller's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Resident memory of the process, in KiB, from /proc.
    pub fn rss_kib(&self) -> Option<u64> {
        self.memory_kib("VmRSS:")
    }

    /// The most resident memory the process ever had, in KiB, from /proc.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.memory_kib("VmHWM:")
    }

    fn memory_kib(&self, field: &str) -> Option<u64> {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.process.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with(field))?;
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

    async fn wait_ready(&self, within: Duration) {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(r) = reqwest::get(format!("{}/readyz", self.probe)).await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "ledgerops did not become ready within {within:?}; its log:\n{}",
            self.log()
        );
    }
}
