//! The API server's own count of the write requests it served (`apiserver_request_total` on its
//! `/metrics`), for benchmarks that say where their time goes: read it before and after.

use kube::Client;

/// Which writes to count.
#[derive(Clone, Copy, Debug)]
pub enum Writes {
    /// Every write to any resource.
    All,
    /// Writes to Transactions themselves, not their status.
    Transactions,
}

/// A count of writes (not dry runs) the API server has served.
#[derive(Clone, Copy, Debug)]
pub struct ApiWrites(u64);

impl ApiWrites {
    pub async fn read(client: &Client, which: Writes) -> ApiWrites {
        let request = http::Request::get("/metrics")
            .body(Vec::new())
            .expect("a request");
        let text = client
            .request_text(request)
            .await
            .expect("the API server's /metrics");
        ApiWrites(text.lines().filter_map(|l| counted(l, which)).sum())
    }

    /// The writes served since `earlier`.
    pub fn since(&self, earlier: &ApiWrites) -> u64 {
        self.0 - earlier.0
    }
}

/// The count of an `apiserver_request_total` line, if it counts writes `which`.
fn counted(line: &str, which: Writes) -> Option<u64> {
    let rest = line.strip_prefix("apiserver_request_total{")?;
    let (labels, value) = rest.split_once("} ")?;
    let label = |key: &str| {
        labels
            .split(',')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix("=\"")?.strip_suffix('"'))
    };
    let write = matches!(
        label("verb")?,
        "APPLY" | "PATCH" | "POST" | "PUT" | "DELETE"
    );
    let wanted = match which {
        Writes::All => true,
        Writes::Transactions => {
            label("resource")? == "transactions" && label("subresource")?.is_empty()
        }
    };
    let real = label("dry_run").unwrap_or_default().is_empty();
    (write && wanted && real).then(|| value.trim().parse::<f64>().ok().map(|v| v as u64))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_writes_asked_for() {
        let line = |verb: &str, resource: &str, sub: &str, dry: &str| {
            format!(
                "apiserver_request_total{{code=\"201\",component=\"apiserver\",dry_run=\"{dry}\",group=\"ledgerops.dev\",resource=\"{resource}\",scope=\"resource\",subresource=\"{sub}\",verb=\"{verb}\",version=\"v1alpha1\"}} 7"
            )
        };
        let create = line("POST", "transactions", "", "");
        let status = line("PATCH", "transactions", "status", "");
        let event = line("POST", "events", "", "");
        let dry = line("POST", "transactions", "", "All");
        let read = line("GET", "transactions", "", "");
        assert_eq!(counted(&create, Writes::Transactions), Some(7));
        assert_eq!(counted(&status, Writes::Transactions), None);
        assert_eq!(counted(&status, Writes::All), Some(7));
        assert_eq!(counted(&event, Writes::All), Some(7));
        assert_eq!(counted(&dry, Writes::All), None);
        assert_eq!(counted(&read, Writes::All), None);
        assert_eq!(
            counted("apiserver_request_duration_seconds 3", Writes::All),
            None
        );
    }
}
