//! What kstatus — the health check of Flux, Argo CD, kpt and Config Sync — concludes about an
//! object as the API server holds it, computed by the real library (sigs.k8s.io/cli-utils), built
//! by `tests/tools/build-kstatus.sh`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, NamespaceResourceScope};
use kube::{Client, Resource};
use serde::Deserialize;

/// The `kstatus` program: `$LEDGEROPS_KSTATUS_BIN/kstatus`, or what the build script builds.
pub fn binary() -> &'static Path {
    static KSTATUS: OnceLock<PathBuf> = OnceLock::new();
    KSTATUS
        .get_or_init(|| crate::built_tool("LEDGEROPS_KSTATUS_BIN", "build-kstatus.sh", "kstatus"))
}

/// kstatus' verdict on one object.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Verdict {
    /// Current, InProgress, Failed, Terminating, NotFound or Unknown.
    pub status: String,
    pub message: String,
}

/// kstatus' verdict on the object `name` of kind `K` in `namespace`, read raw from the API
/// server (every field, not only those ledgerops' types know).
pub async fn of<K>(client: &Client, namespace: &str, name: &str) -> Verdict
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    let resource = ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let object = api
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("reading {}/{name}: {e}", resource.kind));
    compute(&serde_json::to_vec(&object).expect("an object serializes"))
}

/// kstatus' verdict on one object given as JSON.
pub fn compute(json: &[u8]) -> Verdict {
    let mut child = Command::new(binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting kstatus");
    child
        .stdin
        .take()
        .expect("kstatus' stdin")
        .write_all(json)
        .expect("writing to kstatus");
    let out = child.wait_with_output().expect("running kstatus");
    assert!(
        out.status.success(),
        "kstatus failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "kstatus printed {}: {e}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Waits (up to 60 s) until kstatus says `want` of the object, and returns its verdict; panics
/// with the last verdict otherwise. The object's status is the controller's to write, so a test
/// asserts the state first (its phase) and then what a Flux user would read of it.
pub async fn expect<K>(client: &Client, namespace: &str, name: &str, want: &str) -> Verdict
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let verdict = of::<K>(client, namespace, name).await;
        if verdict.status == want {
            return verdict;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "kstatus says {verdict:?} of {}/{name}, not {want}",
            K::kind(&())
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
