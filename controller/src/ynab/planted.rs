//! TEST-ONLY planted bug, so the soak can prove its checker fails when it should. With the
//! cargo feature `test-hooks` and `LEDGEROPS_TEST_PLANTED_BUG=resend-after-drop`, a bulk update
//! whose connection broke is sent again blindly: the duplicate write that reading YNAB back
//! (adoption) exists to prevent. Without the feature the check is a constant `false`.

/// The environment variable, read at each broken bulk update.
pub const ENV: &str = "LEDGEROPS_TEST_PLANTED_BUG";

/// Whether a bulk update whose outcome is unknown is to be sent again (the planted bug).
pub fn resend_after_drop() -> bool {
    cfg!(feature = "test-hooks") && std::env::var(ENV).is_ok_and(|v| v == "resend-after-drop")
}
