//! The API server's own count of the requests it served (`apiserver_request_total` on its
//! `/metrics`), for benchmarks that say where their time goes: read it before and after.

use kube::Client;

/// Which requests to count.
#[derive(Clone, Copy, Debug)]
pub enum Requests {
    /// Every write to any resource.
    Writes,
    /// Writes to Transactions themselves, not their status.
    TransactionWrites,
    /// Every request about one AgentJob: reads and status writes too, not lists or watches.
    AgentJobs,
}

/// A count of requests (not dry runs) the API server has served.
#[derive(Clone, Copy, Debug)]
pub struct ApiRequests(u64);

impl ApiRequests {
    pub async fn read(client: &Client, which: Requests) -> ApiRequests {
        let request = http::Request::get("/metrics")
            .body(Vec::new())
            .expect("a request");
        let text = client
            .request_text(request)
            .await
            .expect("the API server's /metrics");
        ApiRequests(text.lines().filter_map(|l| counted(l, which)).sum())
    }

    /// The requests served since `earlier`.
    pub fn since(&self, earlier: &ApiRequests) -> u64 {
        self.0 - earlier.0
    }
}

/// The count of an `apiserver_request_total` line, if it counts requests `which`.
fn counted(line: &str, which: Requests) -> Option<u64> {
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
        Requests::Writes => write,
        Requests::TransactionWrites => {
            write && label("resource")? == "transactions" && label("subresource")?.is_empty()
        }
        Requests::AgentJobs => {
            label("resource")? == "agentjobs" && !matches!(label("verb")?, "LIST" | "WATCH")
        }
    };
    let real = label("dry_run").unwrap_or_default().is_empty();
    (wanted && real).then(|| value.trim().parse::<f64>().ok().map(|v| v as u64))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_requests_asked_for() {
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
        assert_eq!(counted(&create, Requests::TransactionWrites), Some(7));
        assert_eq!(counted(&status, Requests::TransactionWrites), None);
        assert_eq!(counted(&status, Requests::Writes), Some(7));
        assert_eq!(counted(&event, Requests::Writes), Some(7));
        assert_eq!(counted(&dry, Requests::Writes), None);
        assert_eq!(counted(&read, Requests::Writes), None);
        let job_read = line("GET", "agentjobs", "", "");
        let job_status = line("PUT", "agentjobs", "status", "");
        let job_watch = line("WATCH", "agentjobs", "", "");
        assert_eq!(counted(&job_read, Requests::AgentJobs), Some(7));
        assert_eq!(counted(&job_status, Requests::AgentJobs), Some(7));
        assert_eq!(counted(&job_watch, Requests::AgentJobs), None);
        let job_list = line("LIST", "agentjobs", "", "");
        assert_eq!(counted(&job_list, Requests::AgentJobs), None);
        assert_eq!(counted(&read, Requests::AgentJobs), None);
        assert_eq!(
            counted("apiserver_request_duration_seconds 3", Requests::Writes),
            None
        );
    }
}
