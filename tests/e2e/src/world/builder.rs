//! The [`Builder`] of a [`World`]: what a suite asks for, made in the order a person would set
//! it up (namespace, controller, Budget, plan, users).

use std::future::Future;
use std::pin::Pin;

use ledgerops::api::budget::BudgetPhase;
use ledgerops::api::plan::PlanPhase;
use ledgerops_testenv::ControlPlane;
use serde_json::Value;
use ynab_sim::{Fixture, demo};

use super::{Runs, World};
use crate::agent::Agent;
use crate::attacker::attacker;
use crate::controller::{Ledgerops, shared_file_root};
use crate::scenario::{Scenario, bakery_and_train_plan};

/// A controller shared between tests, made when a world first needs it (after its CRDs).
type SharedController = Pin<Box<dyn Future<Output = &'static Ledgerops>>>;

/// What a [`World`] is built with; [`Builder::build`] makes it.
pub struct Builder {
    prefix: String,
    runs: On,
    household: Option<Value>,
    plan_awaiting_approval: bool,
    alice: bool,
    repositories: bool,
    fixture: Option<Fixture>,
}

/// The controller asked for.
enum On {
    Own(Own),
    Agent(&'static Agent),
    Shared(SharedController),
}

/// A Gitea repository and a controller of the world's own: what its controller is started with.
#[derive(Default)]
struct Own {
    events: Vec<&'static str>,
    args: Vec<String>,
    pause: Option<String>,
    config_repo_cache: bool,
    /// The controller reconciles every namespace, not only the world's: for an agent that
    /// other worlds share ([`World::into_agent`]).
    every_namespace: bool,
}

impl Builder {
    pub(super) fn new(prefix: &str) -> Builder {
        Builder {
            prefix: prefix.to_owned(),
            runs: On::Shared(Box::pin(Ledgerops::shared())),
            household: None,
            plan_awaiting_approval: false,
            alice: false,
            repositories: false,
            fixture: None,
        }
    }

    /// A Gitea repository of the world's own ([`crate::agent::team_repo`]) and its own
    /// `ledgerops run` obeying its `/agent` comments, to which Gitea sends `events` (none: no
    /// webhook).
    pub fn agent(mut self, events: &[&'static str]) -> Builder {
        self.runs = On::Own(Own {
            events: events.to_vec(),
            ..Own::default()
        });
        self
    }

    /// More `ledgerops run` arguments for the world's own controller ([`Builder::agent`]).
    pub fn args(mut self, more: &[&str]) -> Builder {
        self.own().args.extend(more.iter().map(|a| a.to_string()));
        self
    }

    /// `LEDGEROPS_TEST_PAUSE` for the first start of the world's own controller, when given.
    pub fn pause(mut self, pause: Option<&str>) -> Builder {
        self.own().pause = pause.map(str::to_owned);
        self
    }

    /// The world's own controller caches what ConfigRepos fetch in a directory of its own
    /// (controllers of one plane would share the default one).
    pub fn config_repo_cache(mut self) -> Builder {
        self.own().config_repo_cache = true;
        self
    }

    /// The world's own controller reconciles every namespace, so that other worlds can share it
    /// ([`World::into_agent`]); otherwise only the world's, as two controllers without a leader
    /// must not manage one namespace (the tests of a binary share one control plane).
    pub fn every_namespace(mut self) -> Builder {
        self.own().every_namespace = true;
        self
    }

    /// The world runs on `controller`, which a suite shares between its tests; it is awaited
    /// once the world's CRDs are installed (a controller becomes ready only after them).
    pub fn controller(
        mut self,
        controller: impl Future<Output = &'static Ledgerops> + 'static,
    ) -> Builder {
        self.runs = On::Shared(Box::pin(controller));
        self
    }

    /// The world's `/agent` comments go to `agent`, which a suite shares between its tests
    /// ([`World::into_agent`]); its jobs are in the agent's namespace.
    pub fn agent_of(mut self, agent: &'static Agent) -> Builder {
        self.runs = On::Agent(agent);
        self
    }

    /// The Budget `household` on the demo plan with `spec` merged over the defaults
    /// ([`Scenario::create_budget`]), Ready.
    pub fn household(mut self, spec: Value) -> Builder {
        self.household = Some(spec);
        self
    }

    /// The simulator starts from `fixture` instead of the demo plan.
    pub fn fixture(mut self, fixture: Fixture) -> Builder {
        self.fixture = Some(fixture);
        self
    }

    /// The household's plan `september` ([`bakery_and_train_plan`]) waiting for approval.
    pub fn plan_awaiting_approval(mut self) -> Builder {
        self.plan_awaiting_approval = true;
        self
    }

    /// `alice`, the attacker of [`crate::attacker::attacker`], in the world's namespace.
    pub fn alice(mut self) -> Builder {
        self.alice = true;
        self
    }

    /// A directory of the world's own under the shared controller's `file://` root.
    pub fn repositories(mut self) -> Builder {
        self.repositories = true;
        self
    }

    /// Makes the world.
    pub async fn build(self) -> World {
        let plane = ControlPlane::shared();
        let fixture = self.fixture.unwrap_or_else(demo::generate);
        let sc = Scenario::new(plane, &self.prefix, fixture).await;
        let runs = match self.runs {
            On::Own(mut own) => {
                if own.config_repo_cache {
                    let cache = plane.dir().join(format!("cache-{}", sc.ns));
                    let cache = ["--config-repo-cache".into(), cache.display().to_string()];
                    own.args.extend(cache);
                }
                if !own.every_namespace {
                    own.args.extend(["--watch-namespace".into(), sc.ns.clone()]);
                }
                let pause = own.pause.as_deref();
                Runs::Own(Agent::start(&sc.ns, &own.events, own.args, pause).await)
            }
            On::Agent(agent) => Runs::Agent(agent),
            On::Shared(controller) => Runs::Shared(controller.await),
        };
        let root = self.repositories.then(|| {
            let root = shared_file_root().join(&sc.ns);
            std::fs::create_dir_all(&root).expect("the world's directory of repositories");
            root
        });
        if let Some(spec) = self.household {
            sc.create_budget("household", demo::TOKEN, spec).await;
            sc.wait_budget("household", BudgetPhase::Ready).await;
        }
        if self.plan_awaiting_approval {
            sc.create_plan("september", "household", bakery_and_train_plan())
                .await;
            sc.wait_plan("september", PlanPhase::AwaitingApproval).await;
        }
        let alice = match self.alice {
            true => Some(attacker(plane, &sc.ns, "alice").await),
            false => None,
        };
        World {
            sc,
            runs,
            alice,
            root,
        }
    }

    /// What the world's own controller is started with; panics unless [`Builder::agent`] came
    /// first.
    fn own(&mut self) -> &mut Own {
        match &mut self.runs {
            On::Own(own) => own,
            _ => panic!("options of the world's own controller come after .agent()"),
        }
    }
}
