//! WASIp3 components: those that export `wasi:http/handler@0.3.0-rc-2026-03-15`, served the
//! way Spin v4.0.2 serves them.
//!
//! Spin v4.0.2 (`crates/trigger-http/src/wasip3.rs`, `server.rs`) hands each request of such a
//! component to wasmtime-wasi-http's `ProxyHandler`, which keeps an instance and gives it more
//! requests: up to 128 in its life, up to 16 at once, and keeps it 1 s once idle
//! (`--max-instance-reuse-count`, `--max-instance-concurrent-reuse-count`,
//! `--idle-instance-timeout`). So, unlike a WASIp2 component, a WASIp3 component's memory is
//! shared by the requests one instance serves. Its store is Spin's: the memory limit, and an
//! epoch deadline that is never reached (`crates/core/src/store.rs`); a request that runs past
//! the request timeout is ended by the handler, which drops the instance once its other
//! requests have finished or timed out (a busy loop only at twice the timeout). Spin v4.0.2's
//! request timeout for WASIp3 is off unless `--request-timeout` is given; this host's applies
//! (see [`crate::limits`]), with the same `504` as for a WASIp2 component.
//!
//! Linked for them, beside everything a WASIp2 component gets: `wasi:http@0.3`, WASI 0.3 and
//! `spin:variables@3.0.0` (spin-sdk 6's variables). The other WASIp3 forms of Spin's own
//! interfaces (`spin:key-value@3.0.0`, `spin:sqlite@3.1.0`'s async functions) are not yet: a
//! component that imports them is refused at start-up, naming the import.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::oneshot;
use wasmtime::component::Accessor;
use wasmtime::{Engine, Store};
use wasmtime_wasi_http::handler::{HandlerState, Proxy, ProxyHandler, StoreBundle};
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::p3::bindings::http::types::ErrorCode as P3ErrorCode;
use wasmtime_wasi_http::p3::{Request as P3Request, WasiHttpCtxView, WasiHttpView};

use crate::component::ComponentConfig;
use crate::limits::InstanceReuse;
use crate::state::{Services, State};

/// What a WASIp3 component's instances are made from.
pub(crate) struct P3Component {
    pub engine: Engine,
    pub config: Arc<ComponentConfig>,
    pub services: Services,
    pub max_memory: usize,
    pub request_timeout: Option<Duration>,
    pub reuse: InstanceReuse,
}

impl HandlerState for P3Component {
    type StoreData = State;

    fn new_store(&self, _req_id: Option<u64>) -> wasmtime::Result<StoreBundle<State>> {
        let state = State::new(self.config.clone(), &self.services, self.max_memory)
            .map_err(wasmtime::Error::from_anyhow)?;
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        // Epoch interruption is on for the engine; like Spin's store, never reach it.
        store.set_epoch_deadline(u64::MAX / 2);
        Ok(StoreBundle {
            store,
            write_profile: Box::new(|_| ()),
        })
    }

    fn request_timeout(&self) -> Duration {
        self.request_timeout.unwrap_or(Duration::MAX)
    }

    fn idle_instance_timeout(&self) -> Duration {
        self.reuse.idle_timeout
    }

    fn max_instance_reuse_count(&self) -> usize {
        self.reuse.max_requests
    }

    fn max_instance_concurrent_reuse_count(&self) -> usize {
        self.reuse.max_concurrent
    }

    fn handle_worker_error(&self, error: wasmtime::Error) {
        tracing::warn!("component `{}`: instance ended: {error:?}", self.config.id);
    }
}

/// What a WASIp3 guest answered: its response, or why it has none. The channel closes without
/// an answer when the instance is dropped first (it timed out, or could not be made).
pub(crate) type Answer = oneshot::Receiver<anyhow::Result<http::Response<HyperOutgoingBody>>>;

/// Queues `request` for one of `handler`'s instances.
pub(crate) fn handle<B>(handler: &ProxyHandler<P3Component>, request: http::Request<B>) -> Answer
where
    B: Body<Data = Bytes, Error = hyper::Error> + Send + 'static,
{
    let (parts, body) = request.into_parts();
    let body = body.map_err(|e| P3ErrorCode::InternalError(Some(e.to_string())));
    let (request, request_io) = P3Request::from_http(http::Request::from_parts(parts, body));
    let (answer, answered) = oneshot::channel();
    handler.spawn(
        None,
        Box::new(move |store: &Accessor<State>, guest: &Proxy| {
            Box::pin(async move {
                let (sent, finished) = oneshot::channel();
                let response = call(store, guest, request, request_io)
                    .await
                    .map(|response| {
                        response.map(|body| {
                            NotifyOnDrop {
                                body: body.map_err(p2_error_code),
                                dropped: Some(sent),
                            }
                            .boxed_unsync()
                        })
                    });
                // The guest may still be writing the body: keep its instance running until
                // hyper has sent it, or dropped it.
                if answer.send(response).is_ok() {
                    let _ = finished.await;
                }
            })
        }),
    );
    answered
}

async fn call(
    store: &Accessor<State>,
    guest: &Proxy,
    request: P3Request,
    request_io: impl Future<Output = Result<(), P3ErrorCode>> + Send + 'static,
) -> anyhow::Result<http::Response<http_body_util::combinators::UnsyncBoxBody<Bytes, P3ErrorCode>>>
{
    let Proxy::P3(guest) = guest else {
        anyhow::bail!("a WASIp2 instance in the WASIp3 handler");
    };
    let request = store.with(|mut store| store.data_mut().http().table.push(request))?;
    let response = guest
        .wasi_http_handler()
        .call_handle(store, request)
        .await
        .map_err(anyhow::Error::from)?
        .map_err(|code| anyhow::anyhow!("the component answered with an error: {code:?}"))?;
    let response = store.with(|mut store| store.data_mut().http().table.delete(response))?;
    store
        .with(|mut store| response.into_http_with_getter(&mut store, request_io, p3_http))
        .map_err(anyhow::Error::from)
        .context("the component's response is not valid HTTP")
}

fn p3_http(state: &mut State) -> WasiHttpCtxView<'_> {
    state.http()
}

/// The host's responses carry WASIp2 error codes; a WASIp3 body error becomes the same kind
/// where there is one.
fn p2_error_code(code: P3ErrorCode) -> ErrorCode {
    match code {
        P3ErrorCode::ConnectionTerminated => ErrorCode::ConnectionTerminated,
        P3ErrorCode::HttpResponseBodySize(size) => ErrorCode::HttpResponseBodySize(size),
        P3ErrorCode::InternalError(message) => ErrorCode::InternalError(message),
        other => ErrorCode::InternalError(Some(format!("{other:?}"))),
    }
}

/// A response body that says when hyper is done with it.
struct NotifyOnDrop<B> {
    body: B,
    dropped: Option<oneshot::Sender<()>>,
}

impl<B> Drop for NotifyOnDrop<B> {
    fn drop(&mut self) {
        if let Some(dropped) = self.dropped.take() {
            let _ = dropped.send(());
        }
    }
}

impl<B: Body + Unpin> Body for NotifyOnDrop<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
