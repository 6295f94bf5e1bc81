//! `--emulate akamai-functions`: run an app inside the published limits of a Spin edge host, so
//! that what is too big, too slow or not offered there fails here first.
//!
//! The figures, and the pages that publish them, are [`dochub_edge_limits`]'s (`dochub check
//! --target` reads the same ones); this module applies them. What the pages do not say (what
//! the platform answers when a body is too big, how a rate limit shows) is emulated as a
//! failure the app must survive:
//!
//! | Published | Here |
//! |---|---|
//! | App size | the start is refused when the components plus the files they mount (each distinct file once, as a registry push stores it) pass it, naming the largest |
//! | Memory per request | `--max-instance-memory` is set to it |
//! | Request handler duration | `--request-timeout` is set to it, and a body still being sent that long after the request arrived is cut off |
//! | Request and response size | a request body over it is answered `413` before any component runs; a response whose length says more is replaced by a `500`, and a streamed one is cut off there (the client sees an incomplete response) |
//! | SQLite storage: not supported | a component that imports `spin:sqlite` (or `fermyon:spin/sqlite`) or declares `sqlite_databases` is refused at start |
//! | Key-value: store and batch, one label | a component that imports `wasi:keyvalue/atomics`, or names another store, is refused at start |
//! | Runtime configuration: not supported | `--runtime-config-file` is refused |
//! | Key-value: value and key sizes | a larger `set` fails with an error naming the limit |
//! | Key-value: reads and writes per second per app | operations beyond that in one second fail with an error naming the limit |
//! | PostgreSQL, MySQL, outbound HTTP and Redis, variables | linked as usual |
//!
//! Any import not in [`SUPPORTED_IMPORTS`], and any WASI 0.3 import, is refused, naming it: the
//! component would not load on the platform, and a refusal at start says so before a deploy does.

use std::future::Future;
use std::path::PathBuf;

use anyhow::bail;
use dochub_edge_limits::{AppSize, KvQuota, mib};
pub use dochub_edge_limits::{Platform, SUPPORTED_IMPORTS};
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::limits::Limits;

/// `limits` with the platform's memory, duration and body limits in place of their own.
pub fn limits(platform: Platform, limits: &Limits) -> Limits {
    Limits {
        max_instance_memory: platform.max_instance_memory(),
        request_timeout: Some(platform.request_duration()),
        max_body_bytes: Some(platform.max_body_bytes()),
        ..limits.clone()
    }
}

/// Refuses a component that declares SQLite databases where the platform has none, or names a
/// key-value store other than the one it allows.
pub fn check_component(
    platform: Platform,
    id: &str,
    sqlite_databases: &[String],
    key_value_stores: &[String],
) -> anyhow::Result<()> {
    let allowed = platform.key_value_label();
    if let Some(label) = key_value_stores.iter().find(|l| *l != allowed) {
        bail!(
            "component `{id}` names the key-value store `{label}`, but {} allows only the \
             label `{allowed}` (--emulate {})",
            platform.title(),
            platform.name()
        );
    }
    if !platform.offers_sqlite() && !sqlite_databases.is_empty() {
        bail!(
            "component `{id}` declares sqlite_databases = {sqlite_databases:?}, but {} offers \
             no SQLite storage (--emulate {})",
            platform.title(),
            platform.name()
        );
    }
    Ok(())
}

/// Refuses an app whose `files` (the component sources and every mounted file, each distinct
/// content once) pass the platform's app size; else returns the app's size.
pub fn check_app_size(platform: Platform, files: &[PathBuf]) -> anyhow::Result<u64> {
    let mut size = AppSize::default();
    for file in files {
        size.add(file)?;
    }
    if size.total() > platform.max_app_bytes() {
        let largest = size
            .largest(5)
            .iter()
            .map(|(bytes, path)| format!("{} ({})", path.display(), mib(*bytes)))
            .collect::<Vec<_>>()
            .join(", ");
        bail!(
            "the app is {} but {} takes at most {} (--emulate {}); largest files: {largest}",
            mib(size.total()),
            platform.title(),
            mib(platform.max_app_bytes()),
            platform.name()
        );
    }
    Ok(size.total())
}

/// Counts key-value operations per second across an app and refuses what passes a [`KvQuota`].
#[derive(Debug)]
pub struct KvMeter {
    quota: KvQuota,
    platform: &'static str,
    window: std::sync::Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    second: u64,
    reads: u32,
    writes: u32,
}

impl KvMeter {
    /// A meter for `platform`'s quota.
    pub fn new(platform: Platform) -> KvMeter {
        KvMeter {
            quota: platform.kv_quota(),
            platform: platform.title(),
            window: Default::default(),
        }
    }

    /// Admits a read of each of `keys`.
    pub fn read<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
        let mut count = 0;
        for key in keys {
            self.check_key(key)?;
            count += 1;
        }
        self.take(count, 0)
    }

    /// Admits writes of `pairs` (a delete is a write with no value).
    pub fn write<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
    ) -> Result<(), String> {
        let mut count = 0;
        for (key, value) in pairs {
            self.check_key(key)?;
            if let Some(value) = value
                && value.len() > self.quota.max_value_bytes
            {
                return Err(format!(
                    "value of {} bytes for key `{}`: {} takes values of at most {} bytes",
                    value.len(),
                    key.escape_debug(),
                    self.platform,
                    self.quota.max_value_bytes
                ));
            }
            count += 1;
        }
        self.take(0, count)
    }

    fn check_key(&self, key: &str) -> Result<(), String> {
        if key.len() > self.quota.max_key_bytes {
            return Err(format!(
                "a key of {} bytes: {} takes keys of at most {} bytes",
                key.len(),
                self.platform,
                self.quota.max_key_bytes
            ));
        }
        Ok(())
    }

    fn take(&self, reads: u32, writes: u32) -> Result<(), String> {
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
        if window.second != second {
            *window = Window {
                second,
                ..Window::default()
            };
        }
        if window.reads + reads > self.quota.reads_per_second {
            return Err(format!(
                "more than {} key-value reads in one second: {} allows no more per app",
                self.quota.reads_per_second, self.platform
            ));
        }
        if window.writes + writes > self.quota.writes_per_second {
            return Err(format!(
                "more than {} key-value writes in one second: {} allows no more per app",
                self.quota.writes_per_second, self.platform
            ));
        }
        window.reads += reads;
        window.writes += writes;
        Ok(())
    }
}

/// The files an app is made of: each component's source and the folders it sees mounted.
pub(crate) fn app_files(sources: &[PathBuf], mounts: &[(PathBuf, String)]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = sources.to_vec();
    files.extend(mounts.iter().map(|(host, _)| host.clone()));
    files.sort();
    files.dedup();
    files
}

/// The import names of a compiled component.
pub(crate) fn import_names(
    engine: &wasmtime::Engine,
    component: &wasmtime::component::Component,
) -> Vec<String> {
    component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// A response body held to the platform's limits: at most `max_bytes` (then it ends with an
/// error, so the client sees an aborted response, never a short one that looks whole), and no
/// byte after `until` (the wall-clock end of the request: the platform ends a handler after
/// its duration whether or not the body is moving).
pub(crate) fn cap_response(
    body: HyperOutgoingBody,
    max_bytes: u64,
    until: tokio::time::Instant,
    what: String,
) -> HyperOutgoingBody {
    http_body_util::BodyExt::boxed_unsync(Capped {
        inner: body,
        left: max_bytes,
        max_bytes,
        end: Box::pin(tokio::time::sleep_until(until)),
        what,
    })
}

struct Capped {
    inner: HyperOutgoingBody,
    left: u64,
    max_bytes: u64,
    end: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The component and path, for the log.
    what: String,
}

impl hyper::body::Body for Capped {
    type Data = bytes::Bytes;
    type Error = ErrorCode;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, ErrorCode>>> {
        use std::task::Poll;
        if self.end.as_mut().poll(cx).is_ready() {
            tracing::warn!(
                "{}: the response was still being sent when the request's time ran out; cut off",
                self.what
            );
            return Poll::Ready(Some(Err(ErrorCode::ConnectionTerminated)));
        }
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            let len = data.len() as u64;
            if len > self.left {
                tracing::error!(
                    "{}: the response body passed {} bytes, the emulated platform's limit; cut off",
                    self.what,
                    self.max_bytes
                );
                return Poll::Ready(Some(Err(ErrorCode::HttpResponseBodySize(Some(
                    self.max_bytes,
                )))));
            }
            self.left -= len;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_value_meter_refuses_big_values_long_keys_and_the_51st_write() {
        let meter = KvMeter::new(Platform::AkamaiFunctions);
        let big = vec![0u8; 1_000_001];
        assert!(
            meter
                .write([("k", Some(&big[..]))])
                .unwrap_err()
                .contains("1000000 bytes")
        );
        let long = "k".repeat(8_001);
        assert!(
            meter
                .read([long.as_str()])
                .unwrap_err()
                .contains("8000 bytes")
        );
        // A second boundary may fall between the writes: then all 60 pass in two windows,
        // and the test looks again.
        for _ in 0..3 {
            let meter = KvMeter::new(Platform::AkamaiFunctions);
            let passed = (0..60)
                .filter(|_| meter.write([("k", Some(&b"v"[..]))]).is_ok())
                .count();
            if passed == 50 {
                return;
            }
        }
        panic!("the write quota was not applied");
    }
}
