//! Serving: binds, accepts and serves each connection with hyper, so that a fault can close a
//! connection without any answer (what a client sees when YNAB's write landed but the
//! response was lost).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tower::ServiceExt;

use crate::control_client::SimControl;
use crate::fixture::Fixture;
use crate::sim::Sim;
use crate::{SimError, routes};

/// Closes the connection a request arrived on, without an answer.
#[derive(Clone, Debug, Default)]
pub struct ConnectionKill(Arc<Notify>);

impl ConnectionKill {
    pub fn fire(&self) {
        self.0.notify_one();
    }
}

#[derive(Debug, Clone)]
pub struct SimConfig {
    pub listen: SocketAddr,
    pub fixture: Option<Fixture>,
    pub state_file: Option<PathBuf>,
    /// Requests per token per rolling hour.
    pub rate_limit: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            fixture: None,
            state_file: None,
            rate_limit: 200,
        }
    }
}

pub struct Simulator;

impl Simulator {
    pub async fn start(config: SimConfig) -> Result<RunningSim, SimError> {
        let sim = Arc::new(Sim::new(
            config.fixture,
            config.state_file,
            config.rate_limit,
        )?);
        let listener = TcpListener::bind(config.listen).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = watch::channel(false);
        let app = routes::app(sim);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_connection(stream, app.clone(), stopped.clone()));
            }
        });
        Ok(RunningSim { addr, accept, stop })
    }
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    app: axum::Router,
    mut stopped: watch::Receiver<bool>,
) {
    let kill = ConnectionKill::default();
    let on_request = kill.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(on_request.clone());
        app.clone().oneshot(req.map(axum::body::Body::new))
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        _ = kill.0.notified() => {}
        _ = stopped.changed() => {}
    }
}

/// A simulator serving on `addr` until stopped or dropped.
pub struct RunningSim {
    addr: SocketAddr,
    accept: JoinHandle<()>,
    stop: watch::Sender<bool>,
}

impl RunningSim {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the stand-in for `https://api.ynab.com/v1`.
    pub fn api_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    pub fn control(&self) -> SimControl {
        SimControl::new(&self.base_url())
    }

    /// Stops accepting and closes every open connection.
    pub fn stop(self) {}
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = self.stop.send(true);
    }
}
