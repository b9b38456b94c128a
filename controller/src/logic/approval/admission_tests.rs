//! Unit tests of `logic/approval/admission.rs`.

// Tables of cases read best whole, however long.
#![allow(clippy::too_many_lines)]

use serde_json::json;

use super::*;
use crate::api::admission::policies;

fn spec<T: serde::Serialize>(object: &T) -> Value {
    serde_json::to_value(object).unwrap()["spec"].clone()
}

/// Everything as this version ships it, with server defaults filled in, naming `admin`.
fn good() -> Found {
    let sets = policies();
    let with_defaults = |mut v: Value| {
        if let Some(c) = v.get_mut("matchConstraints") {
            c["matchPolicy"] = json!("Equivalent");
            c["namespaceSelector"] = json!({});
            c["objectSelector"] = json!({});
            for rule in c["resourceRules"].as_array_mut().unwrap() {
                rule["scope"] = json!("*");
            }
        }
        v
    };
    Found {
        me: Ok("admin".into()),
        policies: sets
            .iter()
            .map(|s| Compared {
                name: s.name.into(),
                expected: spec(&s.policy),
                live: Ok(Some(with_defaults(spec(&s.policy)))),
            })
            .collect(),
        bindings: sets
            .iter()
            .flat_map(|s| &s.bindings)
            .map(|b| Compared {
                name: b.metadata.name.clone().unwrap(),
                expected: spec(b),
                live: Ok(Some(spec(b))),
            })
            .collect(),
        params: Ok(Some([(CONTROLLER_USER_KEY.into(), "admin".into())].into())),
    }
}

fn live_binding(found: &mut Found, i: usize) -> &mut Value {
    found.bindings[i].live.as_mut().unwrap().as_mut().unwrap()
}

#[test]
fn everything_in_place_is_verified() {
    assert_eq!(verdict(&good()), Ok(()));
}

#[test]
fn each_gap_has_its_own_message() {
    type Change = fn(&mut Found);
    let cases: &[(&str, Change, &str)] = &[
        (
            "identity unknown",
            |f| f.me = Err("403 Forbidden".into()),
            "ledgerops cannot tell which user it runs as (SelfSubjectReview: 403 Forbidden)",
        ),
        (
            "policy missing",
            |f| f.policies[1].live = Ok(None),
            "ValidatingAdmissionPolicy ledgerops-approvalrequest-deletion is not installed",
        ),
        (
            "policy unreadable",
            |f| f.policies[0].live = Err("forbidden".into()),
            "ledgerops cannot read ValidatingAdmissionPolicy ledgerops-approvalrequests (forbidden)",
        ),
        (
            "policy edited",
            |f| {
                let live = f.policies[0].live.as_mut().unwrap().as_mut().unwrap();
                live["validations"][1]["expression"] = json!("true");
            },
            "ValidatingAdmissionPolicy ledgerops-approvalrequests differs from what this version of ledgerops ships (at spec.validations[1].expression)",
        ),
        (
            "policy narrowed by a match condition",
            |f| {
                let live = f.policies[3].live.as_mut().unwrap().as_mut().unwrap();
                live["matchConditions"] = json!([{"name": "x", "expression": "false"}]);
            },
            "ValidatingAdmissionPolicy ledgerops-status differs from what this version of ledgerops ships (at spec.matchConditions)",
        ),
        (
            "policy with a rule removed",
            |f| {
                let live = f.policies[0].live.as_mut().unwrap().as_mut().unwrap();
                live["validations"].as_array_mut().unwrap().pop();
            },
            "(at spec.validations (12 entries instead of 13))",
        ),
        (
            "binding missing",
            |f| f.bindings[2].live = Ok(None),
            "ValidatingAdmissionPolicyBinding ledgerops-agentjobs is not installed, so policy ledgerops-agentjobs checks nothing",
        ),
        (
            "binding for another policy",
            |f| live_binding(f, 0)["policyName"] = json!("other"),
            "ValidatingAdmissionPolicyBinding ledgerops-approvalrequests binds policy \"other\" instead of ledgerops-approvalrequests",
        ),
        (
            "binding that only warns",
            |f| live_binding(f, 3)["validationActions"] = json!(["Warn", "Audit"]),
            "ValidatingAdmissionPolicyBinding ledgerops-status has validationActions [Warn, Audit] without Deny",
        ),
        (
            "binding reading other params",
            |f| live_binding(f, 0)["paramRef"]["namespace"] = json!("alice-ns"),
            "reads its parameters from ConfigMap alice-ns/ledgerops-admission instead of ledgerops-system/ledgerops-admission",
        ),
        (
            "binding that allows without params",
            |f| live_binding(f, 0)["paramRef"]["parameterNotFoundAction"] = json!("Allow"),
            "has parameterNotFoundAction \"Allow\"",
        ),
        (
            "binding narrowed to one namespace",
            |f| {
                live_binding(f, 0)["matchResources"] =
                    json!({"namespaceSelector": {"matchLabels": {"x": "y"}}})
            },
            "ValidatingAdmissionPolicyBinding ledgerops-approvalrequests differs from what this version of ledgerops ships (at spec.matchResources)",
        ),
        (
            "journal binding selecting another label",
            |f| {
                live_binding(f, 4)["matchResources"]["objectSelector"]["matchExpressions"][0]["key"] =
                    json!("other")
            },
            "ValidatingAdmissionPolicyBinding ledgerops-configmaps-journal differs from what this version of ledgerops ships (at spec.matchResources.objectSelector.matchExpressions[0].key)",
        ),
        (
            "params unreadable",
            |f| f.params = Err("forbidden".into()),
            "ledgerops cannot read ConfigMap ledgerops-system/ledgerops-admission (forbidden)",
        ),
        (
            "params missing",
            |f| f.params = Ok(None),
            "ConfigMap ledgerops-system/ledgerops-admission is missing, so the admission policies refuse every write they guard; ledgerops applies no approval until then. Create it with controllerUser: admin",
        ),
        (
            "controllerUser absent",
            |f| f.params = Ok(Some(BTreeMap::new())),
            "names no controllerUser",
        ),
        (
            "controllerUser blank",
            |f| f.params = Ok(Some([(CONTROLLER_USER_KEY.into(), "  ".into())].into())),
            "names no controllerUser",
        ),
        (
            "controllerUser someone else",
            |f| f.params = Ok(Some([(CONTROLLER_USER_KEY.into(), "alice".into())].into())),
            "names alice as the ledgerops controller, but ledgerops runs as admin",
        ),
    ];
    let mut messages = Vec::new();
    for (what, change, expect) in cases {
        let mut found = good();
        change(&mut found);
        let message = verdict(&found).expect_err(what);
        assert!(message.contains(expect), "{what}: {message}");
        assert!(message.contains("ledgerops applies no approval"), "{what}");
        messages.push(message);
    }
    let before = messages.len();
    messages.sort();
    messages.dedup();
    // The two "no controllerUser" cases share their message on purpose.
    assert_eq!(messages.len(), before - 1);
}

#[test]
fn a_trimmed_controller_user_matches() {
    let mut found = good();
    found.params = Ok(Some(
        [(CONTROLLER_USER_KEY.into(), " admin\n".into())].into(),
    ));
    assert_eq!(verdict(&found), Ok(()));
}

#[test]
fn server_defaults_are_no_difference_but_other_values_are() {
    let expected = json!({"a": {"b": [1, 2]}});
    let cases = [
        (json!({"a": {"b": [1, 2]}}), None),
        (
            json!({"a": {"b": [1, 2], "matchPolicy": "Equivalent", "objectSelector": {}}}),
            None,
        ),
        (
            json!({"a": {"b": [1, 2], "matchPolicy": "Exact"}}),
            Some("spec.a.matchPolicy"),
        ),
        (
            json!({"a": {"b": [1, 2], "objectSelector": {"matchLabels": {"x": "y"}}}}),
            Some("spec.a.objectSelector"),
        ),
        (json!({"a": {"b": [1, 3]}}), Some("spec.a.b[1]")),
        (json!({"a": {}}), Some("spec.a.b")),
        (json!({"a": "b"}), Some("spec.a")),
    ];
    for (live, want) in cases {
        assert_eq!(
            first_difference(&expected, &live, "spec").as_deref(),
            want,
            "{live}"
        );
    }
}
