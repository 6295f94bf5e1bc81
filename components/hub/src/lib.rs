//! The `hub` Spin component: the message hub (`/api/send`, `/api/inbox/<machine>`,
//! `/api/inbox/<machine>/ack`, `/api/inbox/<machine>/events`, `/api/messages/<machine>`,
//! `/machines`).
//!
//! A thin adapter over [`dochub_hub`]. In order, so that nothing is read that need not be:
//! the settings (`environment`, `hub_tokens`, `allowed_hosts`; unreadable or unknown: 500,
//! never open) and the development `Host` check ([`dochub_http::spin::admit`]); the route,
//! method, token and content type from the request's head ([`api::check_before_body`]); only
//! then the body, streamed and cut off after [`MAX_REQUEST`] bytes; then `hub_database_url`,
//! `hub_max_unread`, `hub_max_machines`, `hub_retention_days`, `hub_max_read`, and [`Sql`] over
//! Spin's SQLite database `default`
//! (`spin:sqlite`), or over PostgreSQL (`spin:postgres`) when `hub_database_url` is set.
//! Every response leaves through [`dochub_http::finish`] (request id, headers, generic 5xx).

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

#[cfg(not(feature = "edge"))]
mod sqlite;

use std::time::Duration;

use dochub_http::{Incoming, Response, Surface, log};
use dochub_hub::api::{self, Answer, Body, MAX_REQUEST};
use dochub_hub::auth::HubAuth;
use dochub_hub::wait::Pause;
use dochub_hub::{Dialect, Hub, HubError, Limits, Sql, SqlError, SqlValue, SystemClock};
use futures::StreamExt;
use http::StatusCode;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;
use spin_sdk::{pg3, variables};
use wasi::clocks::monotonic_clock;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http::spin::admit(Surface::Hub, &req, out, "hub_tokens") else {
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
    let url = variable("hub_database_url").trim().to_owned();
    if url.is_empty() {
        #[cfg(feature = "edge")]
        return unavailable(
            "the hub keeps its messages in PostgreSQL in the edge build, and no database is \
             configured: set the variable `hub_database_url`",
        );
        // SQLite has no pool for waiters to starve: a wait keeps its one connection rather
        // than opening the database file at every look.
        #[cfg(not(feature = "edge"))]
        {
            let conn = match sqlite::open_sqlite() {
                Ok(conn) => conn,
                Err(e) => return unavailable(&e),
            };
            serve(move || Ok(conn.clone()), limits, auth, request)
        }
    } else {
        serve(move || open_postgres(&url), limits, auth, request)
    }
}

/// A connection from Spin's pool for the hub's PostgreSQL.
fn open_postgres(url: &str) -> Result<SpinPostgres, String> {
    pg3::Connection::open(url)
        .map(SpinPostgres)
        // The URL may hold a password: the error names the failure, not the address.
        .map_err(|e| format!("cannot connect to the hub's PostgreSQL: {e:?}"))
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
/// [`Limits::from_variables`] and the database choice treat as their defaults.
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

/// [`Sql`] over Spin's `spin:postgres` (one pooled connection for the request).
///
/// Spin v4.0.2 never answers a query that returns no rows (it waits for a column list that only
/// the first row brings; see `dochub-host`'s `postgres` module). So every query runs inside a
/// statement that always returns a row: the original's rows, each after their count, or one row
/// holding the count 0. A data-modifying `WITH` cannot be nested, so a statement that starts
/// with `WITH` runs as written: the hub writes those to return exactly one row.
struct SpinPostgres(pg3::Connection);

/// `sql` as a statement that returns at least one row; its first column is how many rows `sql`
/// returned, the rest are `sql`'s columns (all NULL in the row that stands for none). A join on
/// `true` runs as a nested loop over the materialized rows, so their order is kept.
fn never_empty(sql: &str) -> Option<String> {
    let starts_with_with = sql
        .trim_start()
        .get(..4)
        .is_some_and(|word| word.eq_ignore_ascii_case("with"));
    (!starts_with_with).then(|| {
        format!(
            "WITH dochub_rows AS ({sql}) SELECT n.count, dochub_rows.* \
             FROM (SELECT COUNT(*) AS count FROM dochub_rows) n LEFT JOIN dochub_rows ON true"
        )
    })
}

fn sql_value(value: pg3::DbValue) -> Result<SqlValue, SqlError> {
    match value {
        pg3::DbValue::Int64(n) => Ok(SqlValue::Int(n)),
        pg3::DbValue::Int32(n) => Ok(SqlValue::Int(n.into())),
        pg3::DbValue::Str(s) => Ok(SqlValue::Text(s)),
        pg3::DbValue::DbNull => Ok(SqlValue::Null),
        other => Err(SqlError(format!("unexpected PostgreSQL value {other:?}"))),
    }
}

fn pg_params(params: &[SqlValue]) -> Vec<pg3::ParameterValue> {
    params
        .iter()
        .map(|p| match p {
            SqlValue::Int(n) => pg3::ParameterValue::Int64(*n),
            SqlValue::Text(s) => pg3::ParameterValue::Str(s.clone()),
            SqlValue::Null => pg3::ParameterValue::DbNull,
        })
        .collect()
}

impl Sql for SpinPostgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        let wrapped = never_empty(sql);
        let rows = self
            .0
            .query(wrapped.as_deref().unwrap_or(sql), &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?
            .rows;
        if wrapped.is_none() {
            return rows
                .into_iter()
                .map(|row| row.into_iter().map(sql_value).collect())
                .collect();
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut values = row.into_iter();
            match values.next() {
                Some(pg3::DbValue::Int64(0)) => break,
                Some(pg3::DbValue::Int64(_)) => {
                    out.push(values.map(sql_value).collect::<Result<_, _>>()?)
                }
                other => return Err(SqlError(format!("unexpected row count {other:?}"))),
            }
        }
        Ok(out)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.0
            .execute(sql, &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))
    }
}
