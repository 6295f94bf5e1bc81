//! The HTTP trigger: accept connections, route, run one fresh instance per request, within the
//! limits of [`crate::limits`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot::error::RecvError;
use tokio::sync::watch;
use tokio::task::JoinSet;
use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi_http::handler::ProxyHandler;
use wasmtime_wasi_http::p2::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::app::{App, Handler};
use crate::component::ComponentConfig;
use crate::deadline::Deadline;
use crate::p3::P3Component;
use crate::routes::RouteMatch;
use crate::state::State;

/// A host serving on a socket until [`RunningHost::shutdown`].
pub struct RunningHost {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningHost {
    /// The address it listens on (the real port when started on port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting (new connections are refused), lets every connection finish the request
    /// it is serving and closes idle ones, then returns. Connections still open after
    /// [`crate::Limits::shutdown_timeout`] are dropped.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Waits until the server stops (it only stops on shutdown).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

/// Binds `listen` and serves `app` on it in a background task.
pub async fn serve(app: App, listen: SocketAddr) -> anyhow::Result<RunningHost> {
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(accept_loop(Arc::new(app), listener, stopped));
    Ok(RunningHost { addr, stop, task })
}

/// Resolves once shutdown has been asked for (at once if it already was).
async fn stopping(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

async fn accept_loop(app: Arc<App>, listener: TcpListener, mut stopped: watch::Receiver<bool>) {
    let mut connections = JoinSet::new();
    let mut backoff = AcceptBackoff::default();
    loop {
        // At the cap, accept nothing until a connection closes: excess clients wait in the
        // kernel's listen backlog (and are refused by it once it is full).
        if connections.len() >= app.limits.max_connections {
            tokio::select! {
                _ = connections.join_next() => continue,
                _ = stopping(&mut stopped) => break,
            }
        }
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            _ = stopping(&mut stopped) => break,
        };
        match accepted {
            Ok((stream, client)) => {
                backoff.succeeded();
                connections.spawn(serve_connection(
                    app.clone(),
                    stream,
                    client,
                    stopped.clone(),
                ));
            }
            Err(e) => {
                // EMFILE, ENFILE, ENOBUFS… retrying at once would spin a core until a
                // descriptor frees up.
                let pause = backoff.failed();
                tracing::warn!("accept failed: {e}; accepting again in {pause:?}");
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = stopping(&mut stopped) => break,
                }
            }
        }
    }
    drop(listener);
    let open = connections.len();
    if open > 0 {
        tracing::info!("finishing the requests of {open} open connection(s)");
    }
    let limit = app.limits.shutdown_timeout();
    let drained = tokio::time::timeout(limit, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            "{} connection(s) still open {limit:?} after shutdown began; closing them",
            connections.len()
        );
        connections.shutdown().await;
    }
}

/// The pause after a failed accept: 10 ms, doubling up to 1 s, back to 10 ms after a success.
#[derive(Debug)]
struct AcceptBackoff {
    next: Duration,
}

impl AcceptBackoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    fn failed(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        pause
    }

    fn succeeded(&mut self) {
        self.next = Self::FIRST;
    }
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        AcceptBackoff { next: Self::FIRST }
    }
}

async fn serve_connection(
    app: Arc<App>,
    stream: TcpStream,
    client: SocketAddr,
    mut stopped: watch::Receiver<bool>,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(app.limits.header_read_timeout)
        .keep_alive(true);
    let service = hyper::service::service_fn(move |req| {
        let app = app.clone();
        async move { handle(app, req, client).await }
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = stopping(&mut stopped) => {
            // Finish the request in flight, if any, then close; an idle connection closes now.
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!("connection from {client}: {e}");
    }
}

fn plain(status: StatusCode, text: &str) -> Response<HyperOutgoingBody> {
    let body = Full::new(Bytes::from(text.to_string()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut res = Response::new(body);
    *res.status_mut() = status;
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

async fn handle(
    app: Arc<App>,
    req: Request<Incoming>,
    client: SocketAddr,
) -> Result<Response<HyperOutgoingBody>, &'static str> {
    Ok(match run(app, req, client).await {
        Ok(res) => res,
        Err(HandleError::Client(status, text)) => plain(status, &text),
        Err(HandleError::OutOfTime) => plain(StatusCode::GATEWAY_TIMEOUT, "Gateway Timeout\n"),
        Err(HandleError::Guest(e)) => {
            tracing::error!("{e:?}");
            plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error\n")
        }
        Err(HandleError::NoResponse(reason)) => {
            // An error from the service makes hyper close the connection, as Spin's does when
            // its handler fails before routing (`trigger-http`'s `set_req_uri`).
            tracing::warn!("{client}: {reason}; closing the connection without a response");
            return Err(reason);
        }
    })
}

enum HandleError {
    Client(StatusCode, String),
    Guest(anyhow::Error),
    /// The request deadline passed before the component set a response (see [`Deadline`]).
    OutOfTime,
    /// Spin answers nothing: the connection is closed.
    NoResponse(&'static str),
}

impl From<anyhow::Error> for HandleError {
    fn from(e: anyhow::Error) -> Self {
        HandleError::Guest(e)
    }
}

impl From<wasmtime::Error> for HandleError {
    fn from(e: wasmtime::Error) -> Self {
        HandleError::Guest(e.into())
    }
}

/// The request as the guest sees it under Spin: an absolute URI whose authority comes from the
/// request target or the `Host` header (which must agree when both are given; without one Spin
/// answers nothing), the hop-by-hop headers removed, and Spin's `spin-*` headers added.
fn guest_request<B>(
    req: Request<B>,
    route: &RouteMatch,
    client: SocketAddr,
) -> Result<Request<B>, HandleError> {
    let (mut parts, body) = req.into_parts();
    let from_header = match parts.headers.get(http::header::HOST) {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|h| h.parse::<http::uri::Authority>().ok())
                .ok_or(HandleError::NoResponse(
                    "'Host' header contains an invalid authority",
                ))?,
        ),
    };
    let host = match (from_header, parts.uri.authority()) {
        (None, None) => {
            return Err(HandleError::NoResponse(
                "no 'Host' header present in request",
            ));
        }
        (Some(a), None) => a.to_string(),
        (None, Some(a)) => a.to_string(),
        (Some(a1), Some(a2)) if a1 == *a2 => a1.to_string(),
        (Some(_), Some(_)) => {
            return Err(HandleError::NoResponse(
                "authority in 'Host' header does not match authority in URI",
            ));
        }
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let full_url = format!("http://{host}{path_and_query}");
    parts.uri = full_url.parse().map_err(|_| {
        HandleError::Client(
            StatusCode::BAD_REQUEST,
            "malformed request target or Host\n".into(),
        )
    })?;
    for name in [
        http::header::HOST,
        http::header::CONNECTION,
        http::header::TRANSFER_ENCODING,
    ] {
        parts.headers.remove(name);
    }
    let spin_headers = [
        ("spin-full-url", full_url.as_str()),
        ("spin-path-info", route.path_info.as_str()),
        ("spin-matched-route", route.raw_route.as_str()),
        ("spin-component-route", route.component_route.as_str()),
        ("spin-raw-component-route", route.raw_route.as_str()),
        ("spin-base-path", "/"),
    ];
    for (name, value) in spin_headers {
        let value = HeaderValue::from_str(value).map_err(|_| {
            HandleError::Client(
                StatusCode::BAD_REQUEST,
                "request path is not valid in a header\n".into(),
            )
        })?;
        parts.headers.insert(name, value);
    }
    parts.headers.insert(
        "spin-client-addr",
        HeaderValue::from_str(&client.to_string()).context("client address")?,
    );
    Ok(Request::from_parts(parts, body))
}

async fn run(
    app: Arc<App>,
    req: Request<Incoming>,
    client: SocketAddr,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
    let arrived = tokio::time::Instant::now();
    let deadline = app
        .limits
        .request_timeout
        .map(|t| Arc::new(Deadline::new(t)));
    let path = req.uri().path().to_string();
    let Some(route) = app.router.route(&path) else {
        return Err(HandleError::Client(
            StatusCode::NOT_FOUND,
            "Not Found\n".into(),
        ));
    };
    let component = app
        .components
        .get(&route.component)
        .context("routed to a component that was not loaded")?;

    let req = guest_request(capped_request(&app, req).await?, &route, client)?;
    let response = match &component.handler {
        Handler::P2(pre) => {
            run_p2(
                &app,
                pre,
                &component.config,
                req,
                deadline.as_ref(),
                &route.component,
                &path,
            )
            .await?
        }
        Handler::P3(handler) => {
            run_p3(
                &app,
                handler,
                req,
                deadline.as_ref(),
                &route.component,
                &path,
            )
            .await?
        }
    };
    let response = capped_response(&app, response, arrived, &route.component, &path)?;
    Ok(match deadline {
        Some(deadline) => {
            deadline.answered();
            response.map(|body| deadline.watch(body))
        }
        None => response,
    })
}

/// A WASIp2 component's request: a new instance, run until it has set its response (the body
/// may stream on, until the deadline at most).
async fn run_p2(
    app: &App,
    pre: &ProxyPre<State>,
    config: &Arc<ComponentConfig>,
    req: Request<GuestBody>,
    deadline: Option<&Arc<Deadline>>,
    component_id: &str,
    path: &str,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
    let state = State::new(
        config.clone(),
        &app.services,
        app.limits.max_instance_memory,
    )?;
    let mut store = Store::new(&app.engine, state);
    store.limiter(|s| &mut s.limits);
    set_deadline(&mut store, deadline);
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let incoming = store
        .data_mut()
        .http()
        .new_incoming_request(Scheme::Http, req)?;
    let out = store.data_mut().http().new_response_outparam(sender)?;
    let pre = pre.clone();
    let (logged_component, logged_path) = (component_id.to_owned(), path.to_owned());
    // The guest may keep streaming the body after it has set the response, so it runs on its own,
    // until the deadline at most.
    let guard = deadline.cloned();
    let task = tokio::spawn(async move {
        let work = async {
            let proxy = pre.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, incoming, out)
                .await
        };
        let end = match guard {
            Some(deadline) => match deadline.guard(work).await {
                Some(result) => GuestEnd::from_result(result),
                // Stuck in a host call (a database that never answers) past the deadline.
                None => GuestEnd::OutOfTime,
            },
            None => GuestEnd::from_result(work.await),
        };
        tracing::debug!(
            "component `{logged_component}` on {logged_path}: peak memory {} bytes",
            store.data().limits.peak
        );
        end
    });
    // `None`: the deadline passed first (the guest task ends itself at the same deadline).
    let answered = match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline.answer_by(), receiver)
            .await
            .ok(),
        None => Some(receiver.await),
    };
    settle(app, component_id, path, answered, task).await
}

/// A WASIp3 component's request: queued for a reused instance ([`crate::p3`]).
async fn run_p3(
    app: &App,
    handler: &ProxyHandler<P3Component>,
    req: Request<GuestBody>,
    deadline: Option<&Arc<Deadline>>,
    component_id: &str,
    path: &str,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
    let answer = crate::p3::handle(handler, req);
    let answered = match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline.answer_by(), answer)
            .await
            .ok(),
        None => Some(answer.await),
    };
    match answered {
        Some(Ok(Ok(response))) => Ok(response),
        Some(Ok(Err(e))) => Err(HandleError::Guest(
            e.context(format!("component `{component_id}` failed on {path}")),
        )),
        // The handler ends an instance whose request outlived the timeout (the same as the
        // deadline's) whichever of the two timers fires first.
        Some(Err(_)) if deadline.is_some_and(|d| d.answer_by() <= tokio::time::Instant::now()) => {
            Err(out_of_time(app, component_id, path))
        }
        Some(Err(_)) => Err(HandleError::Guest(anyhow::anyhow!(
            "component `{component_id}` failed on {path}: its instance ended before it answered"
        ))),
        None => Err(out_of_time(app, component_id, path)),
    }
}

/// A request body as the guest reads it: as it arrives, or, under a body limit
/// ([`Limits::max_body_bytes`], set by `--emulate`), whole and no larger than the limit (else
/// `413` before any component runs).
///
/// [`Limits::max_body_bytes`]: crate::limits::Limits::max_body_bytes
async fn capped_request(
    app: &App,
    req: Request<Incoming>,
) -> Result<Request<GuestBody>, HandleError> {
    let Some(max) = app.limits.max_body_bytes else {
        return Ok(req.map(|body| body.boxed_unsync()));
    };
    let too_large = || {
        HandleError::Client(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {max} bytes, the emulated platform's limit\n"),
        )
    };
    let declared = req
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let (parts, body) = req.into_parts();
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let bytes = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Err(e) => {
            return Err(HandleError::Client(
                StatusCode::BAD_REQUEST,
                format!("cannot read the request body: {e}\n"),
            ));
        }
    };
    let body = Full::new(bytes)
        .map_err(|never| -> hyper::Error { match never {} })
        .boxed_unsync();
    Ok(Request::from_parts(parts, body))
}

/// What the guest reads its request body from.
pub(crate) type GuestBody = http_body_util::combinators::UnsyncBoxBody<Bytes, hyper::Error>;

/// The response as sent under a body limit: one whose declared length passes it is replaced by
/// a `500`, and any other is cut off at the limit and at the request's wall-clock end (the
/// request timeout after it `arrived`).
fn capped_response(
    app: &App,
    response: Response<HyperOutgoingBody>,
    arrived: tokio::time::Instant,
    component: &str,
    path: &str,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
    let (Some(max), Some(timeout)) = (app.limits.max_body_bytes, app.limits.request_timeout) else {
        return Ok(response);
    };
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(length) = declared.filter(|n| *n > max) {
        return Err(HandleError::Guest(anyhow::anyhow!(
            "component `{component}` on {path} answered {length} bytes, over the emulated \
             platform's limit of {max}"
        )));
    }
    let what = format!("component `{component}` on {path}");
    let until = arrived + timeout;
    Ok(response.map(|body| crate::emulate::cap_response(body, max, until, what)))
}

/// The response, or why there is none: the guest answered with an error, ran out of time, or
/// ended without setting a response (then its task says why).
async fn settle<E: std::fmt::Debug>(
    app: &App,
    component: &str,
    path: &str,
    answered: Option<Result<Result<Response<HyperOutgoingBody>, E>, RecvError>>,
    task: tokio::task::JoinHandle<GuestEnd>,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
    let out_of_time = || out_of_time(app, component, path);
    match answered {
        Some(Ok(Ok(res))) => Ok(res),
        Some(Ok(Err(code))) => Err(HandleError::Guest(anyhow::anyhow!(
            "component `{}` answered with an error: {code:?}",
            component
        ))),
        None => Err(out_of_time()),
        Some(Err(_)) => {
            let reason = match task.await {
                Ok(GuestEnd::Finished) => anyhow::anyhow!("guest never set a response"),
                Ok(GuestEnd::Failed(e)) => e.into(),
                Ok(GuestEnd::OutOfTime) => return Err(out_of_time()),
                Err(e) => anyhow::anyhow!(e),
            };
            Err(HandleError::Guest(reason.context(format!(
                "component `{}` failed on {path}",
                component
            ))))
        }
    }
}

/// The `504` of a component that set no response before the request deadline.
fn out_of_time(app: &App, component: &str, path: &str) -> HandleError {
    tracing::warn!(
        "component `{component}` on {path} ran out of time ({:?}, --request-timeout)",
        app.limits.request_timeout.unwrap_or_default()
    );
    HandleError::OutOfTime
}

/// How a guest's run ended.
enum GuestEnd {
    Finished,
    Failed(wasmtime::Error),
    /// Interrupted by the request deadline.
    OutOfTime,
}

impl GuestEnd {
    fn from_result(result: wasmtime::Result<()>) -> Self {
        match result {
            Ok(()) => GuestEnd::Finished,
            Err(e) if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) => GuestEnd::OutOfTime,
            Err(e) => GuestEnd::Failed(e),
        }
    }
}

/// Every epoch tick, guest code yields to the runtime (so a loop cannot hold a worker thread)
/// and, with a deadline, traps once it has passed ([`Deadline::arm`]).
fn set_deadline(store: &mut Store<State>, deadline: Option<&Arc<Deadline>>) {
    if let Some(deadline) = deadline {
        return deadline.arm(store);
    }
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        Ok(UpdateDeadline::YieldCustom(
            1,
            Box::pin(tokio::task::yield_now()),
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_backoff_doubles_to_a_second_and_resets() {
        let mut backoff = AcceptBackoff::default();
        let pauses: Vec<u64> = (0..9)
            .map(|_| backoff.failed().as_millis() as u64)
            .collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.succeeded();
        assert_eq!(backoff.failed(), Duration::from_millis(10));
    }
}
