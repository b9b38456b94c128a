//! A Gitea repository of the harness's users and a `ledgerops run` obeying its `/agent`
//! comments, set up the same way by every suite that drives the agent through Gitea.

use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;

use crate::controller::Ledgerops;
use crate::gitea_api;

/// The webhook secret shared by Gitea's hooks and the controllers the suites start.
pub const SECRET: &str = "agent-webhook-secret";

/// Creates `household/<name>` with the bot as admin (Gitea tells only admins what another user
/// may do), the writer with write and the reader with read permission; its full name.
pub async fn team_repo(name: &str) -> String {
    let gitea = Gitea::shared();
    let members = [
        (gitea.bot(), "admin"),
        (gitea.writer(), "write"),
        (gitea.reader(), "read"),
    ];
    gitea_api::create_repo(name, &members).await
}

/// The arguments that make `ledgerops run` obey `/agent` comments of `repo`, storing jobs in
/// namespace `ns` and checking finished jobs' comments every 2s.
pub fn args<'a>(repo: &'a str, ns: &'a str) -> Vec<&'a str> {
    let gitea = Gitea::shared();
    vec![
        "--gitea-url",
        gitea.url(),
        "--gitea-bot-login",
        gitea.bot().login(),
        "--gitea-repository",
        repo,
        "--agent-namespace",
        ns,
        "--agent-comment-resync",
        "2s",
    ]
}

/// The bot's token and the webhook secret, as the controller reads them.
pub fn env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("LEDGEROPS_GITEA_TOKEN", Gitea::shared().bot().token()),
        ("LEDGEROPS_GITEA_WEBHOOK_SECRET", SECRET),
    ]
}

/// Starts `ledgerops run` with [`args`] and [`env`] plus `more_args` and `more_env`.
pub async fn start(
    plane: &ControlPlane,
    repo: &str,
    ns: &str,
    more_args: &[&str],
    more_env: &[(&str, &str)],
) -> Ledgerops {
    let mut all: Vec<&str> = args(repo, ns);
    all.extend_from_slice(more_args);
    let mut vars: Vec<(&str, &str)> = env();
    vars.extend_from_slice(more_env);
    Ledgerops::start_with(plane, &all, &vars).await
}

/// Sends `repo`'s `events` to `controller`'s webhook endpoint, signed with [`SECRET`].
pub async fn hook(repo: &str, controller: &Ledgerops, events: &[&str]) {
    let url = controller.webhook_url().to_owned();
    gitea_api::add_hook(repo, &url, SECRET, events).await;
}

/// A Gitea repository of its own ([`team_repo`]) and the `ledgerops run` obeying its `/agent`
/// comments, storing jobs in namespace `ns`. The controller listens on ports fixed for the
/// agent's life, so Gitea's webhook keeps reaching it across restarts.
pub struct Agent {
    pub ns: String,
    pub repo: String,
    port: u16,
    webhook_port: u16,
    /// More `ledgerops run` arguments, given at every start.
    args: Vec<String>,
    /// More repositories the controller obeys ([`Agent::obey_also`]).
    also: Vec<String>,
    controller: Option<Ledgerops>,
}

impl Agent {
    /// Creates the repository, starts the controller with `args` (and `LEDGEROPS_TEST_PAUSE` set
    /// to `pause`, when given), and has Gitea send it the repository's `events` (none: no hook).
    pub async fn start(ns: &str, events: &[&str], args: Vec<String>, pause: Option<&str>) -> Agent {
        let [port, webhook_port] = ledgerops_testenv::free_ports::<2>().expect("two free ports");
        let mut agent = Agent {
            ns: ns.to_owned(),
            repo: team_repo(ns).await,
            port,
            webhook_port,
            args,
            also: Vec::new(),
            controller: None,
        };
        agent.start_controller(pause).await;
        if !events.is_empty() {
            hook(&agent.repo, agent.controller(), events).await;
        }
        agent
    }

    /// The running controller; panics between [`Agent::kill`] or [`Agent::stop`] and the next
    /// start.
    pub fn controller(&self) -> &Ledgerops {
        self.controller
            .as_ref()
            .expect("the agent's controller is running")
    }

    /// Starts the controller again (killing a running one first, as a crash would), with
    /// `LEDGEROPS_TEST_PAUSE` set to `pause` when given.
    pub async fn start_controller(&mut self, pause: Option<&str>) {
        self.controller = None;
        let listen = format!("127.0.0.1:{}", self.port);
        let webhook_listen = format!("127.0.0.1:{}", self.webhook_port);
        let env: Vec<(&str, &str)> = pause
            .map(|p| ("LEDGEROPS_TEST_PAUSE", p))
            .into_iter()
            .collect();
        let mut args = vec![
            "--listen",
            listen.as_str(),
            "--webhook-listen",
            webhook_listen.as_str(),
        ];
        args.extend(self.args.iter().map(String::as_str));
        for repo in &self.also {
            args.extend(["--gitea-repository", repo.as_str()]);
        }
        let plane = ControlPlane::shared();
        self.controller = Some(start(plane, &self.repo, &self.ns, &args, &env).await);
    }

    /// Restarts the controller obeying `repo` as well.
    pub async fn obey_also(&mut self, repo: &str) {
        self.also.push(repo.to_owned());
        self.start_controller(None).await;
    }

    /// Kills the controller with SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        self.controller = None;
    }

    /// Stops the controller with SIGTERM, as Kubernetes stops a pod; returns its log.
    pub async fn stop(&mut self) -> String {
        let controller = self.controller.take().expect("a running controller");
        controller.stop().await
    }
}
