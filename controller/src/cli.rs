//! The `ledgerops` command line: parsed here, run by [`crate::run`]. A library module so that the
//! test suites' multi-call binary can embed the controller.

use std::ffi::OsString;
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
        /// Address for the Gitea webhook (`POST /webhooks/gitea`), apart from the metrics so
        /// that exposing one does not expose the other. Served only when Gitea is configured.
        #[arg(long, env = "LEDGEROPS_WEBHOOK_LISTEN", default_value = "0.0.0.0:8081")]
        webhook_listen: SocketAddr,
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
            default_value = crate::logic::budget::api_url::YNAB_API
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
        /// Reconcile the objects of this namespace only (default: every namespace), reading
        /// token Secrets there too unless --token-namespace says otherwise. Two controllers
        /// must not manage one namespace unless they elect a leader.
        #[arg(long, env = "LEDGEROPS_WATCH_NAMESPACE")]
        watch_namespace: Option<String>,
        /// A notification hub's event endpoint (Flux's notification-controller:
        /// `http://notification-controller.flux-system.svc.cluster.local./`): every Event is
        /// also posted there, `error` when it needs a person, else `info`. Default: none.
        #[arg(long, env = "LEDGEROPS_EVENTS_ADDRESS")]
        events_address: Option<String>,
        #[command(flatten)]
        agent: crate::agent::options::AgentArgs,
        #[command(flatten)]
        election: ElectionArgs,
        #[command(flatten)]
        config_repos: crate::git::options::ConfigRepoArgs,
    },
    /// Print the CustomResourceDefinitions as YAML, or write one file per CRD with --out.
    Crdgen {
        /// Directory to write `<group>_<plural>.yaml` files into.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Leader election: with several replicas, only the one holding the Lease syncs, writes and runs
/// jobs; every replica serves the webhook.
#[derive(clap::Args)]
struct ElectionArgs {
    /// Elect a leader through a coordination.k8s.io Lease (needed with more than one replica).
    #[arg(long, env = "LEDGEROPS_LEADER_ELECT")]
    leader_elect: bool,
    /// The Lease's name.
    #[arg(
        long,
        env = "LEDGEROPS_LEADER_ELECT_LEASE",
        default_value = "ledgerops-leader"
    )]
    leader_elect_lease: String,
    /// The Lease's namespace. Default: the namespace of the Kubernetes configuration (in a Pod,
    /// its own).
    #[arg(long, env = "LEDGEROPS_LEADER_ELECT_NAMESPACE")]
    leader_elect_namespace: Option<String>,
    /// Who this replica is in the Lease; unique per replica (in a Pod: its name, which a
    /// restarted container keeps, so it takes its lease back at once). Default: host name and
    /// process id.
    #[arg(long, env = "POD_NAME")]
    leader_elect_identity: Option<String>,
    /// How long a holder's term lasts after its last renewal; a standby takes over after it.
    #[arg(
        long,
        env = "LEDGEROPS_LEADER_ELECT_LEASE_DURATION",
        default_value = "15s"
    )]
    leader_elect_lease_duration: String,
    /// A holder that could not renew for this long stops acting (shorter than the duration).
    #[arg(
        long,
        env = "LEDGEROPS_LEADER_ELECT_RENEW_DEADLINE",
        default_value = "10s"
    )]
    leader_elect_renew_deadline: String,
    /// How often the holder renews and a standby looks.
    #[arg(
        long,
        env = "LEDGEROPS_LEADER_ELECT_RETRY_PERIOD",
        default_value = "2s"
    )]
    leader_elect_retry_period: String,
}

impl ElectionArgs {
    fn resolve(self) -> Result<Option<crate::k8s::lease::Election>, String> {
        if !self.leader_elect {
            return Ok(None);
        }
        let parse = |flag: &str, value: &str| {
            crate::logic::values::duration::parse(value).map_err(|e| format!("--{flag}: {e}"))
        };
        let timing = crate::logic::runtime::lease::Timing::new(
            parse(
                "leader-elect-lease-duration",
                &self.leader_elect_lease_duration,
            )?,
            parse(
                "leader-elect-renew-deadline",
                &self.leader_elect_renew_deadline,
            )?,
            parse("leader-elect-retry-period", &self.leader_elect_retry_period)?,
        )
        .map_err(|e| e.to_string())?;
        let identity = self.leader_elect_identity.unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .or_else(|| std::env::var("HOSTNAME").ok())
                .unwrap_or_else(|| "ledgerops".into());
            format!("{}-{}", host.trim(), std::process::id())
        });
        Ok(Some(crate::k8s::lease::Election {
            namespace: self.leader_elect_namespace,
            name: self.leader_elect_lease,
            identity,
            timing,
        }))
    }
}

/// Runs `ledgerops` with `args` (the first is the program's name, as in `std::env::args_os`)
/// and returns its exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    match Cli::parse_from(args).command {
        Cmd::Run {
            listen,
            webhook_listen,
            log_json,
            ynab_api_url_allow,
            approval_request_retention,
            mut token_namespaces,
            watch_namespace,
            events_address,
            agent,
            election,
            config_repos,
        } => {
            init_logs(log_json);
            let api_urls =
                match crate::logic::budget::api_url::ApiUrlAllowlist::parse(&ynab_api_url_allow) {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::error!("{e}");
                        return ExitCode::FAILURE;
                    }
                };
            let approval_retention =
                match crate::logic::values::duration::parse(&approval_request_retention) {
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
            let election = match election.resolve() {
                Ok(e) => e,
                Err(e) => {
                    tracing::error!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            let git_urls = match config_repos.url_policy() {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            if let (true, Some(ns)) = (token_namespaces.is_empty(), &watch_namespace) {
                token_namespaces.push(ns.clone());
            }
            crate::git::set_timeouts();
            let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
            match runtime.block_on(crate::run::run(crate::run::Options {
                listen,
                webhook_listen,
                api_urls,
                agent,
                approval_retention,
                token_namespaces,
                watch_namespace,
                events_address,
                election,
                config_repos,
                git_urls,
            })) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Cmd::Crdgen { out: Some(dir) } => match crate::crdgen::write_all(&dir) {
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
            let docs: Vec<String> = crate::crdgen::render()
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
