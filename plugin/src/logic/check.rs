//! `check`: whether ledgerops can work here, decided from what the cluster shows. The CRDs and
//! the admission policies are compared with those this plugin's version ships (the same
//! comparison the controller's start-up guard makes); whether the controller runs is read from
//! its leader Lease and from the Budgets it syncs; your powers come from the authorizer.

use std::collections::BTreeMap;

use ledgerops::api::admission::{CONTROLLER_USER_KEY, PARAMS_NAME, PARAMS_NAMESPACE};
use ledgerops::logic::approval::admission::{Compared, first_difference};
use serde::Serialize;
use serde_json::Value;

/// What a finding is about; a failure of each sets its own bit of the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Area {
    Crds,
    Policies,
    Controller,
    /// Your own powers here: information, never a failure.
    You,
}

impl Area {
    /// The exit code's bit for a failure here (0: none).
    pub fn bit(self) -> u8 {
        match self {
            Area::Crds => 8,
            Area::Policies => 16,
            Area::Controller => 32,
            Area::You => 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Level {
    Ok,
    /// Cannot tell, or works with a caveat: not a failure.
    Warn,
    Fail,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub area: Area,
    pub level: Level,
    pub message: String,
}

/// A CRD this version ships: its name, each version's schema by version name, and what the
/// cluster holds (`None`: not installed; `Err`: could not be read).
#[derive(Clone, Debug)]
pub struct CrdSeen {
    pub name: String,
    pub expected: BTreeMap<String, Value>,
    pub live: Result<Option<LiveCrd>, String>,
}

#[derive(Clone, Debug)]
pub struct LiveCrd {
    pub schemas: BTreeMap<String, Value>,
    pub established: bool,
}

/// A leader Lease: who holds it and how many seconds ago it was renewed, against its term.
#[derive(Clone, Debug)]
pub struct LeaseSeen {
    pub name: String,
    pub holder: Option<String>,
    pub renewed_seconds_ago: Option<i64>,
    pub duration_seconds: i64,
}

/// A Budget that is not suspended: how long ago it last synced, against its interval.
#[derive(Clone, Debug)]
pub struct BudgetSeen {
    pub name: String,
    pub synced_seconds_ago: Option<i64>,
    pub interval_seconds: i64,
    /// The version of the controller that last wrote its status.
    pub controller_version: Option<String>,
}

/// Everything `check` read.
#[derive(Clone, Debug)]
pub struct Observed {
    /// This plugin's version.
    pub plugin_version: String,
    pub crds: Vec<CrdSeen>,
    pub policies: Vec<Compared>,
    pub bindings: Vec<Compared>,
    pub params: Result<Option<BTreeMap<String, String>>, String>,
    pub leases: Result<Vec<LeaseSeen>, String>,
    pub budgets: Result<Vec<BudgetSeen>, String>,
    /// Each power (`propose`, `approve`, …) with whether the authorizer grants it to you here.
    pub powers: Vec<(String, Result<bool, String>)>,
}

const INSTALL: &str = "install or upgrade the chart (`helm upgrade --install ledgerops charts/ledgerops -n ledgerops-system`), or apply this version's CRDs and policies: `ledgerops crdgen | kubectl apply --server-side -f -`";

/// Late beyond this many seconds past a Budget's interval: a sync may wait for the request pace.
const SYNC_GRACE_SECONDS: i64 = 300;

pub fn findings(o: &Observed) -> Vec<Finding> {
    let mut out = crds(&o.crds);
    out.extend(policies(o));
    out.push(controller(o));
    out.extend(versions(o));
    out.extend(powers(&o.powers));
    out
}

/// 0 when nothing failed; otherwise the bits of the areas that did.
pub fn exit_code(findings: &[Finding]) -> u8 {
    findings
        .iter()
        .filter(|f| f.level == Level::Fail)
        .fold(0, |code, f| code | f.area.bit())
}

fn finding(area: Area, level: Level, message: String) -> Finding {
    Finding {
        area,
        level,
        message,
    }
}

fn crds(seen: &[CrdSeen]) -> Vec<Finding> {
    let mut bad = Vec::new();
    let mut unread = Vec::new();
    for crd in seen {
        let problem =
            match &crd.live {
                Err(e) => {
                    unread.push(format!("CRD {} ({e})", crd.name));
                    None
                }
                Ok(None) => Some(format!("CRD {} is not installed", crd.name)),
                Ok(Some(live)) if !live.established => {
                    Some(format!("CRD {} is not Established yet", crd.name))
                }
                Ok(Some(live)) => crd.expected.iter().find_map(|(version, schema)| {
                    match live.schemas.get(version) {
                        None => Some(format!("CRD {} does not serve {version}", crd.name)),
                        Some(have) => first_difference(schema, have, "schema").map(|at| {
                            format!(
                                "CRD {} differs from this plugin's version (at {version} {at})",
                                crd.name
                            )
                        }),
                    }
                }),
            };
        bad.extend(problem);
    }
    let mut out: Vec<Finding> = bad
        .into_iter()
        .map(|m| finding(Area::Crds, Level::Fail, format!("{m}: {INSTALL}")))
        .collect();
    out.extend(unreadable(Area::Crds, &unread));
    if out.is_empty() {
        out.push(finding(
            Area::Crds,
            Level::Ok,
            format!(
                "all {} CRDs installed as this version ships them",
                seen.len()
            ),
        ));
    }
    out
}

/// One warning for the objects `check` could not read (most often: your rights do not reach
/// cluster-scoped objects), naming the first.
fn unreadable(area: Area, unread: &[String]) -> Option<Finding> {
    let first = unread.first()?;
    Some(finding(
        area,
        Level::Warn,
        format!(
            "cannot check {} object(s) with your rights, e.g. {first}: a cluster admin's `kubectl ledgerops check` can",
            unread.len()
        ),
    ))
}

fn policies(o: &Observed) -> Vec<Finding> {
    let mut bad = Vec::new();
    let mut unread = Vec::new();
    for (kind, list) in [
        ("ValidatingAdmissionPolicy", &o.policies),
        ("ValidatingAdmissionPolicyBinding", &o.bindings),
    ] {
        for c in list.iter() {
            match &c.live {
                Err(e) => unread.push(format!("{kind} {} ({e})", c.name)),
                Ok(None) => bad.push(format!("{kind} {} is not installed", c.name)),
                Ok(Some(live)) => {
                    bad.extend(first_difference(&c.expected, live, "spec").map(|at| {
                        format!("{kind} {} differs from this version's (at {at})", c.name)
                    }))
                }
            }
        }
    }
    let mut user = None;
    match &o.params {
        Err(e) => unread.push(format!("ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} ({e})")),
        Ok(None) => bad.push(format!(
            "ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME}, which names the controller's user, is missing"
        )),
        Ok(Some(data)) => match data.get(CONTROLLER_USER_KEY).map(|u| u.trim()) {
            Some(named) if !named.is_empty() => user = Some(named.to_owned()),
            _ => bad.push(format!(
                "ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} names no {CONTROLLER_USER_KEY}"
            )),
        },
    }
    let mut out: Vec<Finding> = bad
        .into_iter()
        .map(|m| {
            finding(
                Area::Policies,
                Level::Fail,
                format!("{m}: ledgerops applies no approval until it is fixed; {INSTALL}"),
            )
        })
        .collect();
    out.extend(unreadable(Area::Policies, &unread));
    if out.is_empty() {
        out.push(finding(
            Area::Policies,
            Level::Ok,
            format!(
                "all {} admission policies and {} bindings in force; the controller is {}",
                o.policies.len(),
                o.bindings.len(),
                user.unwrap_or_default()
            ),
        ));
    }
    out
}

fn controller(o: &Observed) -> Finding {
    let leases = o.leases.as_deref().unwrap_or_default();
    if let Some(lease) = leases.iter().find(|l| {
        l.holder.as_deref().is_some_and(|h| !h.is_empty())
            && l.renewed_seconds_ago
                .is_some_and(|ago| ago <= 2 * l.duration_seconds)
    }) {
        return finding(
            Area::Controller,
            Level::Ok,
            format!(
                "the controller runs: {} holds Lease {PARAMS_NAMESPACE}/{}, renewed {} s ago",
                lease.holder.as_deref().unwrap_or_default(),
                lease.name,
                lease.renewed_seconds_ago.unwrap_or_default()
            ),
        );
    }
    let budgets = match &o.budgets {
        Ok(b) => b.as_slice(),
        Err(e) => {
            return finding(
                Area::Controller,
                Level::Warn,
                format!(
                    "cannot tell whether the controller runs: no live leader Lease, and the Budgets cannot be read ({e})"
                ),
            );
        }
    };
    let late: Vec<&BudgetSeen> = budgets
        .iter()
        .filter(|b| {
            b.synced_seconds_ago
                .is_none_or(|ago| ago > 2 * b.interval_seconds + SYNC_GRACE_SECONDS)
        })
        .collect();
    match (budgets.len(), late.first()) {
        (0, _) => finding(
            Area::Controller,
            Level::Warn,
            "cannot tell whether the controller runs: no live leader Lease and no Budget here to show it syncing".to_owned(),
        ),
        (n, None) => finding(
            Area::Controller,
            Level::Ok,
            format!("the controller runs: each of the {n} Budgets here synced within its interval"),
        ),
        (_, Some(b)) => finding(
            Area::Controller,
            Level::Fail,
            match b.synced_seconds_ago {
                Some(ago) => format!(
                    "Budget {} last synced {ago} s ago, though its interval is {} s: is the controller running? `kubectl -n {PARAMS_NAMESPACE} get pods,leases` and its log say",
                    b.name, b.interval_seconds
                ),
                None => format!(
                    "Budget {} has never synced: is the controller running, and does it watch this namespace? `kubectl -n {PARAMS_NAMESPACE} get pods,leases` and its log say",
                    b.name
                ),
            },
        ),
    }
}

/// The controller versions the Budgets here name, each once, in order.
pub fn controller_versions(o: &Observed) -> Vec<String> {
    let mut seen: Vec<String> = o
        .budgets
        .iter()
        .flatten()
        .filter_map(|b| b.controller_version.clone())
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

/// Whether the controller (as the Budgets' status names it) is this plugin's version: a skew
/// works, but the two may read fields differently, so it is said.
fn versions(o: &Observed) -> Option<Finding> {
    let seen = controller_versions(o);
    if seen.is_empty() {
        return None;
    }
    let plugin = &o.plugin_version;
    Some(if seen.iter().all(|v| v == plugin) {
        finding(
            Area::Controller,
            Level::Ok,
            format!("the controller's version is this plugin's ({plugin})"),
        )
    } else {
        finding(
            Area::Controller,
            Level::Warn,
            format!(
                "the controller is version {}, this plugin {plugin}: upgrade the one behind (the chart, or the plugin with `kubectl krew upgrade ledgerops`)",
                seen.join(" and ")
            ),
        )
    })
}

fn powers(powers: &[(String, Result<bool, String>)]) -> Vec<Finding> {
    powers
        .iter()
        .map(|(power, may)| {
            let (level, message) = match may {
                Ok(true) => (Level::Ok, format!("you may {power} here")),
                Ok(false) => (Level::Ok, format!("you may not {power} here")),
                Err(e) => (
                    Level::Warn,
                    format!("cannot tell whether you may {power} ({e})"),
                ),
            };
            finding(Area::You, level, message)
        })
        .collect()
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
