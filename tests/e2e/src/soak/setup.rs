//! The soak's world: its own control plane (the soak kills the controller and the store), a
//! simulator with `transactions` uncategorised purchases of varied amounts, a Budget whose policy
//! runs small changes and asks a person for the rest (four eyes on), the people who act, a Gitea
//! repository whose `/agent` comments the controller obeys, and two replicas of `ledgerops run`
//! electing a leader, each restartable.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Secret;
use kube::api::PostParams;
use kube::{Api, Client};
use ledgerops::api::budget::BudgetPhase;
use ledgerops_testenv::gitea::Gitea;
use ledgerops_testenv::{ControlPlane, Storage, free_ports};
use serde_json::json;
use ynab_sim::{DropFault, RequestMatch, demo};

use crate::attacker::{approver, editor, owner};
use crate::controller::Ledgerops;
use crate::scenario::{Scenario, demo_with_uncategorised, load_id};
use crate::{agent, config_repo, gitea_api};

use super::rng::Rng;

/// The Budget's name.
pub const BUDGET: &str = "household";
/// The proposer and the approver (test users of the control plane): an editor, and a person
/// holding `approve`.
pub const PROPOSER: &str = "alice";
pub const APPROVER: &str = "bob";
/// The owner who made the ConfigRepo (governing is its own power): what the repository
/// declares is proposed in their name.
pub const GOVERNOR: &str = "carol";
/// The ConfigRepo's directory in the Gitea repository.
pub const REPO_PATH: &str = "soak";
/// What the policy runs without a person: below 50.00, at most 5 changes.
pub const AUTO_BELOW: &str = "50";
pub const AUTO_BELOW_MILLIUNITS: i64 = 50_000;
pub const AUTO_MAX_CHANGES: usize = 5;
/// The controller's own request budget (YNAB's: 200 an hour).
pub const REQUESTS_PER_HOUR: u64 = 200;
/// How long a restarted controller may take to be ready: its readiness is one LIST on the API
/// server, which a machine busy with other work (a build beside the soak) can hold up for a
/// minute; the soak waits rather than stop.
const READY_WITHIN: Duration = Duration::from_secs(300);
/// The categories the actors move purchases between.
pub const CATEGORIES: [&str; 5] = [
    "Groceries",
    "Transport",
    "Restaurants",
    "Household",
    "Pharmacy",
];

pub struct World {
    pub plane: ControlPlane,
    pub s: Scenario,
    pub proposer: Client,
    pub approver: Client,
    pub transactions: usize,
    /// The Gitea repository whose `/agent` comments the controller obeys, and the issue the
    /// people comment on.
    pub repo: String,
    pub issue: i64,
    /// The replicas, by index; `None` while killed. Each keeps its ports (probes and metrics,
    /// webhook) across restarts, so Gitea's webhook to it reaches the new process.
    controllers: Vec<Option<Ledgerops>>,
    ports: Vec<[u16; 2]>,
    env: Vec<(String, String)>,
}

/// How often the controller looks at a finished job's status comment (its default).
const COMMENT_RESYNC: &str = "5m";

/// Replicas of the controller, electing a leader as the chart's two-replica install does.
pub const REPLICAS: usize = 2;
/// The leader election's Lease, in the soak's namespace.
const LEASE: &str = "ledgerops-leader";

fn identity(replica: usize) -> String {
    format!("replica-{replica}")
}

impl World {
    pub async fn start(transactions: usize, rng: &mut Rng, planted_bug: bool) -> World {
        // Private, and on disk: the soak kills the store and starts it again.
        let plane = ControlPlane::start_private(Storage::Disk)
            .await
            .expect("control plane");
        let mut fixture = demo_with_uncategorised(transactions);
        // Amounts on both sides of the policy's bound, so some writes run and some ask.
        for t in fixture.plans[0]
            .transactions
            .iter_mut()
            .filter(|t| t.summary.id.starts_with("load-"))
        {
            let amount = -i64::try_from(rng.below(1_000, 120_000)).unwrap_or(1_000);
            t.summary.amount = amount;
        }
        let s = Scenario::new(&plane, "soak", fixture).await;
        // The simulator's own limit stays out of the way: the controller's budget is what the
        // checker holds it to.
        s.sim.control().set_rate_limit(100_000).await.unwrap();
        let proposer = editor(&plane, &s.ns, PROPOSER).await;
        let approver = approver(&plane, &s.ns, APPROVER).await;
        let env = if planted_bug {
            vec![(
                ledgerops::ynab::planted::ENV.to_string(),
                "resend-after-drop".to_string(),
            )]
        } else {
            Vec::new()
        };
        let repo = agent::team_repo(&s.ns).await;
        let issue = gitea_api::open_issue(&repo, "soak: decisions").await;
        let mut world = World {
            plane,
            s,
            proposer,
            approver,
            transactions,
            repo,
            issue,
            controllers: (0..REPLICAS).map(|_| None).collect(),
            ports: free_ports::<{ 2 * REPLICAS }>()
                .expect("free ports")
                .chunks(2)
                .map(|p| [p[0], p[1]])
                .collect(),
            env,
        };
        for replica in 0..REPLICAS {
            world.restart(replica).await;
            // Every replica stores the deliveries it receives; the leader runs the jobs.
            let controller = world.controllers[replica].as_ref().expect("just started");
            agent::hook(&world.repo, controller, &["issue_comment", "push"]).await;
        }
        world
            .s
            .create_budget(
                BUDGET,
                demo::TOKEN,
                json!({
                    "writes": {"enabled": true, "batchWindow": "500ms", "maxBatchSize": 100},
                    "approval": {"autoApproveBelow": AUTO_BELOW, "autoApproveMaxChanges": AUTO_MAX_CHANGES,
                                 "askOnNewPayee": false, "fourEyes": true, "expiry": "2m",
                                 // The repository's writer decides in Gitea as the approver.
                                 "giteaUsers": [{"login": Gitea::shared().writer().login(), "user": APPROVER}]},
                    "requestsPerHour": REQUESTS_PER_HOUR,
                    "syncInterval": "1m",
                }),
            )
            .await;
        world.s.wait_budget(BUDGET, BudgetPhase::Ready).await;
        world.follow_repo().await;
        if planted_bug {
            // The given fault: every bulk update lands and its connection drops.
            let drops = DropFault {
                count: 1_000,
                hold_ms: 0,
                only: RequestMatch {
                    method: Some("PATCH".into()),
                    ..Default::default()
                },
            };
            world
                .s
                .sim
                .control()
                .drop_after_write(&drops)
                .await
                .unwrap();
        }
        world
    }

    /// A Secret with a Gitea token (made by admin, as a cluster's operator would) and the
    /// ConfigRepo following the soak's repository, made by the governor; pushes reach it
    /// through the webhook, and its interval catches what a paused Gitea kept back.
    async fn follow_repo(&self) {
        let gitea = Gitea::shared();
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": "gitea", "labels": {"ledgerops.dev/git-credentials": "true"},
                         "annotations": {"ledgerops.dev/git-url-prefixes": format!("{}/", gitea.url())}},
            "stringData": {"username": gitea.admin().login(), "token": gitea.admin().token()},
        }))
        .expect("a Secret");
        self.s
            .api::<Secret>()
            .create(&PostParams::default(), &secret)
            .await
            .expect("the Gitea Secret");
        let governor = owner(&self.plane, &self.s.ns, GOVERNOR).await;
        let spec = json!({"url": format!("{}/{}.git", gitea.url(), self.repo), "path": REPO_PATH,
                          "interval": "30s", "secretRef": {"name": "gitea"}});
        config_repo::create(&governor, &self.s.ns, "household", spec).await;
    }

    /// The id of the soak's `i`th purchase.
    pub fn purchase(&self, i: usize) -> String {
        load_id(i)
    }

    /// kill -9 of one replica, as a node failure would.
    pub fn kill(&mut self, replica: usize) {
        self.controllers[replica] = None;
    }

    /// The replica holding the Lease, if one does.
    pub async fn leader(&self) -> Option<usize> {
        let lease = Api::<Lease>::namespaced(self.s.client.clone(), &self.s.ns)
            .get_opt(LEASE)
            .await
            .ok()
            .flatten()?;
        let holder = lease.spec?.holder_identity?;
        (0..REPLICAS).find(|r| identity(*r) == holder)
    }

    /// The replicas killed and not started again.
    pub fn stopped(&self) -> Vec<usize> {
        (0..REPLICAS)
            .filter(|r| self.controllers[*r].is_none())
            .collect()
    }

    /// Starts replica `replica` of `ledgerops run` (after a kill, or the first time).
    pub async fn restart(&mut self, replica: usize) {
        let mut env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        env.extend(agent::env());
        let [port, webhook_port] = self.ports[replica];
        let listen = format!("127.0.0.1:{port}");
        let webhook_listen = format!("127.0.0.1:{webhook_port}");
        let identity = identity(replica);
        let mut args = vec![
            "--listen",
            &listen,
            "--webhook-listen",
            &webhook_listen,
            "--leader-elect",
            "--leader-elect-identity",
            &identity,
            "--leader-elect-namespace",
            &self.s.ns,
        ];
        // Finished jobs' comments checked as a household's controller would, not every 2 s as
        // the short suites do: an hour makes a thousand jobs, and Gitea would serve little else.
        let mut agent_args = agent::args(&self.repo, &self.s.ns);
        if let Some(at) = agent_args
            .iter()
            .position(|a| *a == "--agent-comment-resync")
        {
            agent_args[at + 1] = COMMENT_RESYNC;
        }
        args.extend(agent_args);
        let controller = Ledgerops::start_within(&self.plane, &args, &env, READY_WITHIN).await;
        self.controllers[replica] = Some(controller);
    }

    /// kill -9 of the API server's store, started again on the same data; how long the API
    /// server took to be ready again.
    pub async fn restart_store(&mut self) -> Duration {
        self.plane
            .restart_store()
            .await
            .expect("the store starts again")
    }

    /// The highest peak resident memory of the replicas running now.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.controllers
            .iter()
            .flatten()
            .filter_map(Ledgerops::peak_rss_kib)
            .max()
    }

    /// The logs of the replicas running now, one after the other.
    pub fn log(&self) -> String {
        self.controllers
            .iter()
            .enumerate()
            .filter_map(|(r, c)| {
                c.as_ref()
                    .map(|c| format!("--- {}\n{}", identity(r), c.log()))
            })
            .collect()
    }

    /// Asks the Budget to sync now, as a person would with `kubectl annotate`.
    pub async fn nudge(&self, nonce: &str) {
        self.s
            .annotate::<ledgerops::api::budget::Budget>(
                BUDGET,
                "ledgerops.dev/sync-requested-at",
                nonce,
            )
            .await;
    }
}
