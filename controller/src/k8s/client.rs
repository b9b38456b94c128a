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
mod tests {
    use super::*;

    fn request(uri: &str) -> Request<()> {
        Request::builder().uri(uri).body(()).unwrap()
    }

    #[test]
    fn watches_and_leases_are_exempt_everything_else_is_bounded() {
        for uri in [
            "/apis/ledgerops.dev/v1alpha1/transactions?watch=true&resourceVersion=5",
            "/api/v1/namespaces/a/secrets?labelSelector=x&watch=1",
            "/apis/coordination.k8s.io/v1/namespaces/a/leases/ledgerops",
        ] {
            assert!(exempt(&request(uri)), "{uri}");
        }
        for uri in [
            "/apis/ledgerops.dev/v1alpha1/namespaces/a/transactions/t/status",
            "/apis/ledgerops.dev/v1alpha1/transactions?limit=500",
            "/api/v1/namespaces/a/configmaps?watch=false",
            "/api/v1/namespaces/a/configmaps/watch=true",
        ] {
            assert!(!exempt(&request(uri)), "{uri}");
        }
    }

    /// Answers at once with an empty body.
    struct Instant;

    struct Empty;

    impl Body for Empty {
        type Data = &'static [u8];
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
            Poll::Ready(None)
        }
    }

    impl Service<Request<()>> for Instant {
        type Response = Response<Empty>;
        type Error = std::convert::Infallible;
        type Future = std::future::Ready<Result<Response<Empty>, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            std::future::ready(Ok(Response::new(Empty)))
        }
    }

    #[tokio::test]
    async fn a_request_past_the_bound_waits_for_a_body_to_be_done_with() {
        use futures::FutureExt;
        let bound = Bounded {
            permits: Arc::new(Semaphore::new(IN_FLIGHT)),
        };
        let mut service = bound.layer(Instant);
        let write = "/apis/ledgerops.dev/v1alpha1/namespaces/a/transactions/t/status";
        let mut held: Vec<_> = (0..IN_FLIGHT)
            .map(|_| {
                service
                    .call(request(write))
                    .now_or_never()
                    .unwrap()
                    .unwrap()
            })
            .collect();
        let mut waiting = service.call(request(write));
        assert!((&mut waiting).now_or_never().is_none(), "past the bound");
        let watch = "/apis/ledgerops.dev/v1alpha1/transactions?watch=true";
        assert!(service.call(request(watch)).now_or_never().is_some());
        // A body read to its end gives its permit back, as does a body dropped.
        let mut first = held.pop().unwrap().into_body();
        let end = futures::future::poll_fn(|cx| Pin::new(&mut first).poll_frame(cx));
        assert!(end.now_or_never().unwrap().is_none());
        let answered = waiting.now_or_never().expect("a permit came back").unwrap();
        held.push(answered);
        let mut next = service.call(request(write));
        assert!((&mut next).now_or_never().is_none());
        drop(held.pop());
        assert!(next.now_or_never().is_some());
    }
}
