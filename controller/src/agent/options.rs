//! `ledgerops run` options for the Gitea `/agent` commands. Secrets come from files or the
//! environment and are never printed.

use std::path::PathBuf;
use std::time::Duration;

use crate::gitea::GiteaToken;
use crate::logic::duration;

/// The flags. Without `--gitea-url` the `/agent` runtime and the webhook endpoint are off.
#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// Base URL of the Gitea that sends `/agent` comments, e.g. https://git.example.com.
    #[arg(long, env = "LEDGEROPS_GITEA_URL")]
    pub gitea_url: Option<String>,
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
}

/// The resolved options.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub gitea_url: String,
    pub bot_login: String,
    pub token: GiteaToken,
    pub webhook_secret: Vec<u8>,
    pub namespace: String,
    pub plans_dir: String,
    pub comment_resync: Duration,
}

fn secret(file: Option<&PathBuf>, env: &str, what: &str) -> Result<String, String> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the {what} from {}: {e}", path.display()))?;
        return Ok(text.trim().to_owned());
    }
    match std::env::var(env) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
        _ => Err(format!(
            "the {what} is required: give its file, or set {env}"
        )),
    }
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
        let token = secret(
            self.gitea_token_file.as_ref(),
            "LEDGEROPS_GITEA_TOKEN",
            "Gitea bot token",
        )?;
        let webhook_secret = secret(
            self.gitea_webhook_secret_file.as_ref(),
            "LEDGEROPS_GITEA_WEBHOOK_SECRET",
            "Gitea webhook secret",
        )?;
        let comment_resync = duration::parse(&self.agent_comment_resync)
            .map_err(|e| format!("--agent-comment-resync: {e}"))?;
        Ok(Some(AgentOptions {
            gitea_url: url.clone(),
            bot_login,
            token: GiteaToken::new(token),
            webhook_secret: webhook_secret.into_bytes(),
            namespace: self.agent_namespace.clone(),
            plans_dir: self.agent_plans_dir.clone(),
            comment_resync,
        }))
    }
}
