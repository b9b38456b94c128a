//! The `ledgerops` command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ledgerops",
    version,
    about = "Keeps a YNAB budget in the state a Git config repo and kubectl declare"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
// Parsed once at start; the size of `Run`'s flags does not matter.
#[allow(clippy::large_enum_variant)]
enum Cmd {
    /// Run the controllers against the cluster in KUBECONFIG (or the one it runs in).
    Run {
        /// Address for /healthz, /readyz and /metrics.
        #[arg(long, env = "LEDGEROPS_LISTEN", default_value = "0.0.0.0:8080")]
        listen: SocketAddr,
        /// Log as JSON lines instead of text.
        #[arg(long, env = "LEDGEROPS_LOG_JSON")]
        log_json: bool,
        /// An API base URL a YNAB token may be sent to (repeatable, or comma-separated in the
        /// variable): `scheme://host[:port]/path`, canonical, no user info; `*` as the port
        /// allows any port (`http://127.0.0.1:*/v1` for a local simulator). Given, it replaces
        /// the default.
        #[arg(
            long = "ynab-api-url-allow",
            env = "LEDGEROPS_YNAB_API_URL_ALLOW",
            value_delimiter = ',',
            default_value = ledgerops::logic::api_url::YNAB_API
        )]
        ynab_api_url_allow: Vec<String>,
        /// How long a settled ApprovalRequest (Stale, Expired, Rejected, Applied, Ignored) that a
        /// newer request of the same subject replaced is kept before it is deleted. The decision
        /// stays in the subject's status and the journal.
        #[arg(
            long,
            env = "LEDGEROPS_APPROVAL_REQUEST_RETENTION",
            default_value = "24h"
        )]
        approval_request_retention: String,
        /// A namespace whose token Secrets may be read (repeatable, or comma-separated in the
        /// variable). Given, Secrets are watched and read only there, so RBAC can grant them
        /// per namespace; a Budget elsewhere reports TokenNamespaceNotAllowed. Default: all.
        #[arg(
            long = "token-namespace",
            env = "LEDGEROPS_TOKEN_NAMESPACES",
            value_delimiter = ','
        )]
        token_namespaces: Vec<String>,
        #[command(flatten)]
        agent: ledgerops::agent::options::AgentArgs,
    },
    /// Print the CustomResourceDefinitions as YAML, or write one file per CRD with --out.
    Crdgen {
        /// Directory to write `<group>_<plural>.yaml` files into.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run {
            listen,
            log_json,
            ynab_api_url_allow,
            approval_request_retention,
            token_namespaces,
            agent,
        } => {
            init_logs(log_json);
            let api_urls =
                match ledgerops::logic::api_url::ApiUrlAllowlist::parse(&ynab_api_url_allow) {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::error!("{e}");
                        return ExitCode::FAILURE;
                    }
                };
            let approval_retention =
                match ledgerops::logic::duration::parse(&approval_request_retention) {
                    Ok(d) => d,
                    Err(e) => {
                        tracing::error!("--approval-request-retention: {e}");
                        return ExitCode::FAILURE;
                    }
                };
            let agent = match agent.resolve() {
                Ok(a) => a,
                Err(e) => {
                    tracing::error!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
            match runtime.block_on(ledgerops::run::run(
                listen,
                api_urls,
                agent,
                approval_retention,
                token_namespaces,
            )) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Cmd::Crdgen { out: Some(dir) } => match ledgerops::crdgen::write_all(&dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!(
                    "ledgerops: cannot write the CRDs into {}: {e}",
                    dir.display()
                );
                ExitCode::FAILURE
            }
        },
        Cmd::Crdgen { out: None } => {
            let docs: Vec<String> = ledgerops::crdgen::render()
                .into_iter()
                .map(|(_, yaml)| yaml)
                .collect();
            print!("{}", docs.join("---\n"));
            ExitCode::SUCCESS
        }
    }
}

/// Logs go to stderr; `RUST_LOG` filters them (default `info`).
fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,kube=warn".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.compact().init();
    }
}
