//! The `api` Spin component: Tier 3 of dochub (`/api/...`).
//!
//! A thin adapter over [`dochub_app::api`], entered and left through `dochub_http` (settings,
//! `Host` check, headers, generic errors) like every component: it reads the configuration once
//! per request, passes the request to the library, and for `/api/health` takes
//! the readings only a host can give: the app's first start from the key-value store, `SELECT 1`
//! over outbound Postgres, and a probe of every store the app keeps state in (the key-value
//! store, and the hub's SQLite `default` or its PostgreSQL at `hub_database_url`).
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`): the build written by `dochub build`; its index and
//!   manifests answer search and manifests while they match the content (else the tree is
//!   scanned and a warning logged); env `SERVE_PREBUILT` `0`/`false` turns that off, any
//!   other value makes a missing build an error;
//! - variables `environment`, `auth_tokens`, `allowed_hosts` (see `dochub_http`: unreadable or
//!   unknown values refuse every request), `database_url`; when `database_url` is empty, env `DATABASE_URL`, then
//!   `POSTGRES_HOST` / `POSTGRES_PORT` / `POSTGRES_USER` / `POSTGRES_PASSWORD` /
//!   `POSTGRES_DB` / `POSTGRES_SSLMODE` (Spin connects with verified TLS unless the address
//!   says `sslmode=disable`).

//!
//! It is a WASIp3 component (spin-sdk 6), whose instance Spin v4 keeps for many requests; with
//! `--no-default-features --features wasip2` (or `edge`) a WASIp2 one, for hosts that run only
//! those. Both reach Spin's stores through [`dochub_spin_imports`]. A reused instance keeps the
//! `default` store's handle and the build check's memo, and for a second each, health's SQLite
//! connection and its settings (`dochub_http_wasip3::SETTINGS_LIFE`).

// The handler macros expand to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

// spin-sdk's handler macros name the crate `spin_sdk`.
#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
extern crate spin_sdk_p3 as spin_sdk;

#[cfg(not(any(feature = "wasip3", feature = "wasip2")))]
compile_error!("build with the feature `wasip3` (the default) or `wasip2`");
#[cfg(all(feature = "wasip3", feature = "wasip2"))]
compile_error!(
    "`wasip2` and `edge` need `--no-default-features`: one component cannot link both spin-sdks"
);

use chrono::{DateTime, Utc};
use dochub_app::api::{
    ApiConfig, Database, Gate, Health, StoreReading, Stores, handle_or_health, health_response,
};
use dochub_http::auth::AuthConfig;
use dochub_http::{Incoming, Response, Surface};
use dochub_hub_spin::{HubStore, open_postgres};
use dochub_index::{Memo, Source};
#[cfg(not(feature = "edge"))]
use dochub_spin_imports::atomics;
use dochub_spin_imports::{store, variables};

/// Key under which the app's first start (RFC 3339) is kept in the `default` store.
const STARTED_KEY: &str = "dochub:api:started_at";

/// Counter whose first increment elects the one request that records the first start.
#[cfg(not(feature = "edge"))]
const STARTED_ELECTION_KEY: &str = "dochub:api:started_at:ticket";

#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
#[spin_sdk::http_service]
async fn handle(req: spin_sdk::http::Request) -> dochub_http_wasip3::Answer {
    let now = Utc::now();
    let admitted = match dochub_http_wasip3::admit(Surface::Api, &req, "auth_tokens").await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal,
    };
    let environment = admitted.settings.environment.as_str();
    let res = answer(&admitted.incoming, admitted.auth(), environment, now);
    admitted.respond(res)
}

#[cfg(feature = "wasip2")]
#[spin_sdk::http_component]
fn handle(req: spin_sdk::http::IncomingRequest, out: spin_sdk::http::ResponseOutparam) {
    let now = Utc::now();
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Api, &req, out, "auth_tokens") else {
        return;
    };
    let environment = admitted.settings.environment.as_str();
    let res = answer(&admitted.incoming, admitted.auth(), environment, now);
    admitted.respond(res);
}

/// The answer to an admitted request.
fn answer(
    incoming: &Incoming,
    auth: AuthConfig,
    environment: &str,
    now: DateTime<Utc>,
) -> Response {
    let config = ApiConfig {
        // A copied build (`spin up`'s default) is checked once, then remembered.
        source: Source::from_env(Some(CHECK_MEMO.with(Memo::clone))),
        auth,
    };
    match handle_or_health(&config, &incoming.request(), now) {
        Gate::Respond(res) => res,
        Gate::Health => {
            let (started, key_value) = first_start(now);
            let health = Health::new(
                env!("CARGO_PKG_VERSION"),
                started,
                database(),
                Stores {
                    hub: hub_store(),
                    key_value: StoreReading::read("key-value", key_value),
                },
                environment,
                now,
            );
            health_response(&health, &incoming.method)
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The app's first start, kept in the `default` key-value store, and how its first read of the
/// store went: that read is the store's probe.
///
/// Spin's stores offer no working compare-and-swap (an absent-key swap is an upsert on SQLite;
/// every swap reports failure on Redis), but `increment` is atomic on both. So the first request
/// to find no start time takes a ticket from `STARTED_ELECTION_KEY`; only ticket 1 writes the
/// time, and every other request re-reads until it appears, then agrees with it.
///
/// Residual race, on purpose: when the writer stalls past the re-reads (~5 s) or its
/// `increment` fails (e.g. another host holds the SQLite file's lock), a request answers with
/// its own clock and writes it only if the key is still absent; a concurrent writer can then
/// overwrite it once. `uptime` may then differ by the length of that race, once, in the first
/// seconds of the app's life. Any store error falls back to `now` (uptime 0), never an error.
///
/// The edge build (feature `edge`) has no atomics to elect with (Akamai Functions offers
/// `wasi:keyvalue` store and batch only), so every request that finds no start time takes that
/// last path: the first start is the time of the first request the store saw, give or take
/// the requests that raced it in that first moment, each of which may overwrite it once.
fn first_start(now: DateTime<Utc>) -> (DateTime<Utc>, Result<(), String>) {
    let failed = |e: store::Error| format!("the key-value store `default` fails: {e:?}");
    let bucket = match default_store() {
        Ok(bucket) => bucket,
        Err(e) => return (now, Err(failed(e))),
    };
    match bucket.get(STARTED_KEY) {
        Err(e) => {
            DEFAULT_STORE.set(None);
            (now, Err(failed(e)))
        }
        Ok(found) => match found.and_then(parse_start) {
            Some(started) => (started, Ok(())),
            None => (record_first_start(&bucket, now), Ok(())),
        },
    }
}

thread_local! {
    /// The `default` store, kept while it answers: a reused instance (Spin v4 gives one up to
    /// 128 requests) then reads it without opening it each time. Health still reads it at every
    /// request: that read is the store's probe.
    static DEFAULT_STORE: std::cell::RefCell<Option<std::rc::Rc<store::Bucket>>> =
        const { std::cell::RefCell::new(None) };

    /// The build check's memo, one for the instance's life: what it has read or saved is kept
    /// in memory too, which is safe because each key names one copy of one build, whose check
    /// never changes ([`Memo::key_value`]).
    static CHECK_MEMO: Memo = Memo::key_value("default");
}

/// The kept `default` store, opened now if there is none; a failed read drops it
/// ([`first_start`]), so that the next request opens it again.
fn default_store() -> Result<std::rc::Rc<store::Bucket>, store::Error> {
    DEFAULT_STORE.with_borrow_mut(|kept| match kept {
        Some(bucket) => Ok(bucket.clone()),
        None => {
            let bucket = std::rc::Rc::new(store::open("default")?);
            *kept = Some(bucket.clone());
            Ok(bucket)
        }
    })
}

fn parse_start(bytes: Vec<u8>) -> Option<DateTime<Utc>> {
    let text = String::from_utf8(bytes).ok()?;
    let time = DateTime::parse_from_rfc3339(&text).ok()?;
    Some(time.with_timezone(&Utc))
}

/// Records `now` as the first start, unless a concurrent request does first ([`first_start`]).
fn record_first_start(bucket: &store::Bucket, now: DateTime<Utc>) -> DateTime<Utc> {
    let read = || bucket.get(STARTED_KEY).ok().flatten().and_then(parse_start);
    let value = now.to_rfc3339().into_bytes();
    match elected(bucket) {
        Some(true) if bucket.set(STARTED_KEY, &value).is_ok() => return now,
        Some(true) => {}
        Some(false) => {
            // Doubling waits, 5 s in all: a winner stalled on a loaded host still lands (its
            // write may queue behind every other request's `increment`, each a commit).
            for attempt in 0..10u32 {
                std::thread::sleep(std::time::Duration::from_millis(5 << attempt));
                if let Some(started) = read() {
                    return started;
                }
            }
        }
        None => {}
    }
    if read().is_none() {
        let _ = bucket.set(STARTED_KEY, &value);
    }
    read().unwrap_or(now)
}

/// Whether this request won the election to record the first start (a failed `increment`
/// loses); `None` where there are no atomics to hold one.
#[cfg(not(feature = "edge"))]
fn elected(bucket: &store::Bucket) -> Option<bool> {
    Some(matches!(
        atomics::increment(bucket, STARTED_ELECTION_KEY, 1),
        Ok(1)
    ))
}

#[cfg(feature = "edge")]
fn elected(_: &store::Bucket) -> Option<bool> {
    None
}

/// The database URL: variable `database_url`, env `DATABASE_URL`, or `POSTGRES_*` parts.
fn database_address() -> Option<String> {
    // Unreadable reads as unset: health then reports the database as `unknown`.
    let url = variables::get("database_url").unwrap_or_default();
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
    let ok = dochub_spin_imports::pg3::Connection::open(&address)
        .and_then(|conn| conn.query("SELECT 1", &[]))
        .is_ok();
    if ok {
        Database::Connected
    } else {
        Database::Disconnected
    }
}

/// The hub's store, chosen, opened and probed as the hub uses it ([`dochub_hub_spin`]).
fn hub_store() -> StoreReading {
    match HubStore::configured() {
        HubStore::Postgres(url) => {
            StoreReading::read("postgres", open_postgres(&url).and_then(|db| db.probe()))
        }
        #[cfg(not(feature = "edge"))]
        HubStore::Sqlite => StoreReading::read("sqlite", probe_sqlite()),
        #[cfg(feature = "edge")]
        HubStore::Sqlite => StoreReading::unconfigured(
            "the edge build keeps the hub's messages in PostgreSQL: set the variable \
             `hub_database_url`",
        ),
    }
}

/// How long a kept SQLite probe connection serves: it sees the file it opened, so a file
/// replaced under it (deleted, or swapped for a folder) shows in health within this time.
#[cfg(not(feature = "edge"))]
const SQLITE_PROBE_LIFE: std::time::Duration = std::time::Duration::from_secs(1);

#[cfg(not(feature = "edge"))]
thread_local! {
    /// The SQLite probe's connection and when it was opened, kept while it answers: under
    /// load a reused instance (Spin v4 gives one up to 128 requests) probes without opening
    /// the file each time, which made the probe create and delete the write-ahead log's files.
    static SQLITE_PROBE: std::cell::RefCell<Option<(dochub_hub_spin::SqliteProbe, std::time::Instant)>> =
        const { std::cell::RefCell::new(None) };
}

/// Probes the hub's SQLite database on the kept connection, or on a new one when there is none
/// younger than [`SQLITE_PROBE_LIFE`]. A failure drops the connection, so the next probe opens
/// the file again.
#[cfg(not(feature = "edge"))]
fn probe_sqlite() -> Result<(), String> {
    SQLITE_PROBE.with_borrow_mut(|kept| {
        let (probe, opened) = match kept.take() {
            Some((probe, opened)) if opened.elapsed() < SQLITE_PROBE_LIFE => (probe, opened),
            _ => (
                dochub_hub_spin::SqliteProbe::open()?,
                std::time::Instant::now(),
            ),
        };
        probe.probe()?;
        *kept = Some((probe, opened));
        Ok(())
    })
}
