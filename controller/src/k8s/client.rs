//! The API server connection: every request of the controller multiplexed on HTTP/2, as
//! client-go does.
//!
//! kube's own client offers HTTP/1.1 only, so each request in flight holds a TLS connection of
//! its own. When 10,000 Transactions settle in one YNAB batch, their status writes run at once
//! and opened about 5,000 connections: their read buffers alone were 80 MB of the controller's
//! resident memory. On one HTTP/2 connection they are streams, which the API server bounds by
//! its `SETTINGS_MAX_CONCURRENT_STREAMS` and the client queues beyond.

use std::time::Duration;

use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::{Client as HttpClient, connect::HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kube::client::{Body, ConfigExt, RustlsTlsError, retry::RetryPolicy};
use rustls::pki_types::ServerName;
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};

/// How often an idle connection is pinged: a watch that sees no change for minutes still reads
/// the pongs, so the connection's read timeout never cuts every stream at once, and a dead
/// connection is found within a ping.
const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// A client for `config` that speaks HTTP/2 where the server offers it (any kube-apiserver over
/// TLS), and HTTP/1.1 otherwise. Authentication, impersonation, extra headers, timeouts and
/// kube's retry of 429/503/504 are those of `kube::Client::try_from(config)`.
pub fn connect(config: kube::Config) -> Result<kube::Client, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let mut tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config.rustls_client_config()?)
        .https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = ServerName::try_from(name.clone())
            .map_err(|e| kube::Error::RustlsTls(RustlsTlsError::InvalidServerName(e)))?;
        tls = tls.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let mut connector = TimeoutConnector::new(tls.enable_all_versions().wrap_connector(http));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: HttpClient<_, Body> = HttpClient::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(KEEP_ALIVE)
        .http2_keep_alive_while_idle(true)
        .build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(http);
    Ok(kube::Client::new(service, config.default_namespace))
}
