use super::*;
use crate::logic::budget::api_url::ApiUrlAllowlist;

/// Each running reconcile is a spawned task this size, many at once waiting on the API
/// server. Nested awaits double sizes unless boxed.
#[tokio::test]
async fn a_reconcile_task_stays_small() {
    let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
    let client = kube::Client::try_from(config.clone()).unwrap();
    let watches = Watches::new(&client, None);
    let urls = ApiUrlAllowlist::parse(["http://127.0.0.1:*/v1"]).unwrap();
    let ctx = Arc::new(Context::new(client, config, &watches, urls));
    let tx: Transaction = serde_json::from_value(serde_json::json!({
        "apiVersion": "ledgerops.dev/v1alpha1", "kind": "Transaction",
        "metadata": {"name": "t", "namespace": "n"},
        "spec": {"budgetRef": {"name": "b"}, "transactionId": "tx", "memo": "m"}
    }))
    .unwrap();
    let future = reconcile(Arc::new(tx), ctx);
    let size = std::mem::size_of_val(&future);
    assert!(size <= 1536, "a Transaction reconcile is {size} bytes");
}
