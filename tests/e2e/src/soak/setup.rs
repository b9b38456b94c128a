//! The soak's world: its own control plane (the soak kills the controller), a simulator with
//! `transactions` uncategorised purchases of varied amounts, a Budget whose policy runs small
//! changes and asks a person for the rest (four eyes on), the people who act, and
//! `ledgerops run`, restartable.

use std::time::Duration;

use kube::Client;
use ledgerops::api::budget::BudgetPhase;
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::{DropFault, RequestMatch, demo};

use crate::attacker::{approver, editor};
use crate::controller::Ledgerops;
use crate::scenario::{Scenario, demo_with_uncategorised, load_id};

use super::rng::Rng;

/// The Budget's name.
pub const BUDGET: &str = "household";
/// The proposer and the approver (test users of the control plane): an editor, and a person
/// holding `approve`.
pub const PROPOSER: &str = "alice";
pub const APPROVER: &str = "bob";
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
    controller: Option<Ledgerops>,
    env: Vec<(String, String)>,
}

impl World {
    pub async fn start(transactions: usize, rng: &mut Rng, planted_bug: bool) -> World {
        let plane = ControlPlane::start().await.expect("control plane");
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
        let mut world = World {
            plane,
            s,
            proposer,
            approver,
            transactions,
            controller: None,
            env,
        };
        world.restart().await;
        world
            .s
            .create_budget(
                BUDGET,
                demo::TOKEN,
                json!({
                    "writes": {"enabled": true, "batchWindow": "500ms", "maxBatchSize": 100},
                    "approval": {"autoApproveBelow": AUTO_BELOW, "autoApproveMaxChanges": AUTO_MAX_CHANGES,
                                 "askOnNewPayee": false, "fourEyes": true, "expiry": "2m"},
                    "requestsPerHour": REQUESTS_PER_HOUR,
                    "syncInterval": "1m",
                }),
            )
            .await;
        world.s.wait_budget(BUDGET, BudgetPhase::Ready).await;
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

    /// The id of the soak's `i`th purchase.
    pub fn purchase(&self, i: usize) -> String {
        load_id(i)
    }

    /// kill -9, as a node failure would.
    pub fn kill(&mut self) {
        self.controller = None;
    }

    pub fn running(&self) -> bool {
        self.controller.is_some()
    }

    /// Starts `ledgerops run` (after a kill, or the first time).
    pub async fn restart(&mut self) {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let controller = Ledgerops::start_within(&self.plane, &[], &env, READY_WITHIN).await;
        self.controller = Some(controller);
    }

    pub fn peak_rss_kib(&self) -> Option<u64> {
        self.controller.as_ref().and_then(Ledgerops::peak_rss_kib)
    }

    pub fn log(&self) -> String {
        self.controller
            .as_ref()
            .map(Ledgerops::log)
            .unwrap_or_default()
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
