//! Key-value stores: Spin's default SQLite store, or Redis, chosen per label by the runtime config.
//!
//! Counters written by `increment` are stored as decimal ASCII on every backend, so a guest that
//! reads one with `get` sees the same bytes whichever store is behind the label.

mod host;
mod redis_store;
mod sqlite;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

pub use host::{Bucket, Cas, SpinStore};

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

/// One opened store.
#[derive(Clone)]
pub enum KvStore {
    /// A table in a SQLite file shared by every label of that file.
    Sqlite(sqlite::SqliteStore),
    /// A Redis server.
    Redis(redis_store::RedisStore),
}

impl KvStore {
    /// Returns the value of `key`, if any.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        match self {
            KvStore::Sqlite(s) => s.get(key).await,
            KvStore::Redis(s) => s.get(key).await,
        }
    }

    /// Returns the values of `keys`, in order, in one round trip.
    pub async fn get_many(&self, keys: Vec<String>) -> Result<Vec<Option<Vec<u8>>>, KvError> {
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

    /// Deletes `key`; deleting a missing key is not an error.
    pub async fn delete(&self, key: &str) -> Result<(), KvError> {
        match self {
            KvStore::Sqlite(s) => s.delete(key).await,
            KvStore::Redis(s) => s.delete(key).await,
        }
    }

    /// Whether `key` has a value.
    pub async fn exists(&self, key: &str) -> Result<bool, KvError> {
        Ok(self.get(key).await?.is_some())
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

    /// Atomically sets `key` to `new` if its value is still `expected` (`None`: absent).
    /// Returns whether the swap happened.
    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, KvError> {
        match self {
            KvStore::Sqlite(s) => s.compare_and_swap(key, expected, new).await,
            KvStore::Redis(s) => s.compare_and_swap(key, expected, new).await,
        }
    }
}

/// The stores of a running app, by label.
#[derive(Clone, Default)]
pub struct KvStores {
    stores: Arc<HashMap<String, KvStore>>,
}

/// How one label is backed, as read from a runtime-config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// A SQLite file.
    Sqlite {
        /// The database file.
        path: std::path::PathBuf,
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
                    path: state_dir.join("sqlite_key_value.db"),
                },
                None => anyhow::bail!(
                    "key-value store `{label}` is not configured: only `default` is built in; \
                     add `[key_value_store.{label}]` to the runtime config"
                ),
            };
            let store = match config {
                StoreConfig::Sqlite { path } => {
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
        })
    }

    /// The store with this label, if the app has one.
    pub fn get(&self, label: &str) -> Option<&KvStore> {
        self.stores.get(label)
    }
}
