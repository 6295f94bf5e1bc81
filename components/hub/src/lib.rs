//! The `hub` Spin component: the message hub (`/api/send`, `/api/inbox/<machine>`,
//! `/api/inbox/<machine>/ack`, `/machines`).
//!
//! A thin adapter over [`dochub_hub`]: it reads the variables once per request (`environment`,
//! `hub_tokens`, `hub_database_url`, `hub_max_unread`, `hub_retention_days`), reads the body (at
//! most [`MAX_REQUEST`] bytes), implements [`Sql`] over Spin's SQLite database `default`
//! (`spin:sqlite`), or over PostgreSQL (`spin:postgres`) when `hub_database_url` is set, and hands
//! the request to [`dochub_hub::api::handle`].

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use dochub_hub::api::{self, Body, MAX_REQUEST};
use dochub_hub::auth::HubAuth;
use dochub_hub::{Dialect, Hub, Limits, Sql, SqlError, SqlValue, SystemClock};
use futures::StreamExt;
use http::StatusCode;
use spin_sdk::http::IncomingRequest;
use spin_sdk::http_component;
use spin_sdk::{pg3, sqlite3};

#[http_component]
async fn handle(req: IncomingRequest) -> http::Response<Vec<u8>> {
    let auth = HubAuth::new(&variable("environment"), &variable("hub_tokens"));
    let limits = match Limits::parse(&variable("hub_max_unread"), &variable("hub_retention_days")) {
        Ok(limits) => limits,
        Err(e) => return api::error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let request = match read_request(req).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let url = variable("hub_database_url");
    let url = url.trim();
    if url.is_empty() {
        match sqlite3::Connection::open_default() {
            Ok(conn) => serve(SpinSqlite(conn), limits, &auth, request),
            Err(e) => unavailable(&format!("cannot open the SQLite database `default`: {e:?}")),
        }
    } else {
        match pg3::Connection::open(url) {
            Ok(conn) => serve(SpinPostgres(conn), limits, &auth, request),
            // The URL may hold a password: the error names the failure, not the address.
            Err(e) => unavailable(&format!("cannot connect to the hub's PostgreSQL: {e:?}")),
        }
    }
}

fn serve(
    db: impl Sql,
    limits: Limits,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> http::Response<Vec<u8>> {
    api::handle(&Hub::with_clock(db, SystemClock, limits), auth, request)
}

fn unavailable(message: &str) -> http::Response<Vec<u8>> {
    let mut response = api::error(StatusCode::SERVICE_UNAVAILABLE, message);
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    response
}

fn variable(name: &str) -> String {
    spin_sdk::variables::get(name).unwrap_or_default()
}

/// The request as an [`http::Request`], its body read up to [`MAX_REQUEST`] bytes.
async fn read_request(
    req: IncomingRequest,
) -> Result<http::Request<Body>, http::Response<Vec<u8>>> {
    let bad = |what: &str| api::error(StatusCode::BAD_REQUEST, what);
    let method = http::Method::from_bytes(req.method().to_string().as_bytes())
        .map_err(|_| bad("invalid method"))?;
    let uri = req.path_with_query().unwrap_or_else(|| "/".to_owned());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(http::Uri::try_from(uri).map_err(|_| bad("invalid request target"))?);
    let mut declared_too_large = false;
    for (name, value) in req.headers().entries() {
        if name.eq_ignore_ascii_case("content-length") {
            let length = std::str::from_utf8(&value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            declared_too_large = length.is_some_and(|n| n > MAX_REQUEST as u64);
        }
        if let Ok(value) = http::HeaderValue::from_bytes(&value) {
            builder = builder.header(name, value);
        }
    }
    let body = if declared_too_large {
        Body::TooLarge
    } else {
        let mut stream = req.into_body_stream();
        let mut bytes = Vec::new();
        let mut too_large = false;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| bad(&format!("cannot read the request body: {e:?}")))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_REQUEST {
                too_large = true;
                break;
            }
        }
        if too_large {
            Body::TooLarge
        } else {
            Body::Bytes(bytes)
        }
    };
    builder
        .body(body)
        .map_err(|_| bad("invalid request headers"))
}

/// [`Sql`] over Spin's `spin:sqlite` (one connection for the request).
struct SpinSqlite(sqlite3::Connection);

fn sqlite_params(params: &[SqlValue]) -> Vec<sqlite3::Value> {
    params
        .iter()
        .map(|p| match p {
            SqlValue::Int(n) => sqlite3::Value::Integer(*n),
            SqlValue::Text(s) => sqlite3::Value::Text(s.clone()),
            SqlValue::Null => sqlite3::Value::Null,
        })
        .collect()
}

impl Sql for SpinSqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        let result = self
            .0
            .execute(sql, &sqlite_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?;
        result
            .rows
            .into_iter()
            .map(|row| {
                row.values
                    .into_iter()
                    .map(|v| match v {
                        sqlite3::Value::Integer(n) => Ok(SqlValue::Int(n)),
                        sqlite3::Value::Text(s) => Ok(SqlValue::Text(s)),
                        sqlite3::Value::Null => Ok(SqlValue::Null),
                        other => Err(SqlError(format!("unexpected SQLite value {other:?}"))),
                    })
                    .collect()
            })
            .collect()
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.0
            .execute(sql, &sqlite_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?;
        Ok(self.0.changes())
    }
}

/// [`Sql`] over Spin's `spin:postgres` (one pooled connection for the request).
struct SpinPostgres(pg3::Connection);

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
        let rows = self
            .0
            .query(sql, &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?;
        rows.rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|v| match v {
                        pg3::DbValue::Int64(n) => Ok(SqlValue::Int(n)),
                        pg3::DbValue::Int32(n) => Ok(SqlValue::Int(n.into())),
                        pg3::DbValue::Str(s) => Ok(SqlValue::Text(s)),
                        pg3::DbValue::DbNull => Ok(SqlValue::Null),
                        other => Err(SqlError(format!("unexpected PostgreSQL value {other:?}"))),
                    })
                    .collect()
            })
            .collect()
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.0
            .execute(sql, &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))
    }
}
