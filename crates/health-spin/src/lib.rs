//! What `/api/health` reads under Spin, for the two components that answer it: the `health`
//! component of `spin.toml` (WASIp2, whose answers never wait on a delayed ACK) and the `api`
//! (the edge build, and any manifest that routes `/api/health` to it).
//!
//! [`health`] takes the readings only a host can give: the app's first start from the
//! key-value store `default`, `SELECT 1` over outbound Postgres, and a probe of every store the
//! app keeps state in (the key-value store, and the hub's SQLite `default` or its PostgreSQL at
//! `hub_database_url`). Every store is probed at every request: a health answer is never a
//! memory of an earlier one.
//!
//! A reused instance (Spin v4 gives a WASIp3 one up to 128 requests) keeps the `default`
//! store's handle while it answers, and for a second each, the SQLite probe's connection and
//! the two addresses it reads besides the settings (`database_url`, `hub_database_url`).
//!
//! Configuration: the variables `database_url` and `hub_database_url`; when `database_url` is
//! empty, env `DATABASE_URL`, then `POSTGRES_HOST` / `POSTGRES_PORT` / `POSTGRES_USER` /
//! `POSTGRES_PASSWORD` / `POSTGRES_DB` / `POSTGRES_SSLMODE` (Spin connects with verified TLS
//! unless the address says `sslmode=disable`).
#![deny(missing_docs)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use dochub_app::api::{Database, Health, StoreReading, Stores};
use dochub_hub_spin::HubStore;
#[cfg(not(feature = "edge"))]
use dochub_spin_imports::atomics;
use dochub_spin_imports::{store, variables};

/// Key under which the app's first start (RFC 3339) is kept in the `default` store.
const STARTED_KEY: &str = "dochub:api:started_at";

/// Counter whose first increment elects the one request that records the first start.
#[cfg(not(feature = "edge"))]
const STARTED_ELECTION_KEY: &str = "dochub:api:started_at:ticket";

/// The readings of one health answer, for the component of version `version`, taken `now`.
pub fn health(version: &str, environment: &str, now: DateTime<Utc>) -> Health {
    let (started, key_value) = first_start(now);
    let settings = health_settings();
    Health::new(
        version,
        started,
        database(&settings.database_url),
        Stores {
            hub: hub_store(&settings.hub_database_url),
            key_value: StoreReading::read("key-value", key_value),
        },
        environment,
        now,
    )
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
    static DEFAULT_STORE: RefCell<Option<Rc<store::Bucket>>> =
        const { RefCell::new(None) };
}

/// The kept `default` store, opened now if there is none; a failed read drops it
/// ([`first_start`]), so that the next request opens it again.
fn default_store() -> Result<Rc<store::Bucket>, store::Error> {
    DEFAULT_STORE.with_borrow_mut(|kept| match kept {
        Some(bucket) => Ok(bucket.clone()),
        None => {
            let bucket = Rc::new(store::open("default")?);
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
                std::thread::sleep(Duration::from_millis(5 << attempt));
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

/// The two variables health reads besides the settings: `database_url` and `hub_database_url`.
/// Unreadable reads as unset, as for every setting with a default: the database is then
/// `unknown` and the hub's store SQLite.
#[derive(Clone, Default)]
struct HealthSettings {
    database_url: String,
    hub_database_url: String,
}

/// How long a reused instance keeps [`HealthSettings`]: as long as `dochub_http_wasip3` keeps
/// the settings, so that a changed address applies within a second. (A WASIp2 instance answers
/// one request and keeps nothing.)
const HEALTH_SETTINGS_LIFE: Duration = Duration::from_secs(1);

thread_local! {
    /// [`HealthSettings`] as this instance last read them, and when.
    static HEALTH_SETTINGS: RefCell<Option<(Instant, HealthSettings)>> =
        const { RefCell::new(None) };
}

/// [`HealthSettings`]: those read less than [`HEALTH_SETTINGS_LIFE`] ago, else read now, and
/// kept when both reads succeeded (a failed read is tried again by the next request).
fn health_settings() -> HealthSettings {
    let kept = HEALTH_SETTINGS.with_borrow(|kept| match kept {
        Some((read_at, settings)) if read_at.elapsed() < HEALTH_SETTINGS_LIFE => {
            Some(settings.clone())
        }
        _ => None,
    });
    if let Some(settings) = kept {
        return settings;
    }
    let read_at = Instant::now();
    let (database_url, hub_database_url) =
        (variables::get("database_url"), HubStore::read_setting());
    let kept = database_url.is_ok() && hub_database_url.is_ok();
    let settings = HealthSettings {
        database_url: database_url.unwrap_or_default(),
        hub_database_url: hub_database_url.unwrap_or_default(),
    };
    if kept {
        HEALTH_SETTINGS.set(Some((read_at, settings.clone())));
    }
    settings
}

/// The database URL: variable `database_url`, env `DATABASE_URL`, or `POSTGRES_*` parts.
fn database_address(url: &str) -> Option<String> {
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

fn database(url: &str) -> Database {
    let Some(address) = database_address(url) else {
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
fn hub_store(url: &str) -> StoreReading {
    match HubStore::of_setting(url) {
        store @ HubStore::Postgres(_) => {
            StoreReading::read("postgres", store.open().and_then(|db| db.probe()))
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
const SQLITE_PROBE_LIFE: Duration = Duration::from_secs(1);

#[cfg(not(feature = "edge"))]
thread_local! {
    /// The SQLite probe's connection and when it was opened, kept while it answers: under
    /// load a reused instance (Spin v4 gives one up to 128 requests) probes without opening
    /// the file each time, which made the probe create and delete the write-ahead log's files
    /// that the last connection to close removes.
    static SQLITE_PROBE: RefCell<Option<(dochub_hub_spin::OpenStore, Instant)>> =
        const { RefCell::new(None) };
}

/// Probes the hub's SQLite database on the kept connection, or on a new one when there is none
/// younger than [`SQLITE_PROBE_LIFE`]. A failure drops the connection, so the next probe opens
/// the file again.
#[cfg(not(feature = "edge"))]
fn probe_sqlite() -> Result<(), String> {
    SQLITE_PROBE.with_borrow_mut(|kept| {
        let (db, opened) = match kept.take() {
            Some((db, opened)) if opened.elapsed() < SQLITE_PROBE_LIFE => (db, opened),
            _ => (HubStore::Sqlite.open()?, Instant::now()),
        };
        db.probe()?;
        *kept = Some((db, opened));
        Ok(())
    })
}
