//! Part 1 of issue 37: the YNAB token out of every proposer's reach. A Budget may name a token
//! Secret in another namespace only if that Secret names the Budget's namespace; the Budget says
//! who besides its owners may read the Secret it uses; and in the documented layout an editor of
//! the Budget's namespace cannot read the token at all.

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::logic::status::conditions;
use ledgerops_e2e::attacker::{attacker, automation, owner};
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::scenario::{Scenario, WAIT, token_secret};
use ledgerops_e2e::wait;
use ledgerops_testenv::ControlPlane;
use serde_json::json;
use ynab_sim::demo;

const GRANT: &str = "ledgerops.dev/allowed-namespaces";

/// A household namespace with alice (an editor who also owns its Budgets) and a token namespace
/// nobody but the controller and cluster administrators may read.
async fn world(prefix: &str) -> (Scenario, String, Client) {
    let plane = ControlPlane::shared();
    let s = Scenario::new(plane, prefix, demo::generate()).await;
    Ledgerops::shared().await;
    let alice = attacker(plane, &s.ns, "alice").await;
    owner(plane, &s.ns, "alice").await;
    let tokens = plane.namespace(&format!("{prefix}-tokens")).await.unwrap();
    (s, tokens, alice)
}

/// Budget `name`'s condition `type_` once `done` holds for it.
async fn condition(
    s: &Scenario,
    name: &str,
    type_: &str,
    done: impl Fn(&Condition) -> bool,
) -> Condition {
    let budget = wait::until(&s.api::<Budget>(), name, WAIT, |b| {
        b.status
            .as_ref()
            .and_then(|st| conditions::get(&st.conditions, type_))
            .is_some_and(&done)
    })
    .await;
    conditions::get(&budget.status.unwrap().conditions, type_)
        .unwrap()
        .clone()
}

#[tokio::test]
async fn a_token_of_another_namespace_is_used_only_where_it_names_the_budgets() {
    let (s, tokens, _) = world("tok-grant").await;
    let secrets = Api::<Secret>::namespaced(s.client.clone(), &tokens);
    for (name, grant) in [
        ("ungranted", None),
        ("wildcard", Some("*")),
        ("others", Some("other")),
    ] {
        let mut secret = token_secret(name, demo::TOKEN);
        if let Some(grant) = grant {
            secret.metadata.annotations = Some([(GRANT.to_owned(), grant.to_owned())].into());
        }
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
        s.create_budget_only(name, json!({"name": name, "namespace": tokens}), json!({}))
            .await;
    }
    for (name, found) in [
        ("ungranted", format!("has no annotation {GRANT}")),
        ("wildcard", "which is not honoured".to_owned()),
        ("others", "names only other".to_owned()),
    ] {
        let ready = condition(&s, name, "Ready", |c| c.reason == "TokenNotGranted").await;
        assert_eq!(ready.status, "False");
        let fixed = if name == "others" {
            format!("other,{}", s.ns)
        } else {
            s.ns.clone()
        };
        for needle in [
            format!("Secret {name} in namespace {tokens}"),
            found,
            format!("not used for namespace {}", s.ns),
            "nothing was sent".to_owned(),
            format!("`kubectl annotate secret {name} -n {tokens} --overwrite {GRANT}={fixed}`"),
        ] {
            assert!(
                ready.message.contains(&needle),
                "{needle}: {}",
                ready.message
            );
        }
        let budget = s.api::<Budget>().get(name).await.unwrap();
        assert_eq!(
            budget.status.unwrap().phase,
            Some(BudgetPhase::Unauthorized)
        );
    }
    assert_eq!(s.total_requests().await, 0, "a token went out ungranted");

    // The command the message gives: the Secret's watch wakes the Budget, and it syncs.
    let grant = json!({"metadata": {"annotations": {GRANT: s.ns}}});
    secrets
        .patch("ungranted", &PatchParams::default(), &Patch::Merge(&grant))
        .await
        .unwrap();
    s.wait_budget("ungranted", BudgetPhase::Ready).await;
    assert!(s.total_requests().await > 0);
    for name in ["wildcard", "others"] {
        let budget = s.api::<Budget>().get(name).await.unwrap();
        assert_eq!(
            budget.status.unwrap().phase,
            Some(BudgetPhase::Unauthorized),
            "{name}"
        );
    }
}

#[tokio::test]
async fn the_budget_names_who_besides_its_owners_may_read_its_token() {
    let (s, tokens, alice) = world("tok-readers").await;
    // An automation with Kubernetes' edit role, as a CI job or an agent would hold it.
    let bot = automation(ControlPlane::shared(), &s.ns, "automation").await;

    // The token beside the Budget: the automation may read it.
    s.create_budget("beside", demo::TOKEN, json!({})).await;
    let exposed = condition(&s, "beside", "TokenProtected", |c| c.status == "False").await;
    assert_eq!(exposed.reason, "ReadableByOthers");
    for needle in [
        format!("Secret beside-token in namespace {}", s.ns),
        format!("ServiceAccount {}/automation", s.ns),
        "write to YNAB without asking".to_owned(),
        "ledgerops-tokens".to_owned(),
        format!("{GRANT}={}", s.ns),
        "spec.tokenSecretRef.namespace".to_owned(),
    ] {
        assert!(
            exposed.message.contains(&needle),
            "{needle}: {}",
            exposed.message
        );
    }
    // alice reads Secrets there too, but she governs the Budget: an owner is not named.
    assert!(!exposed.message.contains("alice"), "{}", exposed.message);
    // A warning, not a refusal: the Budget syncs.
    s.wait_budget("beside", BudgetPhase::Ready).await;
    // The Event follows the status that carries the condition: waited for, not listed at once.
    let warning = s.wait_event("ReadableByOthers", Some("beside")).await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert!(
        warning
            .note
            .as_deref()
            .is_some_and(|n| n.contains("automation")),
        "{warning:?}"
    );
    // What the condition warns of is real.
    Api::<Secret>::namespaced(bot.clone(), &s.ns)
        .get("beside-token")
        .await
        .expect("the automation reads the token beside the Budget");

    // The documented layout: the token where only the controller reads Secrets.
    s.create_budget_with_token_in("apart", &tokens, demo::TOKEN, json!({}))
        .await;
    s.wait_budget("apart", BudgetPhase::Ready).await;
    let protected = condition(&s, "apart", "TokenProtected", |_| true).await;
    assert_eq!(
        (protected.status.as_str(), protected.reason.as_str()),
        ("True", "OnlyOwnersRead"),
        "{}",
        protected.message
    );
    for (who, client) in [("alice", &alice), ("the automation", &bot)] {
        let read = Api::<Secret>::namespaced(client.clone(), &tokens)
            .get("apart-token")
            .await;
        assert!(
            matches!(&read, Err(kube::Error::Api(e)) if e.code == 403),
            "{who} read the token: {read:?}"
        );
    }
}
