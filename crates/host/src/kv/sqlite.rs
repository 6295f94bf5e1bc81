//! Spin's default key-value store: one SQLite table, shared by labels, safe across processes.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::KvError;

/// An open SQLite file.
#[derive(Clone)]
pub struct SqliteFile {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteFile {
    /// Opens (creating if needed) the database file and its table.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let conn = Connection::open(path)?;
        // WAL and a busy timeout let two hosts share one file without spurious "database is locked".
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS spin_key_value (
                store TEXT NOT NULL,
                key   TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (store, key)
            )",
        )?;
        Ok(SqliteFile {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The store with this label inside the file.
    pub fn store(&self, label: &str) -> SqliteStore {
        SqliteStore {
            conn: self.conn.clone(),
            label: Arc::from(label),
        }
    }
}

/// One label's rows.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    label: Arc<str>,
}

impl SqliteStore {
    async fn with_conn<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, &str) -> Result<T, KvError> + Send + 'static,
    ) -> Result<T, KvError> {
        let conn = self.conn.clone();
        let label = self.label.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn
                .lock()
                .map_err(|_| KvError::Backend("sqlite connection poisoned".into()))?;
            f(&mut conn, &label)
        })
        .await
        .map_err(|e| KvError::Backend(format!("sqlite task failed: {e}")))?
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let key = key.to_string();
        self.with_conn(move |conn, label| {
            Ok(conn
                .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .query_row(params![label, key], |row| row.get(0))
                .optional()?)
        })
        .await
    }

    pub async fn get_many(&self, keys: Vec<String>) -> Result<Vec<Option<Vec<u8>>>, KvError> {
        self.with_conn(move |conn, label| {
            let mut stmt = conn
                .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
            keys.iter()
                .map(|key| {
                    Ok(stmt
                        .query_row(params![label, key], |row| row.get(0))
                        .optional()?)
                })
                .collect()
        })
        .await
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> Result<(), KvError> {
        let (key, value) = (key.to_string(), value.to_vec());
        self.with_conn(move |conn, label| {
            conn.prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![label, key, value])?;
            Ok(())
        })
        .await
    }

    pub async fn delete(&self, key: &str) -> Result<(), KvError> {
        let key = key.to_string();
        self.with_conn(move |conn, label| {
            conn.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .execute(params![label, key])?;
            Ok(())
        })
        .await
    }

    pub async fn keys(&self) -> Result<Vec<String>, KvError> {
        self.with_conn(move |conn, label| {
            let mut stmt = conn
                .prepare_cached("SELECT key FROM spin_key_value WHERE store = ?1 ORDER BY key")?;
            let keys = stmt
                .query_map(params![label], |row| row.get(0))?
                .collect::<Result<Vec<String>, _>>()?;
            Ok(keys)
        })
        .await
    }

    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64, KvError> {
        let key = key.to_string();
        self.with_conn(move |conn, label| {
            // IMMEDIATE takes the write lock up front, so another process cannot interleave.
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current: Option<Vec<u8>> = tx
                .query_row(
                    "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                    params![label, key],
                    |row| row.get(0),
                )
                .optional()?;
            let current = match current {
                None => 0,
                Some(bytes) => parse_counter(&bytes)?,
            };
            let next = current
                .checked_add(delta)
                .ok_or_else(|| KvError::Backend(format!("counter `{key}` would overflow")))?;
            tx.execute(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                params![label, key, next.to_string().into_bytes()],
            )?;
            tx.commit()?;
            Ok(next)
        })
        .await
    }

    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, KvError> {
        let (key, expected, new) = (key.to_string(), expected.map(<[u8]>::to_vec), new.to_vec());
        self.with_conn(move |conn, label| {
            let changed = match expected {
                Some(expected) => conn.execute(
                    "UPDATE spin_key_value SET value = ?4 WHERE store = ?1 AND key = ?2 AND value = ?3",
                    params![label, key, expected, new],
                )?,
                None => conn.execute(
                    "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                     ON CONFLICT (store, key) DO NOTHING",
                    params![label, key, new],
                )?,
            };
            Ok(changed == 1)
        })
        .await
    }
}

/// Counters are decimal ASCII; anything else under a counter's key is the guest's mistake.
pub(super) fn parse_counter(bytes: &[u8]) -> Result<i64, KvError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| KvError::Backend("value is not an integer counter".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path) -> SqliteStore {
        SqliteFile::open(&dir.join("kv.db"))
            .unwrap()
            .store("default")
    }

    #[tokio::test]
    async fn set_get_delete_keys() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        assert_eq!(s.get("a").await.unwrap(), None);
        s.set("a", b"1").await.unwrap();
        s.set("b", b"\xff\x00").await.unwrap();
        assert_eq!(s.get("b").await.unwrap().unwrap(), b"\xff\x00");
        let many = s
            .get_many(vec!["b".into(), "x".into(), "a".into()])
            .await
            .unwrap();
        assert_eq!(
            many,
            vec![Some(b"\xff\x00".to_vec()), None, Some(b"1".to_vec())]
        );
        assert_eq!(s.keys().await.unwrap(), vec!["a", "b"]);
        s.delete("a").await.unwrap();
        s.delete("missing").await.unwrap();
        assert_eq!(s.keys().await.unwrap(), vec!["b"]);
    }

    #[tokio::test]
    async fn labels_are_separate() {
        let dir = tempfile::tempdir().unwrap();
        let file = SqliteFile::open(&dir.path().join("kv.db")).unwrap();
        file.store("one").set("k", b"1").await.unwrap();
        assert_eq!(file.store("two").get("k").await.unwrap(), None);
    }

    #[tokio::test]
    async fn increments_are_not_lost_across_connections() {
        let dir = tempfile::tempdir().unwrap();
        // Two files opened separately behave like two host processes.
        let a = store(dir.path());
        let b = store(dir.path());
        let mut tasks = Vec::new();
        for s in [a.clone(), b.clone(), a, b] {
            tasks.push(tokio::spawn(async move {
                for _ in 0..50 {
                    s.increment("n", 1).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(store(dir.path()).increment("n", 0).await.unwrap(), 200);
        assert_eq!(store(dir.path()).get("n").await.unwrap().unwrap(), b"200");
    }

    #[tokio::test]
    async fn compare_and_swap_only_on_expected_value() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        assert!(s.compare_and_swap("k", None, b"1").await.unwrap());
        assert!(!s.compare_and_swap("k", None, b"2").await.unwrap());
        assert!(!s.compare_and_swap("k", Some(b"0"), b"2").await.unwrap());
        assert!(s.compare_and_swap("k", Some(b"1"), b"2").await.unwrap());
        assert_eq!(s.get("k").await.unwrap().unwrap(), b"2");
    }
}
