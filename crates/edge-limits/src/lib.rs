//! The published limits of the Spin edge hosts dochub deploys to, written once for the two tools
//! that apply them: `dochub check --target` (whether a content tree and its build fit) and
//! `dochub-host --emulate` (a local run inside them). Neither keeps figures of its own.
//!
//! Akamai Functions (formerly Fermyon Wasm Functions; the same platform) publishes its limits on
//! its "Quotas and limits" page (<https://techdocs.akamai.com/akamai-functions/docs/quotas-and-limits>),
//! in the Fermyon Wasm Functions FAQ (<https://developer.fermyon.com/wasm-functions/faq>) and on
//! its key-value page (<https://developer.fermyon.com/wasm-functions/using-key-value-store>).
//! Each figure below is one line of those pages, read as strictly as the page allows: where it
//! says "MB" the smaller reading (10^6 bytes) is taken, so what fits here fits there as far as
//! the published facts go.
//!
//! | Published | Here |
//! |---|---|
//! | App size: 50 MiB | [`Platform::max_app_bytes`], measured by [`AppSize`] |
//! | Memory per request: 128 MiB | [`Platform::max_instance_memory`] |
//! | Request handler duration: 30 s | [`Platform::request_duration`] |
//! | Request and response size: 10 MiB | [`Platform::max_body_bytes`] |
//! | SQLite storage: not supported | [`Platform::offers_sqlite`]; `spin:sqlite` is not in [`SUPPORTED_IMPORTS`] |
//! | Key-value: `wasi:keyvalue` store and batch, "the only label allowed is `default`" | [`Platform::key_value_label`]; `wasi:keyvalue/atomics` is not in [`SUPPORTED_IMPORTS`] |
//! | "Runtime configuration is not supported" | [`Platform::takes_runtime_config`] |
//! | Key-value: 1 MB values, 8 KB keys | [`KvQuota::max_value_bytes`], [`KvQuota::max_key_bytes`] |
//! | Key-value: 50 writes and 1,000 reads per second per app | [`KvQuota::writes_per_second`], [`KvQuota::reads_per_second`] |
//! | PostgreSQL, MySQL, outbound HTTP and Redis, variables | [`SUPPORTED_IMPORTS`] |
//! | WASI 0.2 (no page names WASI 0.3, which Spin v4.0.2 also runs) | [`Platform::refused_imports`] refuses `wasi:*@0.3` |
//!
//! ```
//! use dochub_edge_limits::Platform;
//! let edge = Platform::from_name("akamai-functions").unwrap();
//! assert_eq!(edge.max_app_bytes(), 50 << 20);
//! assert_eq!(edge.kv_quota().writes_per_second, 50);
//! assert_eq!(
//!     edge.refused_imports(["spin:sqlite/sqlite@3.0.0"]),
//!     ["spin:sqlite/sqlite@3.0.0 (SQLite storage is not offered)"]
//! );
//! ```
#![deny(missing_docs)]

mod app_size;

use std::time::Duration;

pub use app_size::{AppSize, mib};

/// A Spin edge host whose published limits dochub knows.
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
    /// The platform for a name as `--emulate` and `--target` take it.
    pub fn from_name(name: &str) -> Result<Platform, String> {
        match name {
            "akamai-functions" | "fermyon-wasm-functions" => Ok(Platform::AkamaiFunctions),
            other => Err(format!(
                "unknown platform `{other}`; known: akamai-functions"
            )),
        }
    }

    /// The platform's name, as `--emulate` and `--target` take it.
    pub const fn name(self) -> &'static str {
        match self {
            Platform::AkamaiFunctions => "akamai-functions",
        }
    }

    /// The platform's name for people.
    pub const fn title(self) -> &'static str {
        match self {
            Platform::AkamaiFunctions => "Akamai Functions",
        }
    }

    /// The largest app (its components and every file they mount), in bytes: 50 MiB.
    pub const fn max_app_bytes(self) -> u64 {
        50 << 20
    }

    /// The largest request or response body, in bytes: 10 MiB.
    pub const fn max_body_bytes(self) -> u64 {
        10 << 20
    }

    /// The linear memory one request's instance may grow to, in bytes: 128 MiB.
    pub const fn max_instance_memory(self) -> usize {
        128 << 20
    }

    /// How long a request's handler may run: 30 s.
    pub const fn request_duration(self) -> Duration {
        Duration::from_secs(30)
    }

    /// The key-value quotas: 1 MB values, 8 KB keys, 50 writes and 1,000 reads a second.
    pub const fn kv_quota(self) -> KvQuota {
        KvQuota {
            max_key_bytes: 8_000,
            max_value_bytes: 1_000_000,
            writes_per_second: 50,
            reads_per_second: 1_000,
        }
    }

    /// The one key-value store label a component may name.
    pub const fn key_value_label(self) -> &'static str {
        "default"
    }

    /// Whether a component may use SQLite databases.
    pub const fn offers_sqlite(self) -> bool {
        false
    }

    /// Whether an app may bring a runtime configuration file.
    pub const fn takes_runtime_config(self) -> bool {
        false
    }

    /// What is wrong with a component's imports there: one line per import the platform does
    /// not offer, with the reason where one is known; empty when it offers them all.
    pub fn refused_imports<'a>(self, imports: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        imports
            .into_iter()
            .filter(|name| {
                is_wasi_0_3(name) || !SUPPORTED_IMPORTS.iter().any(|p| name.starts_with(p))
            })
            .map(|name| {
                if is_wasi_0_3(name) {
                    return format!(
                        "{name} (WASI 0.3 is not offered: the published worlds are WASI 0.2's)"
                    );
                }
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
}

/// A WASIp3 import (`wasi:http/types@0.3.0-rc-2026-03-15`, say), which a component built with
/// spin-sdk 6 or later has.
fn is_wasi_0_3(import: &str) -> bool {
    import.starts_with("wasi:")
        && import
            .split_once('@')
            .is_some_and(|(_, version)| version.starts_with("0.3"))
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
            "wasi:http/types@0.3.0-rc-2026-03-15",
            "wasi:cli/environment@0.3.0",
        ]);
        assert_eq!(
            refused,
            [
                "wasi:keyvalue/atomics@0.2.0-draft2 (key-value atomics (only store and batch are offered) is not offered)",
                "spin:sqlite/sqlite@3.0.0 (SQLite storage is not offered)",
                "example:made/up@1.0.0 (not among the interfaces offered)",
                "wasi:http/types@0.3.0-rc-2026-03-15 (WASI 0.3 is not offered: the published worlds are WASI 0.2's)",
                "wasi:cli/environment@0.3.0 (WASI 0.3 is not offered: the published worlds are WASI 0.2's)",
            ]
        );
    }

    #[test]
    fn names_round_trip_and_the_old_name_still_counts() {
        let platform = Platform::AkamaiFunctions;
        assert_eq!(Platform::from_name(platform.name()), Ok(platform));
        assert_eq!(Platform::from_name("fermyon-wasm-functions"), Ok(platform));
        assert!(Platform::from_name("cloud").is_err());
    }
}
