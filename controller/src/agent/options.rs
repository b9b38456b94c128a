//! `ledgerops run` options for the Gitea `/agent` commands. Secrets come from files or the
//! environment and are never printed.

use std::path::PathBuf;
use std::time::Duration;

use crate::gitea::GiteaToken;
use crate::logic::job::trust::Allowlist;
use crate::logic::values::duration;

/// The flags. Without `--gitea-url` the `/agent` runtime and the webhook endpoint are off.
#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// Base URL of the Gitea that sends `/agent` comments, e.g. https://git.example.com.
    #[arg(long, env = "LEDGEROPS_GITEA_URL")]
    pub gitea_url: Option<String>,
    /// A repository whose `/agent` comments are obeyed, as owner/name; repeat for several (or a
    /// comma-separated LEDGEROPS_GITEA_REPOSITORIES). Required with --gitea-url: deliveries
    /// from any other repository are refused with 403 and never stored.
    #[arg(
        long = "gitea-repository",
        env = "LEDGEROPS_GITEA_REPOSITORIES",
        value_delimiter = ','
    )]
    pub gitea_repositories: Vec<String>,
    /// Login of the bot user ledgerops comments as; its own comments are ignored.
    #[arg(long, env = "LEDGEROPS_GITEA_BOT_LOGIN")]
    pub gitea_bot_login: Option<String>,
    /// File holding the bot's API token (or set LEDGEROPS_GITEA_TOKEN).
    #[arg(long, env = "LEDGEROPS_GITEA_TOKEN_FILE")]
    pub gitea_token_file: Option<PathBuf>,
    /// File holding the webhook secret (or set LEDGEROPS_GITEA_WEBHOOK_SECRET).
    #[arg(long, env = "LEDGEROPS_GITEA_WEBHOOK_SECRET_FILE")]
    pub gitea_webhook_secret_file: Option<PathBuf>,
    /// Namespace of the AgentJobs, and of the resources commands read and write.
    #[arg(long, env = "LEDGEROPS_AGENT_NAMESPACE", default_value = "ledgerops")]
    pub agent_namespace: String,
    /// Directory of the config repository that `suggest` and `undo` write plans into.
    #[arg(long, env = "LEDGEROPS_AGENT_PLANS_DIR", default_value = "plans")]
    pub agent_plans_dir: String,
    /// How often a finished job's status comment is checked (a deleted one is recreated).
    #[arg(long, env = "LEDGEROPS_AGENT_COMMENT_RESYNC", default_value = "5m")]
    pub agent_comment_resync: String,
    /// How long a finished AgentJob (Succeeded, Rejected, Failed) is kept before it is deleted.
    /// A redelivery of its comment stays a duplicate afterwards.
    #[arg(long, env = "LEDGEROPS_AGENT_JOB_RETENTION", default_value = "168h")]
    pub agent_job_retention: String,
}

/// The resolved options.
#[derive(Clone)]
pub struct AgentOptions {
    pub gitea_url: String,
    pub bot_login: String,
    pub repositories: Allowlist,
    pub token: GiteaToken,
    pub webhook_secret: Vec<u8>,
    pub namespace: String,
    pub plans_dir: String,
    pub comment_resync: Duration,
    pub job_retention: Duration,
}

/// Written by hand: the webhook secret is never printed.
impl std::fmt::Debug for AgentOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentOptions")
            .field("gitea_url", &self.gitea_url)
            .field("bot_login", &self.bot_login)
            .field("repositories", &self.repositories)
            .field("token", &self.token)
            .field("webhook_secret", &"<redacted>")
            .field("namespace", &self.namespace)
            .field("plans_dir", &self.plans_dir)
            .field("comment_resync", &self.comment_resync)
            .field("job_retention", &self.job_retention)
            .finish()
    }
}

/// A secret from `--<flag>` (a file) or the environment variable `env`. An empty or
/// whitespace-only secret is refused: an empty webhook secret would let anyone sign, an empty
/// token would make every call anonymous.
fn secret(file: Option<&PathBuf>, flag: &str, env: &str, what: &str) -> Result<String, String> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the {what} from --{flag} {}: {e}",
                path.display()
            )
        })?;
        return non_empty(&text).ok_or_else(|| {
            format!(
                "the {what} file {} (--{flag}) is empty: write the {what} into it",
                path.display()
            )
        });
    }
    match std::env::var(env) {
        Ok(v) => non_empty(&v)
            .ok_or_else(|| format!("{env} is empty: set it to the {what}, or give --{flag}")),
        Err(_) => Err(format!(
            "the {what} is required: give --{flag}, or set {env}"
        )),
    }
}

/// The secret without surrounding whitespace, or None when nothing is left.
fn non_empty(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

impl AgentArgs {
    /// None when Gitea is not configured.
    pub fn resolve(&self) -> Result<Option<AgentOptions>, String> {
        let Some(url) = &self.gitea_url else {
            return Ok(None);
        };
        let bot_login = self
            .gitea_bot_login
            .clone()
            .filter(|l| !l.trim().is_empty())
            .ok_or("--gitea-bot-login is required with --gitea-url")?;
        let repositories = Allowlist::new(&self.gitea_repositories)
            .map_err(|e| format!("{e} (required with --gitea-url)"))?;
        let token = secret(
            self.gitea_token_file.as_ref(),
            "gitea-token-file",
            "LEDGEROPS_GITEA_TOKEN",
            "Gitea bot token",
        )?;
        let webhook_secret = secret(
            self.gitea_webhook_secret_file.as_ref(),
            "gitea-webhook-secret-file",
            "LEDGEROPS_GITEA_WEBHOOK_SECRET",
            "Gitea webhook secret",
        )?;
        let comment_resync = duration::parse(&self.agent_comment_resync)
            .map_err(|e| format!("--agent-comment-resync: {e}"))?;
        let job_retention = duration::parse(&self.agent_job_retention)
            .map_err(|e| format!("--agent-job-retention: {e}"))?;
        Ok(Some(AgentOptions {
            gitea_url: url.clone(),
            bot_login,
            repositories,
            token: GiteaToken::new(token),
            webhook_secret: webhook_secret.into_bytes(),
            namespace: self.agent_namespace.clone(),
            plans_dir: self.agent_plans_dir.clone(),
            comment_resync,
            job_retention,
        }))
    }
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
