use super::*;

/// k8s-openapi drops fields it does not know: a misspelt field would vanish silently.
#[test]
fn typed_objects_keep_every_field() {
    for (def, set) in definitions().iter().zip(policies()) {
        let (policy, bindings) = render(def);
        assert_eq!(serde_json::to_value(&set.policy).unwrap(), policy);
        assert_eq!(bindings.len(), set.bindings.len());
        for (typed, json) in set.bindings.iter().zip(bindings) {
            assert_eq!(serde_json::to_value(typed).unwrap(), json);
        }
    }
}

#[test]
fn variables_are_defined_before_use() {
    for def in definitions() {
        let all: Vec<_> = SHARED.iter().chain(def.variables).collect();
        for (i, (name, _)) in all.iter().enumerate() {
            let reference = format!("variables.{name}");
            for (later, expression) in &all[..i] {
                assert!(
                    !expression.contains(&reference),
                    "{}: variable {later} uses {name}, defined after it",
                    def.name
                );
            }
        }
        for rule in def.rules {
            for text in [rule.expression, rule.message_expression] {
                for used in text.split("variables.").skip(1) {
                    let name: String = used
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .collect();
                    assert!(
                        all.iter().any(|(n, _)| *n == name),
                        "{}: a rule uses variables.{name}, which is not defined",
                        def.name
                    );
                }
            }
        }
    }
}

#[test]
fn every_rule_is_forbidden_with_a_message_and_every_binding_denies() {
    for set in policies() {
        let spec = set.policy.spec.unwrap();
        assert_eq!(spec.failure_policy.as_deref(), Some("Fail"), "{}", set.name);
        for v in spec.validations.unwrap() {
            assert_eq!(v.reason.as_deref(), Some("Forbidden"));
            assert!(v.message.is_some_and(|m| !m.is_empty()));
            assert!(v.message_expression.is_some());
        }
        assert!(!set.bindings.is_empty(), "{} has no binding", set.name);
        for binding in set.bindings {
            let spec = binding.spec.unwrap();
            assert_eq!(spec.policy_name.as_deref(), Some(set.name));
            assert_eq!(spec.validation_actions, Some(vec![DENY.to_owned()]));
            let param_ref = spec.param_ref.unwrap();
            assert_eq!(param_ref.name.as_deref(), Some(PARAMS_NAME));
            assert_eq!(param_ref.namespace.as_deref(), Some(PARAMS_NAMESPACE));
            assert_eq!(param_ref.parameter_not_found_action.as_deref(), Some(DENY));
        }
    }
}

#[test]
fn policy_and_binding_names_and_files_are_unique() {
    let sets = policies();
    let mut names: Vec<String> = sets.iter().map(|s| s.name.to_owned()).collect();
    names.extend(
        sets.iter()
            .flat_map(|s| &s.bindings)
            .map(|b| format!("binding {}", b.metadata.name.as_deref().unwrap())),
    );
    names.extend(sets.iter().map(|s| s.file()));
    let before = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), before, "{names:?}");
}
