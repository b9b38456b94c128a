// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn schema() -> BTreeMap<String, Value> {
    BTreeMap::from([(
        "v1alpha1".to_owned(),
        json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}),
    )])
}

fn compared(name: &str, live: Result<Option<Value>, String>) -> Compared {
    Compared {
        name: name.to_owned(),
        expected: json!({"policyName": name, "validationActions": ["Deny"]}),
        live,
    }
}

/// A cluster where all is well: the CRD and policy as shipped, the parameter naming the
/// controller, a live Lease, you allowed to propose and not to approve.
fn healthy() -> Observed {
    Observed {
        plugin_version: "0.2.0".into(),
        crds: vec![CrdSeen {
            name: "budgets.ledgerops.dev".into(),
            expected: schema(),
            live: Ok(Some(LiveCrd {
                schemas: schema(),
                established: true,
            })),
        }],
        policies: vec![compared(
            "ledgerops-proposals",
            Ok(Some(
                json!({"policyName": "ledgerops-proposals", "validationActions": ["Deny"]}),
            )),
        )],
        bindings: vec![],
        params: Ok(Some(BTreeMap::from([(
            CONTROLLER_USER_KEY.to_owned(),
            "system:serviceaccount:ledgerops-system:ledgerops".to_owned(),
        )]))),
        leases: Ok(vec![LeaseSeen {
            name: "ledgerops-leader".into(),
            holder: Some("ledgerops-7d9c5b-x2kq4".into()),
            renewed_seconds_ago: Some(3),
            duration_seconds: 15,
        }]),
        budgets: Ok(vec![]),
        powers: vec![("propose".into(), Ok(true)), ("approve".into(), Ok(false))],
    }
}

fn levels(o: &Observed, area: Area) -> Vec<Level> {
    findings(o)
        .into_iter()
        .filter(|f| f.area == area)
        .map(|f| f.level)
        .collect()
}

#[test]
fn a_healthy_cluster_passes_and_says_who_the_controller_is() {
    let f = findings(&healthy());
    assert_eq!(exit_code(&f), 0, "{f:#?}");
    assert!(f.iter().any(|f| {
        f.message
            .contains("the controller is system:serviceaccount:ledgerops-system:ledgerops")
    }));
    assert!(f.iter().any(|f| f.message == "you may not approve here"));
}

#[test]
fn each_area_fails_with_its_own_bit_and_says_what_to_install() {
    type Break = fn(&mut Observed);
    let cases: [(&str, Break, u8, &str); 8] = [
        (
            "CRD missing",
            |o| o.crds[0].live = Ok(None),
            8,
            "CRD budgets.ledgerops.dev is not installed",
        ),
        (
            "CRD of another version",
            |o| {
                if let Ok(Some(live)) = &mut o.crds[0].live {
                    live.schemas.insert(
                        "v1alpha1".into(),
                        json!({"openAPIV3Schema": {"type": "object"}}),
                    );
                }
            },
            8,
            "differs from this plugin's version (at v1alpha1 schema.openAPIV3Schema.properties)",
        ),
        (
            "CRD not established",
            |o| {
                if let Ok(Some(live)) = &mut o.crds[0].live {
                    live.established = false;
                }
            },
            8,
            "not Established",
        ),
        (
            "policy missing",
            |o| o.policies[0].live = Ok(None),
            16,
            "ValidatingAdmissionPolicy ledgerops-proposals is not installed",
        ),
        (
            "policy weakened",
            |o| {
                o.policies[0].live = Ok(Some(
                    json!({"policyName": "ledgerops-proposals", "validationActions": ["Audit"]}),
                ))
            },
            16,
            "differs from this version's (at spec.validationActions[0])",
        ),
        (
            "no parameter",
            |o| o.params = Ok(None),
            16,
            "ConfigMap ledgerops-system/ledgerops-admission, which names the controller's user, is missing",
        ),
        (
            "a parameter naming nobody",
            |o| {
                o.params = Ok(Some(BTreeMap::from([(
                    CONTROLLER_USER_KEY.to_owned(),
                    " ".to_owned(),
                )])))
            },
            16,
            "names no controllerUser",
        ),
        (
            "a stale Lease and a Budget long unsynced",
            |o| {
                o.leases = Ok(vec![LeaseSeen {
                    name: "ledgerops-leader".into(),
                    holder: Some("gone".into()),
                    renewed_seconds_ago: Some(600),
                    duration_seconds: 15,
                }]);
                o.budgets = Ok(vec![BudgetSeen {
                    name: "household".into(),
                    synced_seconds_ago: Some(3_600),
                    interval_seconds: 300,
                    controller_version: None,
                }]);
            },
            32,
            "Budget household last synced 3600 s ago, though its interval is 300 s",
        ),
    ];
    for (what, breaks, bit, says) in cases {
        let mut o = healthy();
        breaks(&mut o);
        let f = findings(&o);
        assert_eq!(exit_code(&f), bit, "{what}: {f:#?}");
        let failed: Vec<&Finding> = f.iter().filter(|f| f.level == Level::Fail).collect();
        assert!(
            failed.iter().any(|f| f.message.contains(says)),
            "{what}: {says:?} in {failed:#?}"
        );
        if bit != 32 {
            assert!(
                failed
                    .iter()
                    .all(|f| f.message.contains("ledgerops crdgen")),
                "{what}: says what to install"
            );
        }
    }
}

#[test]
fn failures_of_several_areas_add_their_bits() {
    let mut o = healthy();
    o.crds[0].live = Ok(None);
    o.policies[0].live = Ok(None);
    assert_eq!(exit_code(&findings(&o)), 8 | 16);
}

#[test]
fn what_your_rights_do_not_reach_is_one_warning_per_area_not_a_failure() {
    let mut o = healthy();
    o.crds.push(o.crds[0].clone());
    for crd in &mut o.crds {
        crd.live = Err("forbidden".into());
    }
    o.policies[0].live = Err("forbidden".into());
    o.params = Err("forbidden".into());
    let f = findings(&o);
    assert_eq!(exit_code(&f), 0, "{f:#?}");
    assert_eq!(levels(&o, Area::Crds), [Level::Warn]);
    assert_eq!(levels(&o, Area::Policies), [Level::Warn]);
    assert!(f.iter().any(|f| f.message.starts_with(
        "cannot check 2 object(s) with your rights, e.g. CRD budgets.ledgerops.dev (forbidden)"
    )));
    // What could be read and is wrong still fails.
    o.crds[1].live = Ok(None);
    assert_eq!(exit_code(&findings(&o)), 8);
}

#[test]
fn without_a_live_lease_the_budgets_tell_whether_the_controller_runs() {
    let synced = |ago: Option<i64>| BudgetSeen {
        name: "household".into(),
        synced_seconds_ago: ago,
        interval_seconds: 300,
        controller_version: None,
    };
    let cases = [
        (Ok(vec![]), Level::Warn),
        (Err("forbidden".to_owned()), Level::Warn),
        (Ok(vec![synced(Some(200))]), Level::Ok),
        // Twice the interval and the grace: a sync may wait for the request pace.
        (Ok(vec![synced(Some(900))]), Level::Ok),
        (Ok(vec![synced(Some(901))]), Level::Fail),
        (Ok(vec![synced(Some(10)), synced(None)]), Level::Fail),
    ];
    for (budgets, want) in cases {
        let mut o = healthy();
        o.leases = Ok(vec![]);
        o.budgets = budgets.clone();
        assert_eq!(levels(&o, Area::Controller), [want], "{budgets:?}");
    }
    let mut unheld = healthy();
    unheld.leases = Ok(vec![LeaseSeen {
        name: "ledgerops-leader".into(),
        holder: None,
        renewed_seconds_ago: Some(1),
        duration_seconds: 15,
    }]);
    assert_eq!(levels(&unheld, Area::Controller), [Level::Warn]);
}

#[test]
fn your_powers_inform_and_never_fail() {
    let mut o = healthy();
    o.powers = vec![
        ("approve".into(), Ok(false)),
        (
            "govern".into(),
            Err("SelfSubjectAccessReview refused".into()),
        ),
    ];
    let f = findings(&o);
    assert_eq!(exit_code(&f), 0);
    assert_eq!(levels(&o, Area::You), [Level::Ok, Level::Warn]);
}

#[test]
fn a_controller_of_another_version_is_said_not_failed() {
    let budget = |version: &str| BudgetSeen {
        name: "household".into(),
        synced_seconds_ago: Some(10),
        interval_seconds: 300,
        controller_version: Some(version.into()),
    };
    let mut o = healthy();
    o.budgets = Ok(vec![budget("0.2.0")]);
    let f = findings(&o);
    assert!(f.iter().any(|f| f.level == Level::Ok
        && f.message == "the controller's version is this plugin's (0.2.0)"));
    o.budgets = Ok(vec![budget("0.1.0"), budget("0.2.0"), budget("0.1.0")]);
    assert_eq!(controller_versions(&o), ["0.1.0", "0.2.0"]);
    let f = findings(&o);
    assert_eq!(exit_code(&f), 0);
    assert!(f.iter().any(|f| {
        f.level == Level::Warn
            && f.message
                .starts_with("the controller is version 0.1.0 and 0.2.0, this plugin 0.2.0")
    }));
}
