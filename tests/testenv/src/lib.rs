//! A private Kubernetes control plane for tests: a real `kube-apiserver` backed by kine (in
//! memory, or in a SQLite file for a store that can be restarted, see [`Storage`]), on free loopback ports, with token-authenticated users, and
//! `kube-controller-manager` running the garbage collector, namespace deletion and ClusterRole
//! aggregation.
//!
//! Build the binaries once with `tests/tools/build-control-plane.sh` (or point
//! `LEDGEROPS_CONTROL_PLANE_BIN` at a directory that has `kine`, `kube-apiserver`,
//! `kube-controller-manager` and `kubectl`); [`ControlPlane::start`] runs the script itself when
//! the variable is unset.
//!
//! With `LEDGEROPS_TEST_KUBECONFIG` set, [`ControlPlane::start`] starts nothing and hands out the
//! cluster of that kubeconfig's current context instead (a k3d cluster, say); see
//! [`ControlPlane::existing`].

mod binaries;
mod controllers;
pub mod flux;
pub mod gitea;
pub mod mailpit;
mod process;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{Api, PostParams};
use kube::config::{
    AuthInfo, Cluster, Context, KubeConfigOptions, Kubeconfig, NamedAuthInfo, NamedCluster,
    NamedContext,
};

pub use binaries::binary_dir;
pub use process::Guarded;

/// Names a kubeconfig whose cluster the suites use instead of starting private control planes.
pub const EXISTING_CLUSTER: &str = "LEDGEROPS_TEST_KUBECONFIG";

/// Users the API server authenticates by bearer token. `admin` is in `system:masters`; the others
/// have no permissions until a test binds a role to them.
pub const USERS: &[&str] = &["admin", "alice", "bob", "carol"];

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
    #[error(
        "{path}: {problem}; {EXISTING_CLUSTER} must name a kubeconfig whose current context has a cluster and a user allowed to impersonate (cluster-admin)"
    )]
    Existing { path: PathBuf, problem: String },
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("building Gitea failed: {0}; run tests/tools/build-gitea.sh to see why")]
    GiteaBuild(String),
    #[error("Gitea was not ready after {0:?}; the end of its log:\n{1}")]
    GiteaNotReady(Duration, String),
    #[error("Gitea API {call}: {detail}")]
    GiteaApi { call: String, detail: String },
    #[error(
        "building Mailpit failed: {0}; run tests/tools/build-mailpit.sh to see why (or set LEDGEROPS_MAILPIT_BIN to a directory with mailpit)"
    )]
    MailpitBuild(String),
    #[error("Mailpit API {call}: {detail}")]
    MailpitApi { call: String, detail: String },
    #[error(
        "Flux's notification-controller: {0}; run tests/tools/build-notification-controller.sh to see why (or set LEDGEROPS_NOTIFICATION_CONTROLLER_BIN to a directory with notification-controller and crds/)"
    )]
    FluxBuild(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

/// Where a private control plane's store, kine, keeps the cluster's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// In memory: the fastest, and what the suites use; gone when kine stops.
    Memory,
    /// In a SQLite file in the plane's directory: it outlives kine, so
    /// [`ControlPlane::restart_store`] can kill the store and start it again, as an etcd member
    /// restarts, with every object kept.
    Disk,
}

/// How the running store was started, to start it again the same way.
struct Store {
    port: u16,
    storage: Storage,
}

/// A running API server, its store and kube-controller-manager. They stop when this is dropped,
/// and also when the test process dies, however it dies.
pub struct ControlPlane {
    // Fields drop in order: kube-controller-manager, the API server, its store (in this order in
    // the Vec), then the directory they used. Each process is named as its log is. Empty for an
    // existing cluster.
    processes: Vec<(&'static str, Guarded)>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    kubectl: PathBuf,
    /// The API server and how to trust it, for more kubeconfigs.
    cluster: Cluster,
    /// The private plane's store; none for an existing cluster.
    store: Option<Store>,
}

impl ControlPlane {
    /// Starts a fresh control plane and waits until the API server reports ready and the
    /// controllers act (see [`controllers::wait_running`]); or, with [`EXISTING_CLUSTER`] set,
    /// [`ControlPlane::existing`] on that kubeconfig.
    pub async fn start() -> Result<Self> {
        let plane = match std::env::var_os(EXISTING_CLUSTER) {
            Some(path) => Self::existing(Path::new(&path)).await,
            None => Self::private(Storage::Memory).await,
        }?;
        plane.bind_admin_by_name().await?;
        Ok(plane)
    }

    /// Starts a private control plane whatever [`EXISTING_CLUSTER`] says, its store on
    /// `storage`, for a test that kills parts of it (see [`ControlPlane::restart_store`]).
    pub async fn start_private(storage: Storage) -> Result<Self> {
        // As `start` does for its own planes: a SubjectAccessReview names `admin` alone.
        let plane = Self::private(storage).await?;
        plane.bind_admin_by_name().await?;
        Ok(plane)
    }

    /// Binds `cluster-admin` to the user `admin` by name, beside its `system:masters` group: a
    /// SubjectAccessReview (which ledgerops makes before following a decision) names the user
    /// alone, as it would for any person bound to a role.
    async fn bind_admin_by_name(&self) -> Result<()> {
        let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ledgerops-test-admin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "admin"}],
        }))
        .expect("a ClusterRoleBinding");
        let api = Api::<ClusterRoleBinding>::all(self.client().await?);
        match api.create(&PostParams::default(), &binding).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The cluster of `kubeconfig`'s current context, used as it is: nothing is started, and
    /// nothing stops it. Its user must be allowed to impersonate (cluster-admin is): the test
    /// users are that user impersonating `admin` (in `system:masters`), `alice` and `bob` (in
    /// `ledgerops-test-users`), so suites see the same names on any cluster. Tests that start
    /// their own controller share this one cluster, so run them one at a time
    /// (`-- --test-threads=1`).
    pub async fn existing(kubeconfig: &Path) -> Result<Self> {
        let problem = |problem: String| Error::Existing {
            path: kubeconfig.to_owned(),
            problem,
        };
        let given = Kubeconfig::read_from(kubeconfig)?;
        let current = given
            .current_context
            .clone()
            .ok_or_else(|| problem("no current-context".into()))?;
        let context = given
            .contexts
            .iter()
            .find(|c| c.name == current)
            .and_then(|c| c.context.clone())
            .ok_or_else(|| problem(format!("no context {current}")))?;
        let cluster = given
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .and_then(|c| c.cluster.clone())
            .ok_or_else(|| problem(format!("no cluster {}", context.cluster)))?;
        let user = context.user.clone().unwrap_or_default();
        let auth = given
            .auth_infos
            .iter()
            .find(|a| a.name == user)
            .and_then(|a| a.auth_info.clone())
            .ok_or_else(|| problem(format!("no user {user}")))?;
        let dir = tempfile::Builder::new()
            .prefix("ledgerops-cluster-")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let users: Vec<NamedAuthInfo> = USERS
            .iter()
            .map(|u| NamedAuthInfo {
                name: (*u).into(),
                auth_info: Some(AuthInfo {
                    impersonate: Some((*u).into()),
                    impersonate_groups: Some(vec![group_of(u).into()]),
                    ..auth.clone()
                }),
                other: Default::default(),
            })
            .collect();
        let path = dir.path().join("kubeconfig");
        write_kubeconfig(&path, &cluster, users)?;
        let plane = Self {
            processes: Vec::new(),
            kubectl: binary_dir()?.join("kubectl"),
            kubeconfig: path,
            cluster,
            dir,
            store: None,
        };
        plane.wait_ready(Duration::from_secs(60)).await?;
        Ok(plane)
    }

    /// A fresh private control plane, whatever [`EXISTING_CLUSTER`] says, its store on `storage`.
    pub async fn private(storage: Storage) -> Result<Self> {
        let bin = binary_dir()?;
        let dir = tempfile::Builder::new()
            .prefix("ledgerops-cp-")
            .tempdir()
            .map_err(io("creating a temp dir"))?;
        let root = dir.path();

        let store = Store {
            port: free_port()?,
            storage,
        };
        let store_port = store.port;
        let kine = store.spawn(&bin, root)?;

        write_service_account_key(root)?;
        let mut tokens: String = USERS
            .iter()
            .map(|u| format!("{},{u},{u},\"{}\"\n", token_of(u), group_of(u)))
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

        // The API server writes its self-signed serving certificate (and the CA that signed it)
        // at start-up; the kubeconfigs trust exactly that file.
        let ca = cert_dir.join("apiserver.crt");
        let cluster = Cluster {
            server: Some(format!("https://127.0.0.1:{port}")),
            certificate_authority: Some(ca.display().to_string()),
            ..Default::default()
        };
        let kubeconfig = root.join("kubeconfig");
        let users = USERS.iter().map(|u| with_token(u, &token_of(u))).collect();
        write_kubeconfig(&kubeconfig, &cluster, users)?;
        let kcm_kubeconfig = root.join("kube-controller-manager.kubeconfig");
        let kcm_log = log_of(root, "kube-controller-manager");
        let kcm_users = vec![with_token("kube-controller-manager", controllers::TOKEN)];
        write_kubeconfig(&kcm_kubeconfig, &cluster, kcm_users)?;

        let mut plane = Self {
            kubectl: bin.join("kubectl"),
            kubeconfig,
            cluster,
            processes: vec![("kube-apiserver", apiserver), ("kine", kine)],
            dir,
            store: Some(store),
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
        write_kubeconfig(&path, &self.cluster, vec![with_token(name, token)])?;
        Ok(path)
    }

    /// The API server's URL.
    pub fn url(&self) -> &str {
        self.cluster.server.as_deref().unwrap_or_default()
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

    /// Whether the private plane's store has exited (killed, or ended by an error of its own:
    /// its log says which). The API server answers nothing that needs the store meanwhile.
    pub fn store_exited(&self) -> bool {
        self.processes
            .iter()
            .any(|(name, p)| *name == STORE && p.exited())
    }

    /// Kills the store (SIGKILL, unless it has already exited) and starts it again on the same
    /// port and data, then waits until the API server is ready on it. Only a plane started on
    /// [`Storage::Disk`] keeps its objects across this. Returns how long the API server took to
    /// be ready again.
    pub async fn restart_store(&mut self) -> Result<Duration> {
        let Some(store) = &self.store else {
            return Err(Error::Command(
                "restarting the store".into(),
                "an existing cluster's store is not ours to restart".into(),
            ));
        };
        let start = Instant::now();
        let slot = self
            .processes
            .iter_mut()
            .find(|(name, _)| *name == STORE)
            .expect("a private plane runs its store");
        if !slot.1.kill(Duration::from_secs(10)) {
            return Err(Error::Command(
                "restarting the store".into(),
                "kine did not exit within 10 s of SIGKILL".into(),
            ));
        }
        slot.1 = store.spawn(&binary_dir()?, self.dir.path())?;
        self.wait_ready(Duration::from_secs(120)).await?;
        Ok(start.elapsed())
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

/// The store's name among the plane's processes, and its log's.
const STORE: &str = "kine";

impl Store {
    fn spawn(&self, bin: &Path, root: &Path) -> Result<Guarded> {
        let endpoint = match self.storage {
            Storage::Memory => "memory://".to_string(),
            // kine's SQLite driver (modernc) takes pragmas this way. Without a busy timeout the
            // API server's concurrent writers get SQLITE_BUSY and it never becomes ready; WAL
            // lets it read while kine writes.
            Storage::Disk => format!(
                "sqlite://{}?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate",
                root.join("state.db").display()
            ),
        };
        let mut kine = Command::new(bin.join(STORE));
        kine.arg(format!("--listen-address=127.0.0.1:{}", self.port))
            .arg(format!("--endpoint={endpoint}"))
            .arg("--metrics-bind-address=0");
        Guarded::spawn(kine, &log_of(root, STORE))
    }
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

/// The group a test user is in: `admin` is cluster-admin, the others have nothing until a test
/// binds a role.
fn group_of(user: &str) -> &'static str {
    if user == "admin" {
        "system:masters"
    } else {
        "ledgerops-test-users"
    }
}

fn with_token(name: &str, token: &str) -> NamedAuthInfo {
    NamedAuthInfo {
        name: name.into(),
        auth_info: Some(AuthInfo {
            token: Some(token.to_owned().into()),
            ..Default::default()
        }),
        other: Default::default(),
    }
}

/// Writes a kubeconfig for `cluster` with a context per user, named after it, the first current.
fn write_kubeconfig(path: &Path, cluster: &Cluster, users: Vec<NamedAuthInfo>) -> Result<()> {
    let contexts = users
        .iter()
        .map(|u| NamedContext {
            name: u.name.clone(),
            context: Some(Context {
                cluster: "test".into(),
                user: Some(u.name.clone()),
                ..Default::default()
            }),
            other: Default::default(),
        })
        .collect();
    let config = Kubeconfig {
        current_context: users.first().map(|u| u.name.clone()),
        clusters: vec![NamedCluster {
            name: "test".into(),
            cluster: Some(cluster.clone()),
            other: Default::default(),
        }],
        auth_infos: users,
        contexts,
        api_version: Some("v1".into()),
        kind: Some("Config".into()),
        ..Default::default()
    };
    // JSON is YAML: kubectl and kube read it as any kubeconfig.
    let yaml = serde_json::to_string_pretty(&config).map_err(|e| Error::Existing {
        path: path.to_owned(),
        problem: format!("cannot write it: {e}"),
    })?;
    std::fs::write(path, yaml).map_err(io(format!("writing {}", path.display())))
}

/// `N` distinct TCP ports on 127.0.0.1 that nothing listens on right now: all are held at once,
/// so none is handed out twice.
pub fn free_ports<const N: usize>() -> Result<[u16; N]> {
    let listeners = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(io("finding a free port"))?;
    let mut ports = [0; N];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener
            .local_addr()
            .map_err(io("finding a free port"))?
            .port();
    }
    Ok(ports)
}

/// Waits up to five seconds for nothing to listen on `port` of 127.0.0.1 any more; whether that
/// happened. A killed process's sockets close a moment after SIGKILL is delivered.
pub async fn port_closes(port: u16) -> bool {
    for _ in 0..50 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
