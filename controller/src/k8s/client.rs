//! The process's API server client: kube's own stack, with at most [`IN_FLIGHT`] requests under
//! way besides watches and Lease requests.
//!
//! kube's client speaks HTTP/1.1, where every request under way holds a TLS connection of its
//! own: the status writes of 10,000 Transactions released by one batch opened about 5,000
//! connections, whose buffers were most of the heap. Bounded, they queue in memory instead and
//! reuse a few connections. Watches stay open for minutes and the leader Lease's renewal decides
//! whether this replica may act, so neither ever queues behind bulk writes.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{Layer, Service};

/// Requests under way at once, watches and Lease requests not counted.
pub const IN_FLIGHT: usize = 32;

/// A client for `config` with the bound.
pub fn build(config: kube::Config) -> Result<kube::Client, kube::Error> {
    let bound = Bounded {
        permits: Arc::new(Semaphore::new(IN_FLIGHT)),
    };
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&bound)
        .build())
}

/// Whether `request` is exempt from the bound: a watch, or anything about Leases.
fn exempt<B>(request: &Request<B>) -> bool {
    let uri = request.uri();
    let watch = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    });
    watch || uri.path().starts_with("/apis/coordination.k8s.io/")
}

#[derive(Clone)]
struct Bounded {
    permits: Arc<Semaphore>,
}

impl<S> Layer<S> for Bounded {
    type Service = BoundedService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BoundedService {
            inner: Arc::new(Mutex::new(inner)),
            permits: self.permits.clone(),
        }
    }
}

/// Calls the inner service only once a permit is held, so that a request waiting for one holds
/// nothing of the stack below (its futures, a connection): shared, since the call comes later.
struct BoundedService<S> {
    inner: Arc<Mutex<S>>,
    permits: Arc<Semaphore>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for BoundedService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ReqBody: Send + 'static,
{
    type Response = Response<Permitted<ResBody>>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    /// Readiness is asked of the inner service when each request is sent.
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let permits = (!exempt(&request)).then(|| self.permits.clone());
        let inner = self.inner.clone();
        Box::pin(async move {
            let permit = match permits {
                Some(p) => Some(
                    p.acquire_owned()
                        .await
                        .expect("the semaphore is never closed"),
                ),
                None => None,
            };
            let mut request = Some(request);
            // Ready and called under one lock, so no other call takes the readiness in between.
            let response = std::future::poll_fn(|cx| {
                let mut service = inner.lock().expect("client service lock");
                service
                    .poll_ready(cx)
                    .map_ok(|()| service.call(request.take().expect("called once")))
            })
            .await?
            .await?;
            // The connection is busy until the body is read: the permit goes with the body.
            Ok(response.map(|body| Permitted { body, permit }))
        })
    }
}

/// A response body holding its request's permit until it is dropped.
pub struct Permitted<B> {
    body: B,
    permit: Option<OwnedSemaphorePermit>,
}

impl<B: Body + Unpin> Body for Permitted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = frame {
            // Read to the end: the connection is free again.
            this.permit = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
