//! promtool, built from Prometheus's Go module by `tests/tools/build-promtool.sh`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The `promtool` binary: `$LEDGEROPS_PROMTOOL_BIN/promtool`, or what the build script builds
/// (once per version, then cached).
pub fn binary() -> &'static Path {
    static PROMTOOL: OnceLock<PathBuf> = OnceLock::new();
    PROMTOOL.get_or_init(|| {
        crate::built_tool("LEDGEROPS_PROMTOOL_BIN", "build-promtool.sh", "promtool")
    })
}

/// `promtool check metrics` of an exposition: its complaints, or Ok.
pub fn check_metrics(exposition: &str) -> Result<(), String> {
    check(&["check", "metrics"], exposition)
}

/// `promtool check rules` of a rule file's text (on standard input): its complaints, or Ok.
pub fn check_rules(rules: &str) -> Result<(), String> {
    check(&["check", "rules"], rules)
}

fn check(args: &[&str], input: &str) -> Result<(), String> {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("writing to promtool");
    let out = child.wait_with_output().expect("promtool's answer");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
