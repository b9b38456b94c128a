//! The command line, following kubectl's conventions for the flags every plugin is expected to
//! take.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The approval queue of ledgerops and what a person does with it.
#[derive(Parser, Debug)]
#[command(name = "kubectl-ledgerops", bin_name = "kubectl ledgerops", version)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's flags, accepted before or after the command.
#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace (default: the context's).
    #[arg(short = 'n', long, global = true, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Every namespace (queue and status).
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// Act as another user (impersonation, which RBAC must allow you).
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,
    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, default_value_t = Format::Table)]
    pub output: Format,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
    Yaml,
    /// `<resource>.ledgerops.dev/<name>` lines, as `kubectl get -o name` prints.
    Name,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The ApprovalRequests waiting for a person, oldest first.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops queue -A\n  kubectl ledgerops queue --watch     # print again whenever the queue changes; Ctrl-C ends"
    )]
    Queue {
        /// After the queue, watch it and print it again each time it changes (a request comes,
        /// is decided or expires elsewhere).
        #[arg(short = 'w', long)]
        watch: bool,
    },
    /// Propose what the files declare (Transactions, plans, rules, Budgets, ConfigRepos), in your
    /// own name: each gets `ledgerops.dev/proposed-by: <you>`, which admission requires.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops apply -f september-plan.yaml -n home\n  kubectl ledgerops apply -f rules.yaml -f budget.yaml"
    )]
    Apply {
        /// A YAML file of one or more documents (repeatable).
        #[arg(short = 'f', long = "filename", required = true, value_name = "FILE")]
        files: Vec<String>,
    },
    /// The preview of an ApprovalRequest or a CategorizationPlan.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops show september-7f3a2c\n  kubectl ledgerops show september -o json"
    )]
    Show { name: String },
    /// Approve a request in your own name, after showing its preview.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops approve september-7f3a2c -m \"looks right\"\n  kubectl ledgerops approve september-7f3a2c --drop tx-145 --set tx-146=Groceries --yes"
    )]
    Approve {
        request: String,
        /// A comment kept with the decision.
        #[arg(short = 'm', long)]
        message: Option<String>,
        /// Do not ask for confirmation.
        #[arg(short = 'y', long)]
        yes: bool,
        /// How long to wait for the outcome (`0s`: do not wait).
        #[arg(long, default_value = "60s", value_name = "DURATION")]
        wait: String,
        /// Leave this transaction (YNAB id) out of the plan you approve (repeatable).
        #[arg(long = "drop", value_name = "TRANSACTION")]
        drop: Vec<String>,
        /// Put this transaction in another category than the proposed one: TRANSACTION=CATEGORY,
        /// by name, Group/Name or id (repeatable).
        #[arg(long = "set", value_name = "TRANSACTION=CATEGORY")]
        set: Vec<String>,
    },
    /// Reject a request in your own name, saying why.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops reject september-7f3a2c -m \"the bakery is not groceries\""
    )]
    Reject {
        request: String,
        /// Why (required).
        #[arg(short = 'm', long)]
        message: String,
    },
    /// What applying a plan would change now, without asking anybody. Exits 0 when nothing
    /// would change, 1 when something would (as `kubectl diff`), 2 or more on an error.
    #[command(after_help = "Examples:\n  kubectl ledgerops diff september")]
    Diff { plan: String },
    /// Create the plan that reverts an applied plan, and show its preview and conflicts.
    #[command(after_help = "Examples:\n  kubectl ledgerops undo september")]
    Undo {
        plan: String,
        /// How long to wait for the preview.
        #[arg(long, default_value = "60s", value_name = "DURATION")]
        wait: String,
    },
    /// Settle a Diverged Transaction: `ours` asks to write the spec over YNAB (a person approves
    /// it), `theirs` keeps YNAB's.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops resolve bakery theirs\n  kubectl ledgerops resolve bakery ours --wait 2m"
    )]
    Resolve {
        transaction: String,
        side: Side,
        /// How long to wait until ledgerops has handled it.
        #[arg(long, default_value = "60s", value_name = "DURATION")]
        wait: String,
    },
    /// Ask a Budget to sync now, and wait for it.
    #[command(after_help = "Examples:\n  kubectl ledgerops sync household -n home")]
    Sync {
        budget: String,
        /// How long to wait for the sync.
        #[arg(long, default_value = "60s", value_name = "DURATION")]
        wait: String,
    },
    /// Budgets, request budget use, Transactions that need a person, waiting requests.
    #[command(after_help = "Examples:\n  kubectl ledgerops status -A")]
    Status,
    /// The versions of this plugin and of the controller (as the Budgets' status names it),
    /// and whether the CRDs and admission policies are this version's.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops version\n  kubectl ledgerops version --client"
    )]
    Version {
        /// Only this plugin's version, without reading the cluster.
        #[arg(long)]
        client: bool,
    },
    /// Stop ledgerops acting on a Budget (no sync, no write) or a ConfigRepo (no fetch, no
    /// apply) until `resume`. Governed: a Budget needs the ledgerops-owner role here, and so
    /// does a ConfigRepo with authority Govern; you are added to its lineage.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops suspend budget household -n home\n  kubectl ledgerops suspend configrepo household-config"
    )]
    Suspend { kind: Suspendable, name: String },
    /// Let ledgerops act on a suspended Budget or ConfigRepo again (governed as `suspend`).
    #[command(after_help = "Examples:\n  kubectl ledgerops resume budget household -n home")]
    Resume { kind: Suspendable, name: String },
    /// Whether ledgerops can work here: its CRDs and admission policies installed as this
    /// version ships them, the controller running (its leader Lease, or the Budgets here
    /// syncing), and what you may do in this namespace. Exits 0 when all is well, else the sum
    /// of 8 (CRDs), 16 (policies) and 32 (controller) for what failed.
    #[command(
        after_help = "Examples:\n  kubectl ledgerops check\n  kubectl ledgerops check -n household -o json"
    )]
    Check,
    /// Print a shell completion script for `kubectl-ledgerops` (`source <(kubectl-ledgerops
    /// completion bash)`); `kubectl ledgerops` completes through `kubectl_complete-ledgerops`.
    #[command(after_help = "Examples:\n  source <(kubectl-ledgerops completion bash)")]
    Completion { shell: clap_complete::Shell },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspendable {
    Budget,
    #[value(name = "configrepo")]
    ConfigRepo,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Ours,
    Theirs,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Theirs => "theirs",
        }
    }
}
