//! `--emulate akamai-functions`: run an app inside the published limits of a Spin edge host, so
//! that what is too big, too slow or not offered there fails here first.
//!
//! Akamai Functions (formerly Fermyon Wasm Functions; the same platform) publishes its limits on
//! its "Quotas and limits" page (<https://techdocs.akamai.com/akamai-functions/docs/quotas-and-limits>) and
//! in the Fermyon Wasm Functions FAQ (<https://developer.fermyon.com/wasm-functions/faq>) and
//! key-value page (<https://developer.fermyon.com/wasm-functions/using-key-value-store>). Each
//! rule below is one line of those pages, applied as strictly as the page allows: where it says
//! "MB" the smaller reading (10^6 bytes) is taken, so a test that passes here passes there as
//! far as the published facts go. What the pages do not say (what the platform answers when a
//! body is too big, how a rate limit shows) is emulated as a failure the app must survive:
//!
//! | Published | Here |
//! |---|---|
//! | App size: 50 MiB | the start is refused when the components plus the files they mount (each distinct file once, as a registry push stores it) pass 50 MiB, naming the largest |
//! | Memory per request: 128 MiB | `--max-instance-memory` is 128 MiB |
//! | Request handler duration: 30 s | `--request-timeout` is 30 s, and a body still being sent 30 s after the request arrived is cut off |
//! | Request and response size: 10 MiB | a request body over it is answered `413` before any component runs; a response whose length says more is replaced by a `500`, and a streamed one is cut off there (the client sees an incomplete response) |
//! | SQLite storage: not supported | a component that imports `spin:sqlite` (or `fermyon:spin/sqlite`) or declares `sqlite_databases` is refused at start |
//! | Key-value: `wasi:keyvalue` store and batch, "the only label allowed is `default`" | a component that imports `wasi:keyvalue/atomics`, or names another store, is refused at start |
//! | "Runtime configuration is not supported" | `--runtime-config-file` is refused |
//! | Key-value: 1 MB values, 8 KB keys | a larger `set` fails with an error naming the limit |
//! | Key-value: 50 writes and 1,000 reads per second per app | operations beyond that in one second fail with an error naming the limit |
//! | PostgreSQL, MySQL, outbound HTTP and Redis, variables | linked as usual |
//!
//! Any import not in [`SUPPORTED_IMPORTS`] is refused, naming it: the component would not load
//! on the platform, and a refusal at start says so before a deploy does.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;

use std::future::Future;

use wasmtime_wasi_http::Error as ErrorCode;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::limits::Limits;

/// A Spin host whose published limits this host can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Akamai Functions (formerly Fermyon Wasm Functions).
    AkamaiFunctions,
}

/// The interfaces Akamai Functions offers a component, as prefixes of import names (the
/// version follows the `@`): WASI 0.2's command and HTTP worlds, Spin's variables, outbound
/// PostgreSQL, MySQL and Redis, outbound HTTP, and the key-value store and batch interfaces.
pub const SUPPORTED_IMPORTS: &[&str] = &[
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:http/",
    "wasi:config/store",
    "wasi:keyvalue/store",
    "wasi:keyvalue/batch",
    "fermyon:spin/variables",
    "fermyon:spin/key-value",
    "fermyon:spin/postgres",
    "fermyon:spin/mysql",
    "fermyon:spin/http",
    "fermyon:spin/redis",
    "spin:redis/",
    "spin:postgres/",
    "spin:mysql/",
    "spin:variables/",
    "spin:key-value/",
];

/// Why an import is not offered, for the imports a Spin app is most likely to have.
const UNSUPPORTED_BECAUSE: &[(&str, &str)] = &[
    (
        "wasi:keyvalue/atomics",
        "key-value atomics (only store and batch are offered)",
    ),
    ("spin:sqlite/", "SQLite storage"),
    ("fermyon:spin/sqlite", "SQLite storage"),
    ("wasi:sockets/", "raw sockets"),
];

/// Key-value quotas per app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvQuota {
    /// The longest key, in bytes.
    pub max_key_bytes: usize,
    /// The largest value, in bytes.
    pub max_value_bytes: usize,
    /// Writes (set, delete, each pair of a batch) per second, across the app.
    pub writes_per_second: u32,
    /// Reads (get, exists, list, each key of a batch) per second, across the app.
    pub reads_per_second: u32,
}

impl Platform {
    /// The platform for a `--emulate` value.
    pub fn from_name(name: &str) -> Result<Platform, String> {
        match name {
            "akamai-functions" | "fermyon-wasm-functions" => Ok(Platform::AkamaiFunctions),
            other => Err(format!(
                "unknown platform `{other}`; known: akamai-functions"
            )),
        }
    }

    /// The platform's name, as `--emulate` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Platform::AkamaiFunctions => "akamai-functions",
        }
    }

    /// The largest app, in bytes: 50 MiB.
    pub fn max_app_bytes(self) -> u64 {
        50 << 20
    }

    /// The largest request or response body, in bytes: 10 MiB.
    pub fn max_body_bytes(self) -> u64 {
        10 << 20
    }

    /// The key-value quotas: 1 MB values, 8 KB keys, 50 writes and 1,000 reads a second.
    pub fn kv_quota(self) -> KvQuota {
        KvQuota {
            max_key_bytes: 8_000,
            max_value_bytes: 1_000_000,
            writes_per_second: 50,
            reads_per_second: 1_000,
        }
    }

    /// `limits` with the platform's memory, duration and body limits in place of their own.
    pub fn limits(self, limits: &Limits) -> Limits {
        Limits {
            max_instance_memory: 128 << 20,
            request_timeout: Some(Duration::from_secs(30)),
            max_body_bytes: Some(self.max_body_bytes()),
            ..limits.clone()
        }
    }

    /// What is wrong with a component's imports here: one line per import the platform does not
    /// offer; empty when it offers them all.
    pub fn refused_imports<'a>(self, imports: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        imports
            .into_iter()
            .filter(|name| !SUPPORTED_IMPORTS.iter().any(|p| name.starts_with(p)))
            .map(|name| {
                match UNSUPPORTED_BECAUSE
                    .iter()
                    .find(|(p, _)| name.starts_with(p))
                {
                    Some((_, why)) => format!("{name} ({why} is not offered)"),
                    None => format!("{name} (not among the interfaces offered)"),
                }
            })
            .collect()
    }

    /// Refuses a component that declares SQLite databases or a key-value store but `default`.
    pub fn check_component(
        self,
        id: &str,
        sqlite_databases: &[String],
        key_value_stores: &[String],
    ) -> anyhow::Result<()> {
        if let Some(label) = key_value_stores.iter().find(|l| *l != "default") {
            bail!(
                "component `{id}` names the key-value store `{label}`, but {} allows only the \
                 label `default` (--emulate {})",
                self.title(),
                self.name()
            );
        }
        if !sqlite_databases.is_empty() {
            bail!(
                "component `{id}` declares sqlite_databases = {sqlite_databases:?}, but {} offers \
                 no SQLite storage (--emulate {})",
                self.title(),
                self.name()
            );
        }
        Ok(())
    }

    /// The platform's name for people.
    pub fn title(self) -> &'static str {
        match self {
            Platform::AkamaiFunctions => "Akamai Functions",
        }
    }

    /// Refuses an app whose `files` (the component sources and every mounted file, each
    /// distinct content once) pass the app size.
    pub fn check_app_size(self, files: &[PathBuf]) -> anyhow::Result<u64> {
        let size = AppSize::measure(files)?;
        if size.total > self.max_app_bytes() {
            let largest = size
                .largest
                .iter()
                .map(|(bytes, path)| format!("{} ({})", path.display(), mib(*bytes)))
                .collect::<Vec<_>>()
                .join(", ");
            bail!(
                "the app is {} but {} takes at most {} (--emulate {}); largest files: {largest}",
                mib(size.total),
                self.title(),
                mib(self.max_app_bytes()),
                self.name()
            );
        }
        Ok(size.total)
    }
}

/// `bytes` in MiB, one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// What an app weighs, each distinct file content counted once.
struct AppSize {
    total: u64,
    /// The five largest distinct files.
    largest: Vec<(u64, PathBuf)>,
}

impl AppSize {
    /// Walks `roots` (files, or folders read recursively, links followed as a copy follows them).
    fn measure(roots: &[PathBuf]) -> anyhow::Result<AppSize> {
        use std::hash::{DefaultHasher, Hasher};
        let mut seen: HashMap<(u64, u64), PathBuf> = HashMap::new();
        let mut stack: Vec<PathBuf> = roots.to_vec();
        while let Some(path) = stack.pop() {
            let meta = std::fs::metadata(&path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            if meta.is_dir() {
                for entry in std::fs::read_dir(&path)? {
                    stack.push(entry?.path());
                }
                continue;
            }
            let bytes = std::fs::read(&path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let mut hasher = DefaultHasher::new();
            hasher.write(&bytes);
            seen.entry((bytes.len() as u64, hasher.finish()))
                .or_insert(path);
        }
        let mut files: Vec<(u64, PathBuf)> = seen.into_iter().map(|((n, _), p)| (n, p)).collect();
        let total = files.iter().map(|(n, _)| n).sum();
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        files.truncate(5);
        Ok(AppSize {
            total,
            largest: files,
        })
    }
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
    fn imports_outside_the_published_list_are_named_with_the_reason() {
        let refused = Platform::AkamaiFunctions.refused_imports([
            "wasi:http/types@0.2.0",
            "wasi:keyvalue/store@0.2.0-draft2",
            "wasi:keyvalue/atomics@0.2.0-draft2",
            "spin:sqlite/sqlite@3.0.0",
            "spin:postgres/postgres@3.0.0",
            "example:made/up@1.0.0",
        ]);
        assert_eq!(
            refused,
            [
                "wasi:keyvalue/atomics@0.2.0-draft2 (key-value atomics (only store and batch are offered) is not offered)",
                "spin:sqlite/sqlite@3.0.0 (SQLite storage is not offered)",
                "example:made/up@1.0.0 (not among the interfaces offered)",
            ]
        );
    }

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
