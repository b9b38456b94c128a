//! TEST-ONLY planted bug, so the soak can prove its checker fails when it should. With
//! `LEDGEROPS_TEST_PLANTED_BUG=resend-after-drop`, a bulk update whose connection broke is sent
//! again blindly: the duplicate write that reading YNAB back (adoption) exists to prevent. The
//! module and its one caller exist only with the cargo feature `test-hooks`, which only the
//! suites' crate enables: the image's build checks that its binary holds no trace of it.

/// The environment variable, read at each broken bulk update.
pub const ENV: &str = "LEDGEROPS_TEST_PLANTED_BUG";

/// Whether a bulk update whose outcome is unknown is to be sent again (the planted bug).
pub fn resend_after_drop() -> bool {
    std::env::var(ENV).is_ok_and(|v| v == "resend-after-drop")
}
