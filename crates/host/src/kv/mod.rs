//! Key-value stores: Spin's default SQLite store, or Redis, chosen per label by the runtime config.
//!
//! Both behave as Spin v4.0.2's do, weaknesses included, so that what works here works under
//! `spin up` (read from `crates/key-value-spin/src/store.rs`, `crates/key-value-redis/src/store.rs`
//! and `crates/factor-key-value/src/host.rs`):
//!
//! - **SQLite** (`.spin/sqlite_key_value.db`, table `spin_key_value (store, key, value)`, one
//!   connection per file behind a lock, no pragmas, rusqlite's 5 s busy timeout). `increment`
//!   stores the counter as 8-byte little-endian i64; a value of any other length under a counter's
//!   key is an error (Spin panics there). Compare-and-swap compares against the value the guest
//!   last read with `cas.current()`; when that read found no value — or when the guest never called
//!   `current()` — `swap` is an unconditional upsert (`INSERT … ON CONFLICT DO UPDATE`) that always
//!   succeeds. Only a swap over a value that was read is conditional (`UPDATE … WHERE value = old`).
//!   So two "first" swaps of an absent key both succeed, the second overwriting the first.
//!   A `[key_value_store.<label>] type = "spin"` without `path` is an in-memory store.
//! - **Redis.** `current()` runs `WATCH key` + `GET key` on a connection of the handle's own;
//!   `swap` runs `MULTI SET EXEC` there, then `UNWATCH key`, which Redis rejects (UNWATCH takes no
//!   argument), so *every* swap reports `cas-failed`, whether or not its write landed (it lands
//!   unless the key changed since `current()`; redis-rs reads an aborted `EXEC` as success).
//!   `increment` is `INCRBY` (a decimal string, atomic across hosts). `get-many` sends
//!   `KEYS k1 k2 …`, which Redis refuses for more than one key and answers with key names for
//!   one, so it fails; this host sends the same command. Labels share the server's key space.
//!
//! After a failed swap the guest receives a fresh handle whose `current()` was already read, as
//! Spin hands back. The one deliberate difference: a wrong-length counter is an error here, where
//! Spin's panic poisons its store lock and every key-value call of the app fails from then on.
//!
//! Like Spin, this host runs each SQLite call inside tokio's `block_in_place` (see
//! [`crate::blocking`] for what that changes).

mod host;
mod redis_store;
mod sqlite;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

pub use host::{Bucket, CasHandle, KvCtx, SpinStore};

/// The error a store operation returns to a guest.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// The backend failed; the message says why.
    #[error("{0}")]
    Backend(String),
}

impl From<rusqlite::Error> for KvError {
    fn from(e: rusqlite::Error) -> Self {
        KvError::Backend(format!("sqlite: {e}"))
    }
}

impl From<redis::RedisError> for KvError {
    fn from(e: redis::RedisError) -> Self {
        KvError::Backend(format!("redis: {e}"))
    }
}

/// Why a swap did not report success.
#[derive(Debug)]
pub enum SwapError {
    /// The compare failed (or, on Redis, always: see the module docs).
    CasFailed,
    /// The backend failed.
    Other(KvError),
}

/// One opened store.
#[derive(Clone)]
pub enum KvStore {
    /// A table in a SQLite file shared by every label of that file.
    Sqlite(sqlite::SqliteStore),
    /// A Redis server.
    Redis(redis_store::RedisStore),
}

/// A compare-and-swap in progress on one key.
pub struct Cas {
    key: String,
    state: CasState,
}

enum CasState {
    /// The value read by the last `current()`; `None` until then, or when the key was absent.
    Sqlite {
        store: sqlite::SqliteStore,
        seen: Option<Vec<u8>>,
    },
    /// A connection of its own, on which `current()` WATCHes the key.
    Redis(redis_store::RedisCas),
}

impl Cas {
    /// Reads the key's value; on Redis, WATCHes it first.
    pub async fn current(&mut self) -> Result<Option<Vec<u8>>, KvError> {
        match &mut self.state {
            CasState::Sqlite { store, seen } => {
                let value = store.get(&self.key).await?;
                seen.clone_from(&value);
                Ok(value)
            }
            CasState::Redis(cas) => cas.current(&self.key).await,
        }
    }

    /// Writes `value` as Spin's backend would (see the module docs).
    pub async fn swap(&self, value: &[u8]) -> Result<(), SwapError> {
        match &self.state {
            CasState::Sqlite { store, seen } => {
                match store.swap(&self.key, seen.as_deref(), value).await {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(SwapError::CasFailed),
                    Err(e) => Err(SwapError::Other(e)),
                }
            }
            CasState::Redis(cas) => cas.swap(&self.key, value).await,
        }
    }

    /// The key this handle swaps.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl KvStore {
    /// Returns the value of `key`, if any.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        match self {
            KvStore::Sqlite(s) => s.get(key).await,
            KvStore::Redis(s) => s.get(key).await,
        }
    }

    /// Spin's `get-many`: the pairs it finds (SQLite: the keys that exist; Redis: see the docs).
    pub async fn get_many(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<(String, Option<Vec<u8>>)>, KvError> {
        match self {
            KvStore::Sqlite(s) => s.get_many(keys).await,
            KvStore::Redis(s) => s.get_many(keys).await,
        }
    }

    /// Sets `key` to `value`.
    pub async fn set(&self, key: &str, value: &[u8]) -> Result<(), KvError> {
        match self {
            KvStore::Sqlite(s) => s.set(key, value).await,
            KvStore::Redis(s) => s.set(key, value).await,
        }
    }

    /// Sets several keys (SQLite: in one transaction; Redis: `MSET`).
    pub async fn set_many(&self, pairs: Vec<(String, Vec<u8>)>) -> Result<(), KvError> {
        match self {
            KvStore::Sqlite(s) => s.set_many(pairs).await,
            KvStore::Redis(s) => s.set_many(pairs).await,
        }
    }

    /// Deletes `key`; deleting a missing key is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), KvError> {
        match self {
            KvStore::Sqlite(s) => s.delete_many(vec![key.to_string()]).await,
            KvStore::Redis(s) => s.delete_many(vec![key.to_string()]).await,
        }
    }

    /// Deletes several keys (SQLite: one transaction; Redis: one `DEL`).
    pub async fn delete_many(&self, keys: Vec<String>) -> Result<(), KvError> {
        match self {
            KvStore::Sqlite(s) => s.delete_many(keys).await,
            KvStore::Redis(s) => s.delete_many(keys).await,
        }
    }

    /// Whether `key` has a value.
    pub async fn exists(&self, key: &str) -> Result<bool, KvError> {
        match self {
            KvStore::Sqlite(s) => Ok(s.get(key).await?.is_some()),
            KvStore::Redis(s) => s.exists(key).await,
        }
    }

    /// Every key of the store.
    pub async fn keys(&self) -> Result<Vec<String>, KvError> {
        match self {
            KvStore::Sqlite(s) => s.keys().await,
            KvStore::Redis(s) => s.keys().await,
        }
    }

    /// Atomically adds `delta` to the counter at `key` (missing counts as 0) and returns the result.
    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64, KvError> {
        match self {
            KvStore::Sqlite(s) => s.increment(key, delta).await,
            KvStore::Redis(s) => s.increment(key, delta).await,
        }
    }

    /// Starts a compare-and-swap on `key` (nothing is read until [`Cas::current`]).
    pub async fn new_cas(&self, key: &str) -> Result<Cas, KvError> {
        let state = match self {
            KvStore::Sqlite(s) => CasState::Sqlite {
                store: s.clone(),
                seen: None,
            },
            KvStore::Redis(s) => CasState::Redis(s.new_cas().await?),
        };
        Ok(Cas {
            key: key.to_string(),
            state,
        })
    }
}

/// The stores of a running app, by label.
#[derive(Clone, Default)]
pub struct KvStores {
    stores: Arc<HashMap<String, KvStore>>,
    /// An edge host's quotas, under `--emulate`.
    meter: Option<Arc<crate::emulate::KvMeter>>,
}

/// How one label is backed, as read from a runtime-config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// A SQLite file, or an in-memory database when `None`.
    Sqlite {
        /// The database file.
        path: Option<std::path::PathBuf>,
    },
    /// A Redis server URL.
    Redis {
        /// `redis://host:port[/db]`.
        url: String,
    },
}

impl KvStores {
    /// Opens the stores for `labels`: those named in `configs` as configured, the label `default`
    /// (when not configured) as Spin does, in `<state_dir>/sqlite_key_value.db`.
    pub async fn open(
        labels: &[String],
        configs: &HashMap<String, StoreConfig>,
        state_dir: &Path,
    ) -> anyhow::Result<Self> {
        let mut stores = HashMap::new();
        let mut sqlite_files: HashMap<std::path::PathBuf, sqlite::SqliteFile> = HashMap::new();
        for label in labels {
            let config = match configs.get(label) {
                Some(config) => config.clone(),
                None if label == "default" => StoreConfig::Sqlite {
                    path: Some(state_dir.join("sqlite_key_value.db")),
                },
                None => anyhow::bail!(
                    "key-value store `{label}` is not configured: only `default` is built in; \
                     add `[key_value_store.{label}]` to the runtime config"
                ),
            };
            let store = match config {
                StoreConfig::Sqlite { path: None } => {
                    KvStore::Sqlite(sqlite::SqliteFile::open_in_memory()?.store(label))
                }
                StoreConfig::Sqlite { path: Some(path) } => {
                    let file = match sqlite_files.get(&path) {
                        Some(file) => file.clone(),
                        None => {
                            let file = sqlite::SqliteFile::open(&path).with_context(|| {
                                format!(
                                    "cannot open key-value store `{label}` at {}",
                                    path.display()
                                )
                            })?;
                            sqlite_files.insert(path.clone(), file.clone());
                            file
                        }
                    };
                    KvStore::Sqlite(file.store(label))
                }
                StoreConfig::Redis { url } => {
                    KvStore::Redis(redis_store::RedisStore::connect(&url).await.with_context(
                        || format!("cannot open key-value store `{label}` at {url}"),
                    )?)
                }
            };
            stores.insert(label.clone(), store);
        }
        Ok(KvStores {
            stores: Arc::new(stores),
            meter: None,
        })
    }

    /// The same stores, every operation first admitted by `meter`.
    pub fn metered(self, meter: crate::emulate::KvMeter) -> KvStores {
        KvStores {
            meter: Some(Arc::new(meter)),
            ..self
        }
    }

    /// The store with this label, if the app has one.
    pub fn get(&self, label: &str) -> Option<&KvStore> {
        self.stores.get(label)
    }

    /// Admits reads of `keys` under the emulated quota, if any.
    pub fn admit_read<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Result<(), KvError> {
        match &self.meter {
            Some(meter) => meter.read(keys).map_err(KvError::Backend),
            None => Ok(()),
        }
    }

    /// Admits writes of `pairs` (`None`: a delete) under the emulated quota, if any.
    pub fn admit_write<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
    ) -> Result<(), KvError> {
        match &self.meter {
            Some(meter) => meter.write(pairs).map_err(KvError::Backend),
            None => Ok(()),
        }
    }
}
