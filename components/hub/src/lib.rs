//! The `hub` Spin component: the message hub (`/api/send`, `/api/inbox/<machine>`,
//! `/api/inbox/<machine>/ack`, `/api/inbox/<machine>/events`, `/api/messages/<machine>`,
//! `/machines`).
//!
//! A thin adapter over [`dochub_hub`]. In order, so that nothing is read that need not be:
//! the settings (`environment`, `hub_tokens`, `allowed_hosts`; unreadable or unknown: 500,
//! never open) and the development `Host` check ([`dochub_http_wasip2::admit`]); the route,
//! method, token and content type from the request's head ([`api::check_before_body`]); only
//! then the body, streamed and cut off after [`MAX_REQUEST`] bytes; then `hub_max_unread`,
//! `hub_max_machines`, `hub_retention_days`, `hub_max_read`, and [`Sql`] over the store
//! `hub_database_url` chooses ([`HubStore`]: Spin's SQLite database `default`, or PostgreSQL
//! when it is set). Every response leaves through [`dochub_http::finish`] (request id, headers,
//! generic 5xx).

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use std::time::Duration;

use dochub_http::{Incoming, Response, Surface, log};
use dochub_hub::api::{self, Answer, Body, MAX_REQUEST};
use dochub_hub::auth::HubAuth;
use dochub_hub::wait::Pause;
use dochub_hub::{Hub, HubError, Limits, Sql, SystemClock};
use dochub_hub_spin::{HubStore, open_postgres};
use futures::StreamExt;
use http::StatusCode;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;
use spin_sdk::variables;
use wasi::clocks::monotonic_clock;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Hub, &req, out, "hub_tokens") else {
        return;
    };
    let incoming = &admitted.incoming;
    // Hub tokens are bound to machines: the hub's own check, not `Admitted::auth`.
    let auth = HubAuth::new(
        admitted.settings.environment.as_str(),
        &admitted.settings.tokens,
    );
    if auth.required() && auth.no_tokens() {
        log(
            Surface::Hub,
            incoming,
            "no tokens are configured (`hub_tokens` is empty): every request gets 401",
        );
    } else if auth.required() && auth.invalid_entries() > 0 {
        let count = auth.invalid_entries();
        log(
            Surface::Hub,
            incoming,
            &format!("{count} entries of `hub_tokens` are not `machine=<sha256 hex>`; ignored"),
        );
    }
    match answer(req, incoming, &auth).await {
        Reply::Now(response) => admitted.respond(response),
        Reply::Later(head, write) => admitted.send(head, write),
    }
}

/// The body of a response that is written over time (a long-poll, an event stream).
type WriteBody = Box<dyn FnOnce(&mut dyn std::io::Write) -> Result<(), String>>;

/// A whole response, or a head and the writing of its body.
enum Reply {
    Now(Response),
    Later(Response, WriteBody),
}

async fn answer(req: IncomingRequest, incoming: &Incoming, auth: &HubAuth) -> Reply {
    let head = match request_head(incoming) {
        Ok(head) => head,
        Err(response) => return Reply::Now(*response),
    };
    if let Some(refusal) = api::check_before_body(auth, &head) {
        return Reply::Now(refusal);
    }
    let body = match read_body(req, &head).await {
        Ok(body) => body,
        Err(response) => return Reply::Now(*response),
    };
    let request = head.map(|()| body);
    let limits = match Limits::from_variables(variable) {
        Ok(limits) => limits,
        Err(e) => {
            return Reply::Now(api::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &e.to_string(),
            ));
        }
    };
    match HubStore::configured() {
        HubStore::Postgres(url) => serve(move || open_postgres(&url), limits, auth, request),
        #[cfg(feature = "edge")]
        HubStore::Sqlite => unavailable(
            "the hub keeps its messages in PostgreSQL in the edge build, and no database is \
             configured: set the variable `hub_database_url`",
        ),
        // SQLite has no pool for waiters to starve: a wait keeps its one connection rather
        // than opening the database file at every look.
        #[cfg(not(feature = "edge"))]
        HubStore::Sqlite => match dochub_hub_spin::open_sqlite() {
            Ok(conn) => serve(move || Ok(conn.clone()), limits, auth, request),
            Err(e) => unavailable(&e),
        },
    }
}

/// Answers on a connection from `connect`; a long-poll or a stream opens one per look at the
/// store and lets it go in between, so waiting requests do not hold the pool's connections.
fn serve<D: Sql + 'static>(
    connect: impl Fn() -> Result<D, String> + 'static,
    limits: Limits,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> Reply {
    let db = match connect() {
        Ok(db) => db,
        Err(e) => return unavailable(&e),
    };
    let hub = Hub::with_clock(db, SystemClock, limits);
    match api::answer(&hub, auth, request) {
        Answer::Now(response) => Reply::Now(response),
        Answer::Later(later) => {
            drop(hub);
            let head = later.head.clone();
            Reply::Later(
                head,
                Box::new(move |out| {
                    let connect = || {
                        connect()
                            .map(|db| Hub::with_clock(db, SystemClock, limits))
                            .map_err(HubError::Unavailable)
                    };
                    later
                        .run(&connect, &WasiPause, out)
                        .map_err(|e| e.to_string())
                }),
            )
        }
    }
}

/// [`Pause`] on WASI's monotonic clock: the instance blocks on a clock pollable, which costs
/// the host nothing while it waits.
struct WasiPause;

impl Pause for WasiPause {
    fn monotonic(&self) -> Duration {
        Duration::from_nanos(monotonic_clock::now())
    }

    fn sleep(&self, duration: Duration) {
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        monotonic_clock::subscribe_duration(nanos).block();
    }
}

fn unavailable(message: &str) -> Reply {
    Reply::Now(api::error(StatusCode::SERVICE_UNAVAILABLE, message).with_header("retry-after", "1"))
}

/// A variable the settings did not read; unreadable reads as empty, which
/// [`Limits::from_variables`] treats as its default.
fn variable(name: &str) -> String {
    variables::get(name).unwrap_or_default()
}

/// The hub's [`http::Response`] as the shared layer's response.
fn request_head(incoming: &Incoming) -> Result<http::Request<()>, Box<Response>> {
    let bad = |what: &str| Box::new(api::error(StatusCode::BAD_REQUEST, what));
    let method =
        http::Method::from_bytes(incoming.method.as_bytes()).map_err(|_| bad("invalid method"))?;
    let target = if incoming.query.is_empty() {
        incoming.full_path.clone()
    } else {
        format!("{}?{}", incoming.full_path, incoming.query)
    };
    let mut builder = http::Request::builder()
        .method(method)
        .uri(http::Uri::try_from(target).map_err(|_| bad("invalid request target"))?);
    for (name, value) in &incoming.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.body(()).map_err(|_| bad("invalid request headers"))
}

/// The body, read up to [`MAX_REQUEST`] bytes: a declared or actual length beyond it stops the
/// reading there ([`Body::TooLarge`], answered 413).
async fn read_body(req: IncomingRequest, head: &http::Request<()>) -> Result<Body, Box<Response>> {
    let declared = head
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_REQUEST as u64) {
        return Ok(Body::TooLarge);
    }
    let mut stream = req.into_body_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            Box::new(api::error(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {e:?}"),
            ))
        })?;
        bytes.extend_from_slice(&chunk);
        if bytes.len() > MAX_REQUEST {
            return Ok(Body::TooLarge);
        }
    }
    Ok(Body::Bytes(bytes))
}
