//! `version`: this plugin's, the controller's (as the Budgets' status names it), and whether the
//! CRDs and admission policies are this version's.

use serde_json::json;

use crate::cluster::Cluster;
use crate::error::PluginError;
use crate::logic::check::{self, Area, Level};
use crate::logic::table;
use crate::output::Printer;

const PLUGIN: &str = env!("CARGO_PKG_VERSION");

/// `--client`: nothing is read from the cluster.
pub fn client(out: &Printer) -> Result<u8, PluginError> {
    out.text(&format!("plugin   {PLUGIN}\n"));
    out.value(&json!({"plugin": PLUGIN}))?;
    Ok(0)
}

pub async fn version(cluster: &Cluster, out: &Printer) -> Result<u8, PluginError> {
    let observed = cluster.observe(super::now()).await;
    let findings = check::findings(&observed);
    let controllers = check::controller_versions(&observed);
    let controller = if controllers.is_empty() {
        "unknown: no Budget here has a status from a controller that names its version".to_owned()
    } else {
        controllers.join(", ")
    };
    // The first finding of an area that is not Ok, else its Ok summary.
    let summary = |area: Area| {
        let of_area: Vec<_> = findings.iter().filter(|f| f.area == area).collect();
        of_area
            .iter()
            .find(|f| f.level != Level::Ok)
            .or(of_area.first())
            .map(|f| f.message.clone())
            .unwrap_or_default()
    };
    let (crds, policies) = (summary(Area::Crds), summary(Area::Policies));
    let rows = vec![
        vec!["plugin".to_owned(), PLUGIN.to_owned()],
        vec!["controller".to_owned(), controller],
        vec!["CRDs".to_owned(), crds.clone()],
        vec!["policies".to_owned(), policies.clone()],
    ];
    out.text(&table::render(&["PART", "VERSION"], &rows, out.style));
    out.value(&json!({
        "plugin": PLUGIN,
        "controller": controllers,
        "crds": crds,
        "policies": policies,
    }))?;
    Ok(0)
}
