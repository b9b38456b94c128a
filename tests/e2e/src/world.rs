//! One test's world, the same for every suite: a namespace with the CRDs and admission policies
//! and a YNAB simulator ([`Scenario`]), the `ledgerops run` it runs on, and what a suite asks
//! the [`Builder`] for besides (a Gitea repository with its own controller, the household's
//! Budget, a plan waiting for approval, `alice`, a directory of `file://` repositories).

mod builder;
mod gitea;

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{Client, Resource};
use ledgerops_testenv::gitea::Gitea;
use serde_json::{Value, json};

pub use builder::Builder;

use crate::agent::Agent;
use crate::config_repo;
use crate::controller::Ledgerops;
use crate::scenario::Scenario;

/// One test's world; see [`World::build`].
pub struct World {
    pub sc: Scenario,
    runs: Runs,
    alice: Option<Client>,
    root: Option<PathBuf>,
}

/// The controller a world runs on.
enum Runs {
    /// Its own, obeying its own Gitea repository.
    Own(Agent),
    /// A suite's agent, shared by its tests.
    Agent(&'static Agent),
    /// A controller shared by the tests of a binary (or a suite), obeying no repository of its own.
    Shared(&'static Ledgerops),
}

impl World {
    /// A builder of a world whose namespace is named after `prefix`; by default it runs on
    /// [`Ledgerops::shared`].
    pub fn build(prefix: &str) -> Builder {
        Builder::new(prefix)
    }

    /// The controller the world runs on.
    pub fn controller(&self) -> &Ledgerops {
        match &self.runs {
            Runs::Own(agent) => agent.controller(),
            Runs::Agent(agent) => agent.controller(),
            Runs::Shared(controller) => controller,
        }
    }

    /// The Gitea repository and controller the world's `/agent` comments go to.
    pub fn agent(&self) -> &Agent {
        match &self.runs {
            Runs::Own(agent) => agent,
            Runs::Agent(agent) => agent,
            Runs::Shared(_) => panic!("this world has no Gitea repository: build it with .agent()"),
        }
    }

    /// The world's own agent, to restart or kill its controller.
    pub fn agent_mut(&mut self) -> &mut Agent {
        match &mut self.runs {
            Runs::Own(agent) => agent,
            _ => panic!("only a world's own agent (.agent()) can be restarted"),
        }
    }

    /// Stops the world's own controller with SIGTERM and starts it again, then waits until the
    /// new one logs `line` (what it logs once it has looked at what the test is about). Returns
    /// the log of the one stopped.
    pub async fn restart_until_logged(&mut self, line: &str) -> String {
        let log = self.agent_mut().stop().await;
        self.agent_mut().start_controller(None).await;
        let what = format!("the restarted controller logs {line:?}");
        crate::wait::eventually(&what, crate::scenario::WAIT, async || {
            self.controller().log().contains(line)
        })
        .await;
        log
    }

    /// The world's own agent, kept beyond the test that built the world (the namespace's client
    /// and the simulator end with that test's runtime), for a suite to share
    /// ([`Builder::agent_of`]).
    pub fn into_agent(self) -> Agent {
        match self.runs {
            Runs::Own(agent) => agent,
            _ => panic!("only a world's own agent (.agent()) can be kept"),
        }
    }

    /// The full name of the world's Gitea repository.
    pub fn repo(&self) -> &str {
        &self.agent().repo
    }

    /// The shared test Gitea (started by the first test of the binary that asks for it).
    pub fn gitea(&self) -> &'static Gitea {
        Gitea::shared()
    }

    /// A client as `alice`, the attacker of [`crate::attacker::attacker`].
    pub fn alice(&self) -> &Client {
        self.alice
            .as_ref()
            .expect("alice: build the world with .alice()")
    }

    /// Kind `K` in the world's namespace, as alice.
    pub fn as_alice<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.alice().clone(), &self.sc.ns)
    }

    /// The world's directory under the controller's `file://` root, for its repositories.
    pub fn root(&self) -> &Path {
        self.root
            .as_deref()
            .expect("a directory of repositories: build the world with .repositories()")
    }

    /// A Secret `gitea` with the admin's token, opted in for the Gitea, and the ConfigRepo
    /// `household` following the world's repository over HTTP with it, made by admin; `extra`
    /// is set over its spec (an hour's interval: pushes reach it through the webhook).
    pub async fn follow_repo(&self, extra: Value) {
        let gitea = self.gitea();
        let reader = gitea.admin();
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": "gitea", "labels": {"ledgerops.dev/git-credentials": "true"},
                         "annotations": {"ledgerops.dev/git-url-prefixes": format!("{}/", gitea.url())}},
            "stringData": {"username": reader.login(), "token": reader.token()},
        }))
        .unwrap();
        self.sc
            .api::<Secret>()
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        let mut spec = json!({"url": format!("{}/{}.git", gitea.url(), self.repo()),
                              "interval": "1h", "secretRef": {"name": "gitea"}});
        for (k, v) in extra.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        config_repo::create(&self.sc.client, &self.sc.ns, "household", spec).await;
    }
}
