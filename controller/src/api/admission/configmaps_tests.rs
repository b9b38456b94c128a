use super::*;

/// That the names are those the controller reads is checked where it reads them
/// (`k8s::journal`, `agent::store`): `api` imports no adapter, not even in tests.
#[test]
fn protects_what_the_controller_reads() {
    for (_, expression) in MATCH_CONDITIONS.iter().chain(VARIABLES) {
        if expression.contains("agentjob-sequence") {
            assert!(expression.contains(&format!("'{SEQUENCE_CONFIGMAP}'")));
        }
    }
}
