//! Whether the admission policies that make an approval trustworthy are in force, decided from
//! what the API server holds. Without them anyone could create a decided ApprovalRequest, decide
//! in someone else's name or forge a status, so ledgerops applies no approval until they are.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::admission::{CONTROLLER_USER_KEY, DENY, PARAMS_NAME, PARAMS_NAMESPACE};

/// One object as read: its `spec`, `None` when it does not exist, or why it could not be read.
pub type Read = Result<Option<Value>, String>;

/// A policy or binding this version ships (its `spec`), and the live one of the same name.
#[derive(Clone, Debug)]
pub struct Compared {
    pub name: String,
    pub expected: Value,
    pub live: Read,
}

/// What one check read from the API server.
#[derive(Clone, Debug)]
pub struct Found {
    /// The user ledgerops runs as (from a SelfSubjectReview), or why it is unknown.
    pub me: Result<String, String>,
    pub policies: Vec<Compared>,
    pub bindings: Vec<Compared>,
    /// The `data` of the parameter ConfigMap, `None` when it does not exist, or why it could not
    /// be read.
    pub params: Result<Option<BTreeMap<String, String>>, String>,
}

const REAPPLY: &str = "re-apply the policies of this ledgerops version with `ledgerops crdgen | kubectl apply --server-side -f -` (the admission-*.yaml files in crds/)";
const UNTIL: &str = "ledgerops applies no approval until then";

/// `Ok` when every policy and binding is installed as this version ships it and the parameter
/// ConfigMap names ledgerops' own user; otherwise what is wrong and what to do, for people.
pub fn verdict(found: &Found) -> Result<(), String> {
    let me = found.me.as_deref().map_err(|e| {
        format!(
            "ledgerops cannot tell which user it runs as (SelfSubjectReview: {e}), so it cannot check that the admission policies name it; {UNTIL}. Check its credentials and that the API server serves authentication.k8s.io/v1."
        )
    })?;
    for policy in &found.policies {
        let Some(live) = installed("ValidatingAdmissionPolicy", policy)? else {
            return Err(format!(
                "ValidatingAdmissionPolicy {} is not installed, so the API server does not check who writes ledgerops objects; {UNTIL}. Install it: {REAPPLY}.",
                policy.name
            ));
        };
        if let Some(path) = first_difference(&policy.expected, live, "spec") {
            return Err(format!(
                "ValidatingAdmissionPolicy {} differs from what this version of ledgerops ships (at {path}); {UNTIL}. To fix it, {REAPPLY}.",
                policy.name
            ));
        }
    }
    for binding in &found.bindings {
        let policy = text(&binding.expected, &["policyName"]).unwrap_or_default();
        let Some(live) = installed("ValidatingAdmissionPolicyBinding", binding)? else {
            return Err(format!(
                "ValidatingAdmissionPolicyBinding {} is not installed, so policy {policy} checks nothing; {UNTIL}. Install it: {REAPPLY}.",
                binding.name
            ));
        };
        check_binding(&binding.name, policy, live)?;
        if let Some(path) = first_difference(&binding.expected, live, "spec") {
            return Err(format!(
                "ValidatingAdmissionPolicyBinding {} differs from what this version of ledgerops ships (at {path}); {UNTIL}. To fix it, {REAPPLY}.",
                binding.name
            ));
        }
    }
    let params = match &found.params {
        Err(e) => {
            return Err(format!(
                "ledgerops cannot read ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} ({e}); {UNTIL}. Let its user get ConfigMaps in namespace {PARAMS_NAMESPACE}."
            ));
        }
        Ok(None) => {
            return Err(format!(
                "ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} is missing, so the admission policies refuse every write they guard; {UNTIL}. Create it with {CONTROLLER_USER_KEY}: {me} (see examples/admission-params.yaml)."
            ));
        }
        Ok(Some(data)) => data,
    };
    let named = params
        .get(CONTROLLER_USER_KEY)
        .map(|u| u.trim())
        .unwrap_or_default();
    if named.is_empty() {
        return Err(format!(
            "ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} names no {CONTROLLER_USER_KEY}, so the admission policies let nobody record Gitea decisions or write status; {UNTIL}. Set {CONTROLLER_USER_KEY}: {me}, the user ledgerops runs as."
        ));
    }
    if named != me {
        return Err(format!(
            "ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} names {named} as the ledgerops controller, but ledgerops runs as {me}: the policies give {named} the controller's rights; {UNTIL}. Set {CONTROLLER_USER_KEY}: {me}, or run ledgerops as {named}."
        ));
    }
    Ok(())
}

/// The live spec, `None` when missing; a read failure is the verdict.
fn installed<'a>(kind: &str, compared: &'a Compared) -> Result<Option<&'a Value>, String> {
    match &compared.live {
        Ok(live) => Ok(live.as_ref()),
        Err(e) => Err(format!(
            "ledgerops cannot read {kind} {} ({e}); {UNTIL}. Let its user get, list and watch validatingadmissionpolicies and validatingadmissionpolicybindings.",
            compared.name
        )),
    }
}

/// The parts of a binding that decide whether it enforces anything, each with its own message.
fn check_binding(name: &str, policy: &str, live: &Value) -> Result<(), String> {
    let bound = text(live, &["policyName"]).unwrap_or_default();
    if bound != policy {
        return Err(format!(
            "ValidatingAdmissionPolicyBinding {name} binds policy {bound:?} instead of {policy}, so {policy} checks nothing; {UNTIL}. To fix it, {REAPPLY}."
        ));
    }
    let actions: Vec<&str> = live
        .get("validationActions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !actions.contains(&DENY) {
        return Err(format!(
            "ValidatingAdmissionPolicyBinding {name} has validationActions [{}] without Deny, so the API server lets every request policy {policy} forbids through; {UNTIL}. Set validationActions: [Deny]: {REAPPLY}.",
            actions.join(", ")
        ));
    }
    let namespace = text(live, &["paramRef", "namespace"]).unwrap_or_default();
    let params = text(live, &["paramRef", "name"]).unwrap_or_default();
    if (namespace, params) != (PARAMS_NAMESPACE, PARAMS_NAME) {
        return Err(format!(
            "ValidatingAdmissionPolicyBinding {name} reads its parameters from ConfigMap {namespace}/{params} instead of {PARAMS_NAMESPACE}/{PARAMS_NAME}, so someone other than ledgerops' installer decides who the controller is; {UNTIL}. Point paramRef at {PARAMS_NAMESPACE}/{PARAMS_NAME}: {REAPPLY}."
        ));
    }
    let missing = text(live, &["paramRef", "parameterNotFoundAction"]).unwrap_or_default();
    if missing != DENY {
        return Err(format!(
            "ValidatingAdmissionPolicyBinding {name} has parameterNotFoundAction {missing:?}: without ConfigMap {PARAMS_NAMESPACE}/{PARAMS_NAME} the API server would skip every check of policy {policy}; {UNTIL}. Set it to Deny: {REAPPLY}."
        ));
    }
    Ok(())
}

fn text<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_str)
}

/// Fields the API server fills in when they are left out, with the value it fills in.
fn is_server_default(key: &str, value: &Value) -> bool {
    match key {
        "matchPolicy" => value == "Equivalent",
        "scope" => value == "*",
        "namespaceSelector" | "objectSelector" => value.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// Where `live` departs from `expected` (a path such as `spec.validations[2].expression`), or
/// `None`. A field the API server filled in with its default is no departure; anything else
/// added, removed or changed is.
pub fn first_difference(expected: &Value, live: &Value, path: &str) -> Option<String> {
    match (expected, live) {
        (Value::Object(want), Value::Object(have)) => {
            for (key, value) in want {
                let here = format!("{path}.{key}");
                match have.get(key) {
                    Some(found) => {
                        if let Some(diff) = first_difference(value, found, &here) {
                            return Some(diff);
                        }
                    }
                    None => return Some(here),
                }
            }
            have.iter()
                .find(|(key, value)| !want.contains_key(*key) && !is_server_default(key, value))
                .map(|(key, _)| format!("{path}.{key}"))
        }
        (Value::Array(want), Value::Array(have)) => {
            if want.len() != have.len() {
                return Some(format!(
                    "{path} ({} entries instead of {})",
                    have.len(),
                    want.len()
                ));
            }
            want.iter()
                .zip(have)
                .enumerate()
                .find_map(|(i, (w, h))| first_difference(w, h, &format!("{path}[{i}]")))
        }
        _ if expected == live => None,
        _ => Some(path.to_owned()),
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
