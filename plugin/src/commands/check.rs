//! `check`: a preflight of the cluster, one line per finding, the exit code naming what failed.

use serde_json::json;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::check::{self, Level};
use crate::logic::table;
use crate::output::Printer;

pub async fn check(cluster: &Cluster, out: &Printer) -> Result<u8, PluginError> {
    let observed = cluster.observe(super::now()).await;
    let findings = check::findings(&observed);
    let code = check::exit_code(&findings);
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            let level = match f.level {
                Level::Ok => out.style.good("ok"),
                Level::Warn => out.style.bold("warn"),
                Level::Fail => out.style.bad("FAIL"),
            };
            vec![format!("{:?}", f.area), level, f.message.clone()]
        })
        .collect();
    out.text(&table::render(
        &["AREA", "RESULT", "DETAIL"],
        &rows,
        out.style,
    ));
    out.text(if code == 0 {
        "\nledgerops can work here.\n"
    } else {
        "\nledgerops cannot work here until the FAIL lines are fixed.\n"
    });
    out.value(&json!({"findings": findings, "exitCode": code}))?;
    Ok(code)
}
