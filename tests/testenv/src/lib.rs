//! A private Kubernetes control plane for tests: a real `kube-apiserver` backed by kine's
//! in-memory store, on free loopback ports, with token-authenticated users, and
//! `kube-controller-manager` running the garbage collector, namespace deletion and ClusterRole
//! aggregation.
//!
//! Build the binaries once with `tests/tools/build-control-plane.sh` (or point
//! `LEDGEROPS_CONTROL_PLANE_BIN` at a directory that has `kine`, `kube-apiserver`,
//! `kube-controller-manager` and `kubectl`); [`ControlPlane::start`] runs the script itself when
//! the variable is unset.

mod binaries;
mod controllers;
pub mod gitea;
mod process;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

pub use binaries::binary_dir;
pub use process::Guarded;

/// Users the API server authenticates by bearer token. `admin` is in `system:masters`; the others
/// have no permissions until a test binds a role to them.
pub const USERS: &[&str] = &["admin", "alice", "bob"];

/// Everything that can go wrong while starting or using the control plane.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "control-plane binaries: {0}; run tests/tools/build-control-plane.sh to build them (or set LEDGEROPS_CONTROL_PLANE_BIN to a directory with kine, kube-apiserver, kube-controller-manager and kubectl)"
    )]
    Build(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("`{0}` failed: {1}")]
    Command(String, String),
    #[error("{0} was not ready after {1:?}; the end of its log:\n{2}")]
    NotReady(&'static str, Duration, String),
    #[error("{0} exited while starting; the end of its log:\n{1}")]
    Exited(&'static str, String),
    #[error("unknown test user {0}: use one of {USERS:?}")]
    UnknownUser(String),
    #[error("kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("building Gitea failed: {0}; run tests/tools/build-gitea.sh to see why")]
    GiteaBuild(String),
    #[error("Gitea was not ready after {0:?}; the end of its log:\n{1}")]
    GiteaNotReady(Duration, String),
    #[error("Gitea API {call}: {detail}")]
    GiteaApi { call: String, detail: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

/// A running API server, its store and kube-controller-manager. They stop when this is dropped,
/// and also when the test process dies, however it dies.
pub struct ControlPlane {
    // Fields drop in order: kube-controller-manager, the API server, its store (in this order in
    // the Vec), then the directory they used. Each process is named as its log is.
    processes: Vec<(&'static str, Guarded)>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    kubectl: PathBuf,
    url: String,
}

impl ControlPlane {
    /// Starts a fresh control plane and waits until the API server reports ready and the
    /// controllers act (see [`controllers::wait_running`]).
    pub async fn start() -> Result<Self> {
        let bin = binary_dir()?;
        let dir = tempfile::Builder::new()
            .prefix("ledgerops-cp-")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let root = dir.path();

        let store_port = free_port()?;
        let mut kine = Command::new(bin.join("kine"));
        kine.arg(format!("--listen-address=127.0.0.1:{store_port}"))
            .args(["--endpoint=memory://", "--metrics-bind-address=0"]);
        let kine = Guarded::spawn(kine, &log_of(root, "kine"))?;

        write_service_account_key(root)?;
        let mut tokens: String = USERS
            .iter()
            .map(|u| {
                let groups = if *u == "admin" {
                    "system:masters"
                } else {
                    "ledgerops-test-users"
                };
                format!("{},{u},{u},\"{groups}\"\n", token_of(u))
            })
            .collect();
        let kcm_user = controllers::USER;
        tokens.push_str(&format!("{},{kcm_user},{kcm_user}\n", controllers::TOKEN));
        std::fs::write(root.join("tokens.csv"), tokens).map_err(io("writing tokens.csv"))?;

        let port = free_port()?;
        let cert_dir = root.join("certs");
        let sa_key = root.join("sa.key");
        let api_log = log_of(root, "kube-apiserver");
        let mut apiserver = Command::new(bin.join("kube-apiserver"));
        apiserver.args([
            format!("--etcd-servers=http://127.0.0.1:{store_port}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--secure-port={port}"),
            format!("--cert-dir={}", cert_dir.display()),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            format!("--service-account-issuer=https://127.0.0.1:{port}/"),
            format!("--service-account-key-file={}", sa_key.display()),
            format!("--service-account-signing-key-file={}", sa_key.display()),
            format!("--token-auth-file={}", root.join("tokens.csv").display()),
            "--authorization-mode=RBAC".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--allow-privileged=true".into(),
            "--profiling=false".into(),
        ]);
        let apiserver = Guarded::spawn(apiserver, &api_log)?;

        let url = format!("https://127.0.0.1:{port}");
        let kubeconfig = root.join("kubeconfig");
        // The API server writes its self-signed serving certificate (and the CA that signed it)
        // at start-up; the kubeconfigs trust exactly that file.
        let ca = cert_dir.join("apiserver.crt");
        let users: Vec<(&str, String)> = USERS.iter().map(|u| (*u, token_of(u))).collect();
        std::fs::write(&kubeconfig, kubeconfig_yaml(&url, &ca, &users))
            .map_err(io("writing the kubeconfig"))?;
        let kcm_kubeconfig = root.join("kube-controller-manager.kubeconfig");
        let kcm_log = log_of(root, "kube-controller-manager");
        let kcm_users = [("kube-controller-manager", controllers::TOKEN.to_string())];
        std::fs::write(&kcm_kubeconfig, kubeconfig_yaml(&url, &ca, &kcm_users))
            .map_err(io("writing the kube-controller-manager kubeconfig"))?;

        let mut plane = Self {
            kubectl: bin.join("kubectl"),
            kubeconfig,
            url,
            processes: vec![("kube-apiserver", apiserver), ("kine", kine)],
            dir,
        };
        plane.wait_ready(Duration::from_secs(60)).await?;

        // Started once the API server is ready: it gives up if the API server is not healthy
        // within 10 s, and it needs the CA file the API server writes.
        let files = controllers::Files {
            kubeconfig: &kcm_kubeconfig,
            service_account_key: &sa_key,
            root_ca: &ca,
            log: &kcm_log,
        };
        let kcm = controllers::spawn(&bin, &files)?;
        plane.processes.insert(0, ("kube-controller-manager", kcm));
        let admin = plane.client().await?;
        controllers::wait_running(
            &admin,
            &plane.processes[0].1,
            Duration::from_secs(60),
            &kcm_log,
        )
        .await?;
        Ok(plane)
    }

    /// One control plane per test binary, started on first use. Tests share it and isolate
    /// themselves with their own namespaces ([`ControlPlane::namespace`]).
    pub fn shared() -> &'static ControlPlane {
        static SHARED: OnceLock<ControlPlane> = OnceLock::new();
        SHARED.get_or_init(|| {
            // Start on a runtime of its own: each #[tokio::test] has a runtime that ends with it.
            std::thread::spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(ControlPlane::start())
            })
            .join()
            .expect("control-plane start thread panicked")
            .inspect(|plane| process::remove_at_exit(plane.dir().to_owned()))
            .unwrap_or_else(|e| panic!("starting the test control plane: {e}"))
        })
    }

    /// A client authenticated as `admin` (cluster-admin).
    pub async fn client(&self) -> Result<kube::Client> {
        self.client_as("admin").await
    }

    /// A client authenticated as one of [`USERS`].
    pub async fn client_as(&self, user: &str) -> Result<kube::Client> {
        if !USERS.contains(&user) {
            return Err(Error::UnknownUser(user.into()));
        }
        let kubeconfig = Kubeconfig::read_from(&self.kubeconfig)?;
        let options = KubeConfigOptions {
            context: Some(user.into()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options).await?;
        Ok(kube::Client::try_from(config)?)
    }

    /// The kubeconfig file; its contexts are named after [`USERS`], `admin` being current.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// Writes a kubeconfig for this API server that authenticates with `token` (for example a
    /// ServiceAccount's, from the TokenRequest API) into the plane's directory, and returns its
    /// path. `name` names the file, context and user.
    pub fn kubeconfig_with_token(&self, name: &str, token: &str) -> Result<PathBuf> {
        let path = self.dir().join(format!("{name}.kubeconfig"));
        let ca = self.dir().join("certs").join("apiserver.crt");
        std::fs::write(
            &path,
            kubeconfig_yaml(&self.url, &ca, &[(name, token.to_owned())]),
        )
        .map_err(io(format!("writing {}", path.display())))?;
        Ok(path)
    }

    /// The API server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A `kubectl` command bound to this control plane as `admin`.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(&self.kubectl);
        cmd.arg("--kubeconfig").arg(&self.kubeconfig);
        cmd
    }

    /// Runs kubectl with `args`, returning stdout, or its stderr as the error.
    pub fn kubectl_ok(&self, args: &[&str]) -> Result<String> {
        let out = self
            .kubectl()
            .args(args)
            .output()
            .map_err(io("running kubectl"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(Error::Command(
                format!("kubectl {}", args.join(" ")),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ))
        }
    }

    /// Creates a namespace with a unique name starting with `prefix`, and returns its name.
    pub async fn namespace(&self, prefix: &str) -> Result<String> {
        let client = self.client().await?;
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": { "generateName": format!("{prefix}-") }
        }))
        .expect("static namespace object");
        let created = Api::<Namespace>::all(client)
            .create(&PostParams::default(), &ns)
            .await?;
        Ok(created
            .metadata
            .name
            .expect("the API server names generated objects"))
    }

    /// The directory that holds the logs, certificates and kubeconfig.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The process ids of kube-controller-manager, the API server and kine, for checking or
    /// measuring them.
    pub fn pids(&self) -> Vec<u32> {
        self.processes.iter().map(|(_, p)| p.pid()).collect()
    }

    async fn wait_ready(&self, limit: Duration) -> Result<()> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some((name, _)) = self.processes.iter().find(|(_, p)| p.exited()) {
                let log = process::log_tail(&log_of(self.dir(), name));
                return Err(Error::Exited(name, log));
            }
            // The CA file appears only once the API server has generated it.
            if let Ok(client) = self.client().await {
                let req = http::Request::get("/readyz")
                    .body(Vec::new())
                    .expect("static request");
                if matches!(client.request_text(req).await.as_deref(), Ok("ok")) {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let log = process::log_tail(&log_of(self.dir(), "kube-apiserver"));
        Err(Error::NotReady("kube-apiserver", limit, log))
    }
}

/// The bearer token of a test user.
pub fn token_of(user: &str) -> String {
    format!("{user}-token")
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io("finding a free port"))?;
    Ok(listener
        .local_addr()
        .map_err(io("finding a free port"))?
        .port())
}

fn log_of(dir: &Path, process: &str) -> PathBuf {
    dir.join(format!("{process}.log"))
}

fn write_service_account_key(root: &Path) -> Result<()> {
    let key = root.join("sa.key");
    let out = Command::new("openssl")
        .args([
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
        ])
        .arg(&key)
        .output()
        .map_err(io("running openssl (install the openssl package)"))?;
    if !out.status.success() {
        return Err(Error::Command(
            "openssl ecparam".into(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(())
}

/// A kubeconfig with one context per `(name, token)`, the first one current.
fn kubeconfig_yaml(url: &str, ca: &Path, users: &[(&str, String)]) -> String {
    let current = users.first().map_or("", |(name, _)| *name);
    let mut yaml = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: {current}\nclusters:\n- name: test\n  cluster:\n    server: {url}\n    certificate-authority: {}\ncontexts:\n",
        ca.display()
    );
    for (u, _) in users {
        yaml.push_str(&format!(
            "- name: {u}\n  context:\n    cluster: test\n    user: {u}\n"
        ));
    }
    yaml.push_str("users:\n");
    for (u, token) in users {
        yaml.push_str(&format!("- name: {u}\n  user:\n    token: {token}\n"));
    }
    yaml
}
