//! The `api` Spin component: Tier 3 of dochub (`/api/...`).
//!
//! A thin adapter over [`dochub_content::api`]: it reads the configuration once
//! per request, passes the request to the library, and for `/api/health` takes
//! the two readings only a host can give — the app's first start from the
//! key-value store, and `SELECT 1` over outbound Postgres.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`): the build written by `dochub build`; its index and
//!   manifests answer search and manifests while they match the content (else the tree is
//!   scanned and a warning logged); env `SERVE_PREBUILT` `0`/`false` turns that off, any
//!   other value makes a missing build an error;
//! - variables `environment`, `auth_tokens` (see `dochub_content::auth`),
//!   `database_url`; when `database_url` is empty, env `DATABASE_URL`, then
//!   `POSTGRES_HOST` / `POSTGRES_PORT` / `POSTGRES_USER` / `POSTGRES_PASSWORD` /
//!   `POSTGRES_DB` / `POSTGRES_SSLMODE` (Spin connects with verified TLS unless the address
//!   says `sslmode=disable`).

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use chrono::{DateTime, Utc};
use dochub_content::api::{
    ApiConfig, ApiRequest, ApiResponse, Database, Gate, Health, handle_or_health, health_response,
};
use dochub_content::auth::AuthConfig;
use dochub_content::prebuilt::BuildMode;
use spin_sdk::http::{Request, Response};
use spin_sdk::http_component;
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

/// Key under which the app's first start (RFC 3339) is kept in the `default` store.
const STARTED_KEY: &str = "dochub:api:started_at";

/// Counter whose first increment elects the one request that records the first start.
const STARTED_ELECTION_KEY: &str = "dochub:api:started_at:ticket";

#[http_component]
fn handle(req: Request) -> Response {
    let now = Utc::now();
    let config = ApiConfig {
        content_dir: env("CONTENT_DIR")
            .unwrap_or_else(|| "/content".into())
            .into(),
        build: BuildMode::from_settings(
            env("SERVE_PREBUILT").as_deref(),
            env("BUILD_DIR").as_deref(),
        ),
        auth: AuthConfig::new(&variable("environment"), &variable("auth_tokens")),
    };
    let method = req.method().to_string();
    let path = match req.header("spin-path-info").and_then(|v| v.as_str()) {
        Some(p) => p.to_owned(),
        None => req
            .path()
            .strip_prefix("/api")
            .unwrap_or(req.path())
            .to_owned(),
    };
    let api_req = ApiRequest {
        method: &method,
        path: &path,
        query: req.query(),
        authorization: req.header("authorization").and_then(|v| v.as_str()),
    };
    let res = match handle_or_health(&config, &api_req, now) {
        Gate::Respond(res) => res,
        Gate::Health => {
            let environment = variable("environment");
            let health = Health::new(
                env!("CARGO_PKG_VERSION"),
                first_start(now),
                database(),
                &environment,
                now,
            );
            health_response(&health, &method)
        }
    };
    respond(res)
}

fn respond(res: ApiResponse) -> Response {
    if let Some(warning) = &res.warning {
        eprintln!("api: warning: {warning}");
    }
    let mut builder = Response::builder();
    builder.status(res.status);
    for (name, value) in res.headers {
        builder.header(name, value);
    }
    builder.body(res.body).build()
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn variable(name: &str) -> String {
    spin_sdk::variables::get(name).unwrap_or_default()
}

/// The app's first start, kept in the `default` key-value store.
///
/// Spin's stores offer no working compare-and-swap (an absent-key swap is an upsert on SQLite;
/// every swap reports failure on Redis), but `increment` is atomic on both. So the first request
/// to find no start time takes a ticket from [`STARTED_ELECTION_KEY`]; only ticket 1 writes the
/// time, and every other request re-reads until it appears, then agrees with it.
///
/// Residual race, on purpose: when the writer stalls past the re-reads (~100 ms) or its
/// `increment` fails (e.g. another host holds the SQLite file's lock), a request answers with
/// its own clock and writes it only if the key is still absent; a concurrent writer can then
/// overwrite it once. `uptime` may then differ by the length of that race, once, in the first
/// seconds of the app's life. Any store error falls back to `now` (uptime 0), never an error.
fn first_start(now: DateTime<Utc>) -> DateTime<Utc> {
    let Ok(bucket) = store::open("default") else {
        return now;
    };
    let parse = |bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .ok()
            .and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let read = || bucket.get(STARTED_KEY).ok().flatten().and_then(parse);
    if let Some(started) = read() {
        return started;
    }
    let value = now.to_rfc3339().into_bytes();
    if matches!(atomics::increment(&bucket, STARTED_ELECTION_KEY, 1), Ok(1)) {
        if bucket.set(STARTED_KEY, &value).is_ok() {
            return now;
        }
    } else {
        for attempt in 1..=5u64 {
            std::thread::sleep(std::time::Duration::from_millis(7 * attempt));
            if let Some(started) = read() {
                return started;
            }
        }
    }
    if read().is_none() {
        let _ = bucket.set(STARTED_KEY, &value);
    }
    read().unwrap_or(now)
}

/// The database URL: variable `database_url`, env `DATABASE_URL`, or `POSTGRES_*` parts.
fn database_address() -> Option<String> {
    let url = variable("database_url");
    if !url.trim().is_empty() {
        return Some(url.trim().to_owned());
    }
    if let Some(url) = env("DATABASE_URL") {
        return Some(url);
    }
    let host = env("POSTGRES_HOST")?;
    let mut parts = vec![format!("host={host}")];
    for (var, key) in [
        ("POSTGRES_PORT", "port"),
        ("POSTGRES_USER", "user"),
        ("POSTGRES_PASSWORD", "password"),
        ("POSTGRES_DB", "dbname"),
        ("POSTGRES_SSLMODE", "sslmode"),
    ] {
        if let Some(v) = env(var) {
            parts.push(format!(
                "{key}='{}'",
                v.replace('\\', "\\\\").replace('\'', "\\'")
            ));
        }
    }
    Some(parts.join(" "))
}

fn database() -> Database {
    let Some(address) = database_address() else {
        return Database::Unknown;
    };
    let ok = spin_sdk::pg3::Connection::open(&address)
        .and_then(|conn| conn.query("SELECT 1", &[]))
        .is_ok();
    if ok {
        Database::Connected
    } else {
        Database::Disconnected
    }
}
