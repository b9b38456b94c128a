//! The test-only paths (the soak's planted bug, the agent's pause points) are in the suites'
//! binary, built with the cargo feature `test-hooks`: their variables' names are found there.
//! The image's build (`tests/tools/build-image-context.sh`) checks that the shipped binary holds
//! neither, which this makes meaningful: the same search finds them where they are compiled in.

use ledgerops_e2e::controller;

#[test]
fn the_suites_binary_holds_the_test_only_paths_the_shipped_one_must_not() {
    let binary = std::fs::read(controller::binary()).expect("the suites' binary");
    for marker in ["LEDGEROPS_TEST_PLANTED_BUG", "LEDGEROPS_TEST_PAUSE"] {
        assert!(
            binary.windows(marker.len()).any(|w| w == marker.as_bytes()),
            "{marker} is not in {}: renamed? Change tests/tools/build-image-context.sh too",
            controller::binary().display()
        );
    }
}
