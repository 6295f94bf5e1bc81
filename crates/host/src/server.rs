//! The HTTP trigger: accept connections, route, run one fresh instance per request.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use wasmtime::Store;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::app::App;
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

    /// Stops accepting, closes open connections and waits for the accept loop to end.
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
    let app = Arc::new(app);
    let (stop, mut stopped) = watch::channel(false);
    let task = tokio::spawn(async move {
        loop {
            let (stream, client) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        tracing::warn!("accept failed: {e}");
                        continue;
                    }
                },
                _ = stopped.changed() => break,
            };
            let app = app.clone();
            let mut conn_stopped = stopped.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let app = app.clone();
                    async move { Ok::<_, std::convert::Infallible>(handle(app, req, client).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::pin!(conn);
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!("connection from {client}: {e}");
                        }
                    }
                    _ = conn_stopped.changed() => conn.as_mut().graceful_shutdown(),
                }
            });
        }
    });
    Ok(RunningHost { addr, stop, task })
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
) -> Response<HyperOutgoingBody> {
    match run(app, req, client).await {
        Ok(res) => res,
        Err(HandleError::Client(status, text)) => plain(status, &text),
        Err(HandleError::Guest(e)) => {
            tracing::error!("{e:?}");
            plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error\n")
        }
    }
}

enum HandleError {
    Client(StatusCode, String),
    Guest(anyhow::Error),
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

async fn run(
    app: Arc<App>,
    req: Request<Incoming>,
    client: SocketAddr,
) -> Result<Response<HyperOutgoingBody>, HandleError> {
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

    let (mut parts, body) = req.into_parts();
    // The guest learns the authority from the URI, as under Spin; no Host, no authority: 400.
    let host = parts
        .uri
        .authority()
        .map(|a| a.to_string())
        .or_else(|| {
            parts
                .headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_string)
        })
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            HandleError::Client(StatusCode::BAD_REQUEST, "missing Host header\n".into())
        })?;
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
    let req = Request::from_parts(parts, body);

    let state = State::new(component.config.clone(), &app.services)?;
    let mut store = Store::new(&app.engine, state);
    store.limiter(|s| &mut s.limits);
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let incoming = store
        .data_mut()
        .http()
        .new_incoming_request(Scheme::Http, req)?;
    let out = store.data_mut().http().new_response_outparam(sender)?;
    let pre = component.pre.clone();
    // The guest may keep streaming the body after it has set the response, so it runs on its own.
    let task = tokio::spawn(async move {
        let proxy = pre.instantiate_async(&mut store).await?;
        proxy
            .wasi_http_incoming_handler()
            .call_handle(&mut store, incoming, out)
            .await
    });
    match receiver.await {
        Ok(Ok(res)) => Ok(res),
        Ok(Err(code)) => Err(HandleError::Guest(anyhow::anyhow!(
            "component `{}` answered with an error: {code:?}",
            route.component
        ))),
        Err(_) => {
            let reason = match task.await {
                Ok(Ok(())) => anyhow::anyhow!("guest never set a response"),
                Ok(Err(e)) => e.into(),
                Err(e) => anyhow::anyhow!(e),
            };
            Err(HandleError::Guest(reason.context(format!(
                "component `{}` failed on {path}",
                route.component
            ))))
        }
    }
}
