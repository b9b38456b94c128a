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
