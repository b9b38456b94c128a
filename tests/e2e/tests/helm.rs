//! The Helm chart (`charts/ledgerops`) with Helm built from its Go module and a real API server:
//! what it ships is what `crds/` and `examples/` hold; `helm lint` and `helm template` over a
//! matrix of values, each rendering accepted by a server-side dry run (and the values the schema
//! or the templates refuse, refused with a message); install, upgrade, uninstall; and
//! `ledgerops run` with the chart's arguments and a token of its ServiceAccount holding the
//! chart's Lease and doing seed 002, an undo, a Transaction converge and an `/agent` command from
//! a real Gitea, while what it has no business with is Forbidden.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use ledgerops::api::admission::{PARAMS_NAME, PARAMS_NAMESPACE};
use ledgerops::api::agent_job::{AgentJob, JobPhase};
use ledgerops::api::approval::ApprovalRequest;
use ledgerops::api::budget::{Budget, BudgetPhase};
use ledgerops::api::common::PROPOSED_BY;
use ledgerops::api::plan::PlanPhase;
use ledgerops::api::transaction::TransactionPhase;
use ledgerops_e2e::controller::Ledgerops;
use ledgerops_e2e::gitea_api;
use ledgerops_e2e::helm::{chart, documents, helm, output};
use ledgerops_e2e::scenario::{PATCH, Scenario, WAIT, bakery_and_train_plan, category};
use ledgerops_e2e::wait::eventually;
use ledgerops_testenv::ControlPlane;
use ledgerops_testenv::gitea::Gitea;
use serde_json::{Value, json};
use ynab_sim::{SimConfig, Simulator, demo};

const RELEASE: &str = "ledgerops";
/// The pod the controller plays: the Lease names it.
const POD: &str = "ledgerops-7d9c5b-x2kq4";
const WEBHOOK_SECRET: &str = "chart-webhook-secret";
const SERVICE_ACCOUNT_USER: &str = "system:serviceaccount:ledgerops-system:ledgerops";

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The names and bytes of the files in `dir` whose name starts with `prefix`.
fn files(dir: &Path, prefix: &str) -> Vec<(String, Vec<u8>)> {
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_chart_ships_the_generated_crds_and_policies_and_the_people_roles_byte_for_byte() {
    let fix = "cp crds/ledgerops.dev_*.yaml charts/ledgerops/files/crds/ && cp crds/admission-*.yaml charts/ledgerops/files/";
    let crds = files(&repo("crds"), "ledgerops.dev_");
    assert!(!crds.is_empty());
    assert!(
        files(&chart().join("files/crds"), "") == crds,
        "charts/ledgerops/files/crds differs from crds/ (run `ledgerops crdgen --out crds`, then {fix})"
    );
    let policies = files(&repo("crds"), "admission-");
    assert_eq!(policies.len(), ledgerops::api::admission::policies().len());
    assert!(
        files(&chart().join("files"), "admission-") == policies,
        "charts/ledgerops/files/admission-*.yaml differ from crds/ ({fix})"
    );
    assert!(
        files(&chart().join("files"), "people-roles.yaml")
            == files(&repo("examples"), "people-roles.yaml"),
        "charts/ledgerops/files/people-roles.yaml differs from examples/people-roles.yaml: the \
         chart must grant people exactly the roles the trust suites test \
         (cp examples/people-roles.yaml charts/ledgerops/files/)"
    );
}

/// As a parent chart's dependency, the chart gets the parent's `global` values (Helm passes an
/// empty `global` even when the parent sets none): its schema, closed to unknown keys, must
/// accept them.
#[tokio::test]
async fn the_chart_renders_as_a_subchart_with_the_parents_global_values() {
    let plane = ControlPlane::shared();
    let parent = plane.dir().join("parent-chart");
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(parent.join("charts")).unwrap();
    std::fs::write(
        parent.join("Chart.yaml"),
        "apiVersion: v2\nname: parent\nversion: 0.1.0\ndependencies:\n  - name: ledgerops\n    version: \">=0.0.0-0\"\n",
    )
    .unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(chart())
        .arg(parent.join("charts/ledgerops"))
        .status()
        .unwrap();
    assert!(copied.success());
    for args in [
        &[][..],
        &["--set=global.imageRegistry=registry.example.com"][..],
    ] {
        let mut lint = helm(plane);
        lint.args(["lint", "--strict", "--with-subcharts"])
            .arg(&parent)
            .args(args);
        output(lint).unwrap_or_else(|e| panic!("helm lint {args:?}: {e}"));
        let mut render = helm(plane);
        render
            .args(["template", RELEASE])
            .arg(&parent)
            .args(["--namespace", PARAMS_NAMESPACE])
            .args(args);
        let rendered = output(render).unwrap_or_else(|e| panic!("helm template {args:?}: {e}"));
        assert_eq!(kind(&documents(&rendered), "Deployment").len(), 1);
    }
    // Still a schema: `global` is an object.
    let Err(error) = template(plane, PARAMS_NAMESPACE, &["--set=global=5"]) else {
        panic!("a global that is not an object rendered");
    };
    assert!(error.contains("global"), "{error}");
}

/// `helm template` of the chart with `args`, into `namespace`.
fn template(plane: &ControlPlane, namespace: &str, args: &[&str]) -> Result<String, String> {
    let mut cmd = helm(plane);
    cmd.args(["template", RELEASE])
        .arg(chart())
        .args(["--namespace", namespace])
        .args(args);
    output(cmd)
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn container_args(docs: &[Value]) -> Vec<String> {
    let deployment = kind(docs, "Deployment")[0];
    serde_json::from_value(deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone())
        .unwrap()
}

async fn create_namespace(client: &Client, name: &str) {
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    match Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("creating namespace {name}: {e}"),
    }
}

#[tokio::test]
async fn lint_and_every_values_set_renders_what_the_api_server_accepts() {
    let plane = ControlPlane::shared();
    let admin = plane.client().await.unwrap();
    for ns in [
        PARAMS_NAMESPACE,
        "ledgerops-other",
        "budgets-a",
        "budgets-b",
        "ledgerops-tokens",
    ] {
        create_namespace(&admin, ns).await;
    }
    // The Prometheus Operator's ServiceMonitor and PrometheusRule, reduced to their kinds: the
    // dry run then checks the chart's for everything but their schema (promtool checks the
    // rules: tests/tools/check-alerts.sh).
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    for (plural, kind) in [
        ("servicemonitors", "ServiceMonitor"),
        ("prometheusrules", "PrometheusRule"),
    ] {
        let name = format!("{plural}.monitoring.coreos.com");
        let stub: CustomResourceDefinition = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
                "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        }))
        .unwrap();
        crds.patch(
            &name,
            &PatchParams::apply("ledgerops-tests").force(),
            &Patch::Apply(&stub),
        )
        .await
        .unwrap();
        kube::runtime::wait::await_condition(
            crds.clone(),
            &name,
            kube::runtime::conditions::is_crd_established(),
        )
        .await
        .unwrap();
    }

    let gitea = [
        "--set=gitea.url=https://git.example.com",
        "--set=gitea.existingSecret=ledgerops-gitea",
        "--set=gitea.botLogin=ledgerops-bot",
        "--set=gitea.repositories={household/config}",
        "--set=gitea.namespace=budgets-b",
    ];
    let matrix: Vec<(&str, &str, Vec<&str>)> = vec![
        ("defaults", PARAMS_NAMESPACE, vec![]),
        (
            "two budget namespaces, Gitea, ServiceMonitor, PrometheusRule, NetworkPolicy, a hub, another namespace",
            "ledgerops-other",
            [
                &[
                    "--set=budgetNamespaces={budgets-a,budgets-b}",
                    "--set=tokenNamespaces={ledgerops-tokens}",
                    "--set=metrics.serviceMonitor.enabled=true",
                    "--set=metrics.prometheusRule.enabled=true",
                    "--set=networkPolicy.enabled=true",
                    "--set=networkPolicy.webhookFrom[0].namespaceSelector.matchLabels.team=gitea",
                    "--set=networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring",
                    "--set=podDisruptionBudget.enabled=false",
                    "--set=serviceAccount.name=budget-bot",
                    "--set=ynab.apiUrlAllow={https://api.ynab.com/v1,http://ynab-sim.test:8080/v1}",
                    "--set=replicaCount=3",
                    "--set=leaderElection.leaseDuration=30s",
                    "--set=eventsAddress=http://notification-controller.flux-system.svc.cluster.local./",
                ][..],
                &gitea[..],
            ]
            .concat(),
        ),
        (
            "every namespace, no CRDs, no policies, no people roles, no election, scaled to zero, text logs",
            PARAMS_NAMESPACE,
            vec![
                "--set=budgetNamespaces={*}",
                "--set=leaderElection.enabled=false",
                "--set=crds.install=false",
                "--set=admission.enabled=false",
                "--set=peopleRoles.enabled=false",
                "--set=replicaCount=0",
                "--set=logJson=false",
            ],
        ),
    ];
    // The value sets of charts/ledgerops/ci (chart-testing's convention), each on its own.
    let mut ci: Vec<PathBuf> = std::fs::read_dir(chart().join("ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ci.sort();
    assert!(ci.len() >= 3, "{ci:?}");
    for file in &ci {
        let values = format!("--values={}", file.display());
        let docs = lint_render_accept(plane, &values, PARAMS_NAMESPACE, &[&values]);
        assert_eq!(kind(&docs, "Deployment").len(), 1, "{values}");
    }
    for (what, namespace, args) in &matrix {
        let docs = lint_render_accept(plane, what, namespace, args);
        let args = container_args(&docs);
        let params = kind(&docs, "ConfigMap");
        let deployment = kind(&docs, "Deployment")[0];
        let pod = &deployment["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        // Restricted Pod Security, whatever the values.
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(
            container["securityContext"]["allowPrivilegeEscalation"],
            false
        );
        assert_eq!(
            container["securityContext"]["capabilities"]["drop"],
            json!(["ALL"])
        );
        assert_eq!(
            container["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
        let leader_role = kind(&docs, "Role")
            .into_iter()
            .find(|r| r["metadata"]["name"] == "ledgerops-leader-election");
        assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
        match *what {
            "defaults" => {
                // Leader election on: a new pod starts as a standby beside the old one.
                assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");
                for expected in [
                    "--leader-elect",
                    "--leader-elect-lease=ledgerops-leader",
                    "--leader-elect-namespace=ledgerops-system",
                    "--leader-elect-lease-duration=15s",
                ] {
                    assert!(args.contains(&expected.into()), "{expected} in {args:?}");
                }
                let role = leader_role.expect("the leader election Role");
                assert_eq!(role["metadata"]["namespace"], PARAMS_NAMESPACE);
                assert_eq!(
                    role["rules"][1]["resourceNames"],
                    json!(["ledgerops-leader"])
                );
                assert_eq!(
                    container["env"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|e| e["name"] == "POD_NAME")
                        .map(|e| &e["valueFrom"]["fieldRef"]["fieldPath"]),
                    Some(&json!("metadata.name")),
                    "the Lease holder is the pod's name"
                );
                assert_eq!(
                    args.iter()
                        .filter(|a| a.starts_with("--token-namespace="))
                        .count(),
                    1
                );
                assert!(
                    args.contains(&"--token-namespace=ledgerops-system".into()),
                    "{args:?}"
                );
                assert_eq!(params[0]["data"]["controllerUser"], SERVICE_ACCOUNT_USER);
                let policies = ledgerops::api::admission::policies();
                let bindings: usize = policies.iter().map(|p| p.bindings.len()).sum();
                assert_eq!(
                    kind(&docs, "ValidatingAdmissionPolicy").len(),
                    policies.len()
                );
                assert_eq!(
                    kind(&docs, "ValidatingAdmissionPolicyBinding").len(),
                    bindings
                );
                let crds = kind(&docs, "CustomResourceDefinition");
                assert_eq!(crds.len(), ledgerops::api::crds().len());
                for crd in crds {
                    assert_eq!(
                        crd["metadata"]["annotations"]["helm.sh/resource-policy"], "keep",
                        "crds.keep: {}",
                        crd["metadata"]["name"]
                    );
                }
                assert!(kind(&docs, "ServiceMonitor").is_empty());
                assert!(kind(&docs, "PrometheusRule").is_empty());
                assert_eq!(kind(&docs, "PodDisruptionBudget").len(), 1);
                assert!(!args.iter().any(|a| a.starts_with("--gitea")));
                assert!(!args.iter().any(|a| a.starts_with("--events-address")));
            }
            "every namespace, no CRDs, no policies, no people roles, no election, scaled to zero, text logs" =>
            {
                assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
                assert!(!args.iter().any(|a| a.starts_with("--leader-elect")));
                assert!(leader_role.is_none());
                assert!(
                    !args.iter().any(|a| a.starts_with("--token-namespace")),
                    "{args:?}"
                );
                assert!(!args.contains(&"--log-json".into()));
                assert!(kind(&docs, "CustomResourceDefinition").is_empty());
                assert!(kind(&docs, "ValidatingAdmissionPolicy").is_empty() && params.is_empty());
                let bindings = kind(&docs, "ClusterRoleBinding");
                for role in ["ledgerops-budget-namespace", "ledgerops-token-namespace"] {
                    assert!(
                        bindings.iter().any(|b| b["roleRef"]["name"] == role),
                        "every namespace: {role} is bound cluster-wide"
                    );
                }
                let roles = kind(&docs, "ClusterRole");
                assert!(
                    !roles
                        .iter()
                        .any(|r| r["metadata"]["name"] == "ledgerops-edit")
                );
            }
            _ => {
                assert_eq!(
                    args.iter()
                        .filter(|a| a.starts_with("--token-namespace="))
                        .collect::<Vec<_>>(),
                    ["--token-namespace=ledgerops-tokens"],
                    "Secrets are read only where tokens live"
                );
                for expected in [
                    "--agent-namespace=budgets-b",
                    "--gitea-url=https://git.example.com",
                    "--gitea-repository=household/config",
                    "--gitea-webhook-secret-file=/etc/ledgerops/gitea/webhook-secret",
                    "--ynab-api-url-allow=https://api.ynab.com/v1,http://ynab-sim.test:8080/v1",
                    "--events-address=http://notification-controller.flux-system.svc.cluster.local./",
                ] {
                    assert!(
                        args.contains(&expected.to_owned()),
                        "{expected} in {args:?}"
                    );
                }
                assert_eq!(
                    params[0]["data"]["controllerUser"],
                    "system:serviceaccount:ledgerops-other:budget-bot"
                );
                let bound: Vec<&str> = kind(&docs, "RoleBinding")
                    .iter()
                    .filter(|b| b["roleRef"]["name"] == "ledgerops-budget-namespace")
                    .map(|b| b["metadata"]["namespace"].as_str().unwrap())
                    .collect();
                assert_eq!(bound, ["budgets-a", "budgets-b"]);
                let secrets: Vec<&str> = kind(&docs, "RoleBinding")
                    .iter()
                    .filter(|b| b["roleRef"]["name"] == "ledgerops-token-namespace")
                    .map(|b| b["metadata"]["namespace"].as_str().unwrap())
                    .collect();
                assert_eq!(secrets, ["ledgerops-tokens"]);
                let budget_role = kind(&docs, "ClusterRole")
                    .into_iter()
                    .find(|r| r["metadata"]["name"] == "ledgerops-budget-namespace")
                    .expect("the budget-namespace ClusterRole");
                assert!(
                    !budget_role.to_string().contains("secrets"),
                    "no Secret is granted where Budgets live: {budget_role}"
                );
                assert!(
                    !kind(&docs, "ClusterRoleBinding")
                        .iter()
                        .any(|b| b["roleRef"]["name"] == "ledgerops-budget-namespace")
                );
                assert_eq!(kind(&docs, "ServiceMonitor").len(), 1);
                let rules = kind(&docs, "PrometheusRule");
                let alerts: Vec<&str> = rules[0]["spec"]["groups"][0]["rules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["alert"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    alerts,
                    [
                        "LedgeropsApprovalWaitingTooLong",
                        "LedgeropsApprovalExpiredUnanswered",
                        "LedgeropsBudgetSyncStale",
                        "LedgeropsBudgetNotReady",
                        "LedgeropsAutopilotStopped",
                        "LedgeropsRequestBudgetNearlySpent",
                        "LedgeropsControllerDown"
                    ]
                );
                // The webhook and the metrics on ports of their own, each open to its own peers.
                let policy = kind(&docs, "NetworkPolicy");
                assert_eq!(policy.len(), 1);
                let ingress = policy[0]["spec"]["ingress"].as_array().unwrap();
                let peers: Vec<(&str, &str)> = ingress
                    .iter()
                    .map(|rule| {
                        (
                            rule["ports"][0]["port"].as_str().unwrap(),
                            rule["from"][0]["namespaceSelector"]["matchLabels"]["team"]
                                .as_str()
                                .unwrap(),
                        )
                    })
                    .collect();
                assert_eq!(peers, [("http", "monitoring"), ("webhook", "gitea")]);
                let ports: Vec<(&str, i64)> = kind(&docs, "Service")[0]["spec"]["ports"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| (p["name"].as_str().unwrap(), p["port"].as_i64().unwrap()))
                    .collect();
                assert_eq!(ports, [("http", 8080), ("webhook", 8081)]);
                assert!(args.contains(&"--webhook-listen=0.0.0.0:8081".into()));
                assert_eq!(deployment["spec"]["replicas"], 3);
                assert!(leader_role.is_some());
                assert!(args.contains(&"--leader-elect-lease-duration=30s".into()));
                assert!(kind(&docs, "PodDisruptionBudget").is_empty());
                let agent = kind(&docs, "Role")
                    .into_iter()
                    .find(|r| r["metadata"]["name"] == "ledgerops-agent")
                    .expect("the AgentJob Role");
                assert_eq!(agent["metadata"]["namespace"], "budgets-b");
            }
        }
    }

    let refused: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--set=replicaCount=2", "--set=leaderElection.enabled=false"],
            "leaderElection.enabled",
        ),
        (vec!["--set=replicaCount=11"], "replicaCount"),
        (
            vec!["--set=leaderElection.leaseDuration=soon"],
            "leaseDuration",
        ),
        (
            vec!["--set=budgetNamespaces={*,budgets-a}"],
            "list no others",
        ),
        (vec!["--set=budgetNamespaces={Budgets}"], "budgetNamespaces"),
        (
            vec!["--set=budgetNamespaces={budgets-a,ledgerops-system}"],
            "budgetNamespaces lists ledgerops-system, the release namespace: whoever may create Pods there can run as the controller's ServiceAccount",
        ),
        (vec!["--set=tokenNamespaces={*}"], "tokenNamespaces"),
        (
            vec!["--set=gitea.url=https://git.example.com"],
            "gitea.existingSecret",
        ),
        (
            [&gitea[..], &["--set=budgetNamespaces={budgets-a}"][..]].concat(),
            "must be one of budgetNamespaces",
        ),
        (
            [
                &gitea[..],
                &[
                    "--set=budgetNamespaces={budgets-b}",
                    "--set=service.webhookPort=8080",
                ][..],
            ]
            .concat(),
            "service.webhookPort must differ from service.port",
        ),
        (vec!["--set=ynab.apiUrlAllow={ftp://x}"], "apiUrlAllow"),
        (vec!["--set=replicas=1"], "replicas"),
    ];
    for (args, message) in refused {
        let Err(error) = template(plane, PARAMS_NAMESPACE, &args) else {
            panic!("helm template {args:?} rendered, but should be refused");
        };
        assert!(error.contains(message), "{args:?}: {message:?} in {error}");
    }
}

/// `helm lint --strict` and `helm template` of the chart with `args` into `namespace`, every
/// object of the rendering accepted by a server-side dry run; the rendered documents.
fn lint_render_accept(
    plane: &ControlPlane,
    what: &str,
    namespace: &str,
    args: &[&str],
) -> Vec<Value> {
    let mut lint = helm(plane);
    lint.args(["lint", "--strict", "--namespace", namespace])
        .arg(chart())
        .args(args);
    output(lint).unwrap_or_else(|e| panic!("helm lint ({what}): {e}"));
    let rendered =
        template(plane, namespace, args).unwrap_or_else(|e| panic!("helm template ({what}): {e}"));
    let file = plane.dir().join("rendered.yaml");
    std::fs::write(&file, &rendered).unwrap();
    let applied = plane
        .kubectl_ok(&[
            "apply",
            "--dry-run=server",
            // No --namespace: every namespaced object of the chart names its own.
            "-f",
            file.to_str().unwrap(),
        ])
        .unwrap_or_else(|e| panic!("server-side dry run ({what}): {e}"));
    let docs = documents(&rendered);
    assert_eq!(
        applied.lines().count(),
        docs.len(),
        "({what}) every object is accepted: {applied}"
    );
    docs
}

/// `helm install` (or `verb`) of the chart into ledgerops-system with `args`; returns how long
/// it took and what Helm printed (the NOTES).
fn install_printing(plane: &ControlPlane, verb: &str, args: &[&str]) -> (Duration, String) {
    let start = Instant::now();
    let mut cmd = helm(plane);
    cmd.args([verb, RELEASE])
        .arg(chart())
        .args(["--namespace", PARAMS_NAMESPACE, "--create-namespace"])
        .args(args);
    let printed = output(cmd).unwrap_or_else(|e| panic!("helm {verb}: {e}"));
    (start.elapsed(), printed)
}

fn install(plane: &ControlPlane, verb: &str, args: &[&str]) -> Duration {
    install_printing(plane, verb, args).0
}

/// A kube client and kubeconfig authenticated as the chart's ServiceAccount, with a token from
/// the TokenRequest API, as the kubelet would mount it into the pod.
async fn as_service_account(plane: &ControlPlane) -> (Client, PathBuf) {
    let token = plane
        .kubectl_ok(&[
            "create",
            "token",
            RELEASE,
            "-n",
            PARAMS_NAMESPACE,
            "--duration=1h",
        ])
        .unwrap();
    let path = plane
        .kubeconfig_with_token("ledgerops-sa", token.trim())
        .unwrap();
    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&path).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    (Client::try_from(config).unwrap(), path)
}

/// The arguments the installed chart gives the controller's container, less what only the pod
/// has: its port (each test picks a free one), the files mounted from gitea.existingSecret (given
/// as variables here) and YNAB's URL (the simulator's).
async fn chart_args(admin: &Client) -> Vec<String> {
    let deployment = Api::<Deployment>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get(RELEASE)
        .await
        .unwrap();
    let pod = deployment.spec.unwrap().template.spec.unwrap();
    let args = pod.containers[0].args.clone().unwrap();
    let pod_only = [
        "--listen=",
        "--webhook-listen=",
        "--gitea-token-file=",
        "--gitea-webhook-secret-file=",
        "--ynab-api-url-allow=",
    ];
    args.into_iter()
        .filter(|a| a != "run" && !pod_only.iter().any(|p| a.starts_with(p)))
        .collect()
}

fn forbidden<T: std::fmt::Debug>(what: &str, result: Result<T, kube::Error>) {
    match result {
        Err(kube::Error::Api(e)) if e.code == 403 => {}
        other => panic!("{what}: expected 403 Forbidden, got {other:?}"),
    }
}

#[tokio::test]
async fn install_upgrade_and_uninstall_keep_the_crds_policies_and_journal() {
    let plane = ControlPlane::start().await.unwrap();
    let admin = plane.client().await.unwrap();
    let (took, notes) = install_printing(&plane, "install", &[]);
    eprintln!("helm install took {took:?}");
    // NOTES say what to do next, for this release.
    for next in [
        "running as\nsystem:serviceaccount:ledgerops-system:ledgerops",
        "kubectl -n ledgerops-system create secret generic ynab-token",
        "ledgerops.dev/ynab-token=true",
        "--clusterrole=ledgerops-edit",
        r#"{"spec":{"decision":{"verdict":"Approve","by":"<your user name>"}}}"#,
        "set gitea.url",
    ] {
        assert!(notes.contains(next), "{next:?} in the NOTES: {notes}");
    }
    let sa = Api::<ServiceAccount>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get(RELEASE)
        .await
        .unwrap();
    assert_eq!(sa.metadata.name.as_deref(), Some(RELEASE));
    let params = Api::<ConfigMap>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get(PARAMS_NAME)
        .await
        .unwrap();
    assert_eq!(params.data.unwrap()["controllerUser"], SERVICE_ACCOUNT_USER);
    // The people roles are aggregated into Kubernetes' own (kube-controller-manager runs the
    // aggregation controller here as in any cluster).
    let aggregated = Instant::now();
    loop {
        let edit = Api::<ClusterRole>::all(admin.clone())
            .get("edit")
            .await
            .unwrap();
        let plans = edit.rules.iter().flatten().any(|rule| {
            rule.resources
                .iter()
                .flatten()
                .any(|r| r == "categorizationplans")
                && rule.verbs.iter().any(|v| v == "create")
        });
        if plans {
            break;
        }
        assert!(
            aggregated.elapsed() < Duration::from_secs(30),
            "ledgerops-edit was not aggregated into edit: {edit:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A journal entry, written as the controller writes it: by the chart's ServiceAccount, which
    // both RBAC (ConfigMaps in its budget namespace) and admission (controllerUser) allow.
    let (controller, _) = as_service_account(&plane).await;
    let journal: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "ledgerops-journal-test", "labels": {"ledgerops.dev/journal": "september"}},
        "data": {"entry": "{}"}
    }))
    .unwrap();
    Api::<ConfigMap>::namespaced(controller.clone(), PARAMS_NAMESPACE)
        .create(&PostParams::default(), &journal)
        .await
        .expect("the chart's ServiceAccount writes the journal");
    // The controller's own rights, least: never the parameters that name it, never a person's
    // power (approve, bless, govern); it asks the authorizer about people instead.
    let can_i = |args: &[&str]| -> bool {
        let out = plane
            .kubectl()
            .args(["auth", "can-i"])
            .args(args)
            .args(["--as", SERVICE_ACCOUNT_USER])
            .output()
            .expect("kubectl auth can-i");
        String::from_utf8_lossy(&out.stdout).trim() == "yes"
    };
    for (args, want) in [
        (
            &[
                "update",
                "configmap/ledgerops-admission",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
        (
            &[
                "patch",
                "configmap/ledgerops-admission",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
        (
            &[
                "delete",
                "configmap/ledgerops-admission",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
        (
            &["update", "configmap/some-other", "-n", PARAMS_NAMESPACE][..],
            false,
        ),
        (
            &[
                "update",
                "configmap/ledgerops-agentjob-sequence",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            true,
        ),
        (
            &[
                "update",
                "configmap/ledgerops-request-window",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            true,
        ),
        (
            &["create", "subjectaccessreviews.authorization.k8s.io"][..],
            true,
        ),
        (
            &[
                "approve",
                "approvalrequests.ledgerops.dev",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
        (
            &[
                "bless",
                "categorizationrules.ledgerops.dev",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
        (
            &["govern", "budgets.ledgerops.dev", "-n", PARAMS_NAMESPACE][..],
            false,
        ),
        (
            &[
                "govern",
                "configrepos.ledgerops.dev",
                "-n",
                PARAMS_NAMESPACE,
            ][..],
            false,
        ),
    ] {
        assert_eq!(
            can_i(args),
            want,
            "kubectl auth can-i {args:?} as the chart's ServiceAccount"
        );
    }
    forbidden(
        "the controller changing its own admission parameters",
        Api::<ConfigMap>::namespaced(controller.clone(), PARAMS_NAMESPACE)
            .patch(
                PARAMS_NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"controllerUser": "system:serviceaccount:x:y"}})),
            )
            .await,
    );
    // Anyone else is refused by the policies the chart installed.
    let alice = plane.client_as("alice").await.unwrap();
    let mut forged = journal.clone();
    forged.metadata.name = Some("ledgerops-journal-forged".into());
    let edit_everything: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "configmaps-everywhere"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]
    }))
    .unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &edit_everything)
        .await
        .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "alice-configmaps", "namespace": PARAMS_NAMESPACE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "configmaps-everywhere"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    // The API server starts enforcing a new binding within a few seconds: until then, dry runs.
    let alice_configmaps = Api::<ConfigMap>::namespaced(alice, PARAMS_NAMESPACE);
    let dry_run = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let enforced = Instant::now();
    while alice_configmaps.create(&dry_run, &forged).await.is_ok() {
        assert!(
            enforced.elapsed() < Duration::from_secs(30),
            "the journal policy was not enforced within 30s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    forbidden(
        "alice writing a journal ConfigMap",
        alice_configmaps
            .create(&PostParams::default(), &forged)
            .await,
    );

    // Upgrade: a second budget namespace and another log level.
    create_namespace(&admin, "budgets-b").await;
    let took = install(
        &plane,
        "upgrade",
        &["--set=budgetNamespaces={budgets-b}", "--set=logLevel=debug"],
    );
    eprintln!("helm upgrade took {took:?}");
    let deployment = Api::<Deployment>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get(RELEASE)
        .await
        .unwrap();
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    let args = container.args.clone().unwrap();
    assert!(
        args.contains(&"--token-namespace=budgets-b".into()),
        "{args:?}"
    );
    assert!(
        container
            .env
            .iter()
            .flatten()
            .any(|e| e.name == "RUST_LOG" && e.value.as_deref() == Some("debug"))
    );
    for role in ["ledgerops-budget-namespace", "ledgerops-token-namespace"] {
        Api::<RoleBinding>::namespaced(admin.clone(), "budgets-b")
            .get(role)
            .await
            .unwrap_or_else(|e| panic!("the upgrade grants the new namespace {role}: {e}"));
    }

    // A Budget declared before the uninstall.
    let budget: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": "household", "annotations": {PROPOSED_BY: "admin"}},
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "ynab-token"}}
    }))
    .unwrap();
    Api::<Budget>::namespaced(admin.clone(), "budgets-b")
        .create(&PostParams::default(), &budget)
        .await
        .unwrap();

    let start = Instant::now();
    let mut uninstall = helm(&plane);
    uninstall.args(["uninstall", RELEASE, "--namespace", PARAMS_NAMESPACE]);
    output(uninstall).unwrap();
    eprintln!("helm uninstall took {:?}", start.elapsed());
    // What the release ran is gone...
    assert!(
        Api::<Deployment>::namespaced(admin.clone(), PARAMS_NAMESPACE)
            .get_opt(RELEASE)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        Api::<ClusterRole>::all(admin.clone())
            .get_opt("ledgerops-controller")
            .await
            .unwrap()
            .is_none()
    );
    // ...what it guarded stays: the CRDs with every object, the journal, the policies and their
    // parameter (so the journal stays protected).
    let crds = Api::<CustomResourceDefinition>::all(admin.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(
        crds.items
            .iter()
            .filter(|c| c.spec.group == "ledgerops.dev")
            .count(),
        ledgerops::api::crds().len()
    );
    Api::<Budget>::namespaced(admin.clone(), "budgets-b")
        .get("household")
        .await
        .expect("the Budget stays");
    Api::<ConfigMap>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get("ledgerops-journal-test")
        .await
        .expect("the journal stays");
    Api::<ConfigMap>::namespaced(admin.clone(), PARAMS_NAMESPACE)
        .get(PARAMS_NAME)
        .await
        .expect("the policies' parameter stays");
    plane
        .kubectl_ok(&["get", "validatingadmissionpolicy", "ledgerops-configmaps"])
        .expect("the policies stay");
    // Installing again adopts what was kept.
    install(&plane, "install", &[]);
}

#[tokio::test]
async fn ledgerops_runs_as_the_charts_service_account_and_may_do_no_more() {
    let plane = ControlPlane::start().await.unwrap();
    let admin = plane.client().await.unwrap();
    create_namespace(&admin, "household").await;
    create_namespace(&admin, "ledgerops-tokens").await;
    let gitea = Gitea::shared();
    let members = [(gitea.bot(), "admin"), (gitea.writer(), "write")];
    let repo = gitea_api::create_repo("helm-agent", &members).await;
    let values = [
        "--set=budgetNamespaces={household}".to_owned(),
        "--set=tokenNamespaces={ledgerops-tokens}".to_owned(),
        format!("--set=gitea.url={}", gitea.url()),
        "--set=gitea.existingSecret=ledgerops-gitea".into(),
        format!("--set=gitea.botLogin={}", gitea.bot().login()),
        format!("--set=gitea.repositories={{{repo}}}"),
        "--set=gitea.namespace=household".into(),
    ];
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    let took = install(&plane, "install", &values);
    eprintln!("helm install took {took:?}");
    let (controller, kubeconfig) = as_service_account(&plane).await;

    // The chart's own arguments, as the pod would get them.
    let args = chart_args(&admin).await;
    assert!(args.iter().any(|a| a == "--leader-elect"), "{args:?}");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ledgerops = Ledgerops::start_with(
        &plane,
        &args,
        &[
            ("KUBECONFIG", kubeconfig.to_str().unwrap()),
            ("POD_NAME", POD),
            ("LEDGEROPS_GITEA_TOKEN", gitea.bot().token()),
            ("LEDGEROPS_GITEA_WEBHOOK_SECRET", WEBHOOK_SECRET),
        ],
    )
    .await;
    let lease = Api::<Lease>::namespaced(admin.clone(), PARAMS_NAMESPACE);
    eventually("the controller holds the chart's Lease", WAIT, async || {
        let held = lease.get_opt("ledgerops-leader").await.unwrap();
        held.and_then(|l| l.spec?.holder_identity).as_deref() == Some(POD)
    })
    .await;
    let sim = Simulator::start(SimConfig {
        fixture: Some(demo::generate()),
        ..Default::default()
    })
    .await
    .unwrap();
    let s = Scenario {
        client: admin.clone(),
        ns: "household".into(),
        sim,
    };
    // The documented layout: the token where only the controller reads Secrets.
    s.create_budget_with_token_in(
        "household",
        "ledgerops-tokens",
        demo::TOKEN,
        json!({"writes": {"enabled": true}}),
    )
    .await;
    let ready = s.wait_budget("household", BudgetPhase::Ready).await;
    // The chart lets the controller list bindings and ask about their subjects: it tells.
    let protected = ready
        .status
        .as_ref()
        .and_then(|st| st.conditions.iter().find(|c| c.type_ == "TokenProtected"))
        .unwrap_or_else(|| panic!("no TokenProtected condition: {:?}", ready.status));
    assert_eq!(
        (protected.status.as_str(), protected.reason.as_str()),
        ("True", "OnlyOwnersRead"),
        "{}",
        protected.message
    );

    // Seed 002: preview, a person's approval, one bulk PATCH, a journal entry.
    s.create_plan("september", "household", bakery_and_train_plan())
        .await;
    s.wait_plan("september", PlanPhase::AwaitingApproval).await;
    approve_only_request(&s, "september").await;
    let applied = s.wait_plan("september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 1, "one bulk PATCH");
    assert_eq!(s.ynab_category("tx-048").await, Some(category("Groceries")));
    let operation = applied.status.unwrap().operation_id.unwrap();
    s.api::<ConfigMap>()
        .get(&format!("ledgerops-journal-{operation}"))
        .await
        .expect("the journal entry, written as the ServiceAccount");

    // Undo, from the journal.
    s.create_plan(
        "undo-september",
        "household",
        json!({"undoOf": "september"}),
    )
    .await;
    s.wait_plan("undo-september", PlanPhase::AwaitingApproval)
        .await;
    approve_only_request(&s, "undo-september").await;
    s.wait_plan("undo-september", PlanPhase::Applied).await;
    assert_eq!(s.requests(PATCH).await, 2);
    assert_eq!(s.ynab_category("tx-048").await, None);

    // A Transaction converges.
    s.bakery_to_groceries().await;
    s.wait_transaction("bakery", TransactionPhase::AwaitingApproval)
        .await;
    approve_only_request(&s, "bakery").await;
    s.wait_transaction("bakery", TransactionPhase::Converged)
        .await;
    assert_eq!(s.requests(PATCH).await, 3);
    assert_eq!(s.ynab_category("tx-048").await, Some(category("Groceries")));

    // An /agent command, end to end: stored, authorized through Gitea, run, one comment.
    let hook = ledgerops.webhook_url();
    gitea_api::add_hook(&repo, hook, WEBHOOK_SECRET, &["issue_comment"]).await;
    let issue = gitea_api::open_issue(&repo, "status as the chart").await;
    let comment = gitea_api::comment(&repo, gitea.writer(), issue, "/agent status").await;
    let job = gitea_api::job_name(&repo, issue, comment);
    let jobs = s.api::<AgentJob>();
    eventually("the /agent job succeeds", WAIT, async || {
        let found = jobs.get_opt(&job).await.unwrap();
        found.and_then(|j| j.status).and_then(|st| st.phase) == Some(JobPhase::Succeeded)
    })
    .await;
    let bot = gitea.bot().login().to_owned();
    eventually("one comment says done", WAIT, async || {
        let comments = gitea_api::comments(&repo, issue).await;
        let ours: Vec<_> = comments.iter().filter(|c| c.author == bot).collect();
        ours.len() == 1 && ours[0].body.contains(": done.")
    })
    .await;

    // Its Events were published, and nothing it tried was refused.
    let events = Api::<Event>::namespaced(admin.clone(), "household")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reporting_controller.as_deref() == Some("ledgerops")),
        "Events as ledgerops"
    );
    let log = ledgerops.log();
    assert!(
        log.contains("admission policies in force"),
        "the guard saw the chart's policies naming it: {log}"
    );
    // A refusal says "forbidden" (a bare "403" would match timestamps such as 30.403160Z).
    for refusal in ["forbidden", "Forbidden"] {
        assert!(
            !log.contains(refusal),
            "a request was refused ({refusal}): {log}"
        );
    }

    // What it has no business with.
    let elsewhere = "elsewhere";
    create_namespace(&admin, elsewhere).await;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "database", "labels": {"ledgerops.dev/ynab-token": "true"}},
        "stringData": {"token": "not-yours"}
    }))
    .unwrap();
    Api::<Secret>::namespaced(admin.clone(), elsewhere)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    // A Budget there is told why its token is not read, and nothing is asked of the API server.
    let budget: Budget = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Budget",
        "metadata": {"name": "sneaky", "annotations": {PROPOSED_BY: "admin"}},
        "spec": {"planId": demo::PLAN_ID, "tokenSecretRef": {"name": "database"}, "apiUrl": s.sim.api_url()}
    }))
    .unwrap();
    let budgets = Api::<Budget>::namespaced(admin.clone(), elsewhere);
    budgets
        .create(&PostParams::default(), &budget)
        .await
        .unwrap();
    let refused = Instant::now();
    loop {
        let ready = budgets
            .get("sneaky")
            .await
            .unwrap()
            .status
            .and_then(|s| s.conditions.into_iter().find(|c| c.type_ == "Ready"));
        if let Some(c) = ready.filter(|c| c.reason == "TokenNamespaceNotAllowed") {
            assert!(c.message.contains("ledgerops-tokens"), "{}", c.message);
            break;
        }
        assert!(
            refused.elapsed() < Duration::from_secs(30),
            "Budget sneaky was not refused its token"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    forbidden(
        "reading a Secret outside the budget namespaces",
        Api::<Secret>::namespaced(controller.clone(), elsewhere)
            .get("database")
            .await,
    );
    forbidden(
        "listing Secrets cluster-wide",
        Api::<Secret>::all(controller.clone())
            .list(&ListParams::default())
            .await,
    );
    forbidden(
        "reading Secrets where Budgets live but tokens do not",
        Api::<Secret>::namespaced(controller.clone(), "household")
            .list(&ListParams::default())
            .await,
    );
    forbidden(
        "reading Secrets in its own namespace, which holds no Budget",
        Api::<Secret>::namespaced(controller.clone(), PARAMS_NAMESPACE)
            .list(&ListParams::default())
            .await,
    );
    forbidden(
        "writing a ConfigMap outside the budget namespaces",
        Api::<ConfigMap>::namespaced(controller.clone(), elsewhere)
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
            )
            .await,
    );
    forbidden(
        "changing the admission parameter naming itself",
        Api::<ConfigMap>::namespaced(controller.clone(), PARAMS_NAMESPACE)
            .patch(
                PARAMS_NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"controllerUser": "alice"}})),
            )
            .await,
    );
    forbidden(
        "changing a Budget's spec outside the budget namespaces (a ConfigRepo applies only there)",
        Api::<Budget>::namespaced(controller.clone(), elsewhere)
            .patch(
                "household",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"writes": {"enabled": false}}})),
            )
            .await,
    );
    let agent_jobs: Api<DynamicObject> = Api::namespaced_with(
        controller.clone(),
        elsewhere,
        &ApiResource::erase::<AgentJob>(&()),
    );
    let forged: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "AgentJob", "metadata": {"name": "x"}, "spec": {}
    }))
    .unwrap();
    forbidden(
        "creating an AgentJob outside the agent namespace",
        agent_jobs.create(&PostParams::default(), &forged).await,
    );
    let other_lease: Lease =
        serde_json::from_value(json!({"metadata": {"name": "somebody-elses"}})).unwrap();
    lease
        .create(&PostParams::default(), &other_lease)
        .await
        .unwrap();
    forbidden(
        "reading a Lease that is not its own",
        Api::<Lease>::namespaced(controller.clone(), PARAMS_NAMESPACE)
            .get("somebody-elses")
            .await,
    );
    forbidden(
        "taking a Lease in a budget namespace",
        Api::<Lease>::namespaced(controller.clone(), "household")
            .create(&PostParams::default(), &other_lease)
            .await,
    );
    forbidden(
        "creating a Pod",
        Api::<Pod>::namespaced(controller.clone(), "household")
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "x", "image": "x"}]}}))
                    .unwrap(),
            )
            .await,
    );
    forbidden(
        "deleting a CRD",
        Api::<CustomResourceDefinition>::all(controller.clone())
            .delete("budgets.ledgerops.dev", &Default::default())
            .await,
    );
    forbidden(
        "changing a ValidatingAdmissionPolicy",
        plane_delete_policy(&controller).await,
    );
}

async fn plane_delete_policy(client: &Client) -> Result<(), kube::Error> {
    use k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy;
    Api::<ValidatingAdmissionPolicy>::all(client.clone())
        .delete("ledgerops-approvalrequests", &Default::default())
        .await
        .map(|_| ())
}

/// Approves, as `admin` in their own name, the one waiting request of `subject`.
async fn approve_only_request(s: &Scenario, subject: &str) {
    let start = Instant::now();
    let request = loop {
        let waiting = s
            .approval_requests()
            .await
            .into_iter()
            .find(|r| r.spec.subject.name == subject && r.spec.decision.is_none());
        if let Some(request) = waiting {
            break request;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no ApprovalRequest for {subject}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let approve =
        json!({"spec": {"decision": {"verdict": "Approve", "by": "admin", "comment": "fine"}}});
    s.api::<ApprovalRequest>()
        .patch(
            &request.metadata.name.unwrap(),
            &PatchParams::default(),
            &Patch::Merge(&approve),
        )
        .await
        .unwrap();
}
