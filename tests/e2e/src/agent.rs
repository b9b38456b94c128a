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
    let url = format!("{}/webhooks/gitea", controller.url());
    gitea_api::add_hook(repo, &url, SECRET, events).await;
}
