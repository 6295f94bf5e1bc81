//! Spin's default key-value store: one SQLite table, shared by labels, in Spin's file format.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use super::KvError;

/// An open SQLite file: one connection behind a lock, as Spin keeps it.
#[derive(Clone)]
pub struct SqliteFile {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteFile {
    /// Opens (creating if needed) the database file and Spin's table. Like Spin, no pragma is
    /// set: the rollback journal and rusqlite's 5 s busy timeout.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Self::with_table(Connection::open(path)?)
    }

    /// A private in-memory store, as Spin gives a `type = "spin"` store without `path`.
    pub fn open_in_memory() -> anyhow::Result<Self> {
        Self::with_table(Connection::open_in_memory()?)
    }

    fn with_table(conn: Connection) -> anyhow::Result<Self> {
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

const UPSERT: &str = "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                      ON CONFLICT (store, key) DO UPDATE SET value = excluded.value";

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
        // In place, as Spin's store runs each call (see `crate::blocking`).
        crate::blocking::in_place(|| {
            let mut conn = self
                .conn
                .lock()
                .map_err(|_| KvError::Backend("sqlite connection poisoned".into()))?;
            f(&mut conn, &self.label)
        })
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

    /// The keys that exist, with their values, in the order asked.
    pub async fn get_many(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<(String, Option<Vec<u8>>)>, KvError> {
        self.with_conn(move |conn, label| {
            let mut stmt = conn
                .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?;
            let mut found = Vec::new();
            for key in keys {
                let value: Option<Vec<u8>> = stmt
                    .query_row(params![label, key], |row| row.get(0))
                    .optional()?;
                if value.is_some() {
                    found.push((key, value));
                }
            }
            Ok(found)
        })
        .await
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> Result<(), KvError> {
        self.set_many(vec![(key.to_string(), value.to_vec())]).await
    }

    pub async fn set_many(&self, pairs: Vec<(String, Vec<u8>)>) -> Result<(), KvError> {
        self.with_conn(move |conn, label| {
            let tx = conn.transaction()?;
            for (key, value) in pairs {
                tx.prepare_cached(UPSERT)?
                    .execute(params![label, key, value])?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    pub async fn delete_many(&self, keys: Vec<String>) -> Result<(), KvError> {
        self.with_conn(move |conn, label| {
            let tx = conn.transaction()?;
            for key in keys {
                tx.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                    .execute(params![label, key])?;
            }
            tx.commit()?;
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

    /// Spin's increment: a deferred transaction reading and rewriting an 8-byte little-endian i64.
    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64, KvError> {
        let key = key.to_string();
        self.with_conn(move |conn, label| {
            let tx = conn.transaction()?;
            let current: Option<Vec<u8>> = tx
                .query_row(
                    "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                    params![label, key],
                    |row| row.get(0),
                )
                .optional()?;
            let current = match current {
                None => 0,
                Some(bytes) => decode_counter(&bytes)?,
            };
            let next = current
                .checked_add(delta)
                .ok_or_else(|| KvError::Backend(format!("counter `{key}` would overflow")))?;
            tx.execute(UPSERT, params![label, key, next.to_le_bytes().to_vec()])?;
            tx.commit()?;
            Ok(next)
        })
        .await
    }

    /// Spin's swap: conditional on `seen` when the guest read a value, else an upsert.
    /// Returns whether exactly one row changed.
    pub async fn swap(&self, key: &str, seen: Option<&[u8]>, new: &[u8]) -> Result<bool, KvError> {
        let (key, seen, new) = (key.to_string(), seen.map(<[u8]>::to_vec), new.to_vec());
        self.with_conn(move |conn, label| {
            let changed = match seen {
                Some(seen) => conn.execute(
                    "UPDATE spin_key_value SET value = ?4 WHERE store = ?1 AND key = ?2 AND value = ?3",
                    params![label, key, seen, new],
                )?,
                None => conn.execute(UPSERT, params![label, key, new])?,
            };
            Ok(changed == 1)
        })
        .await
    }
}

/// Reads a counter as Spin stores it: exactly 8 bytes, little-endian.
pub fn decode_counter(bytes: &[u8]) -> Result<i64, KvError> {
    let bytes: [u8; 8] = bytes.try_into().map_err(|_| {
        KvError::Backend(format!(
            "incorrect length: a counter is 8 bytes (little-endian i64), this value has {}",
            bytes.len()
        ))
    })?;
    Ok(i64::from_le_bytes(bytes))
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
            vec![
                ("b".to_string(), Some(b"\xff\x00".to_vec())),
                ("a".to_string(), Some(b"1".to_vec()))
            ]
        );
        assert_eq!(s.keys().await.unwrap(), vec!["a", "b"]);
        s.delete_many(vec!["a".into(), "missing".into()])
            .await
            .unwrap();
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
    async fn counters_are_spins_8_byte_little_endian() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        assert_eq!(s.increment("n", 5).await.unwrap(), 5);
        assert_eq!(s.increment("n", -7).await.unwrap(), -2);
        assert_eq!(s.get("n").await.unwrap().unwrap(), (-2i64).to_le_bytes());
        // The row is where Spin looks for it: table spin_key_value, columns store/key/value.
        let conn = Connection::open(dir.path().join("kv.db")).unwrap();
        let value: Vec<u8> = conn
            .query_row(
                "SELECT value FROM spin_key_value WHERE store = 'default' AND key = 'n'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(value, (-2i64).to_le_bytes());
        // A decimal counter (as this host wrote before) is refused, as Spin refuses it.
        s.set("old", b"42").await.unwrap();
        let err = s.increment("old", 1).await.unwrap_err();
        assert!(err.to_string().contains("incorrect length"), "{err}");
        assert_eq!(s.get("old").await.unwrap().unwrap(), b"42");
    }

    #[tokio::test]
    async fn increments_across_connections_are_never_lost() {
        let dir = tempfile::tempdir().unwrap();
        // Two files opened separately behave like two host processes. As under Spin (a deferred
        // transaction), one may be refused with "database is locked"; none is lost.
        let a = store(dir.path());
        let b = store(dir.path());
        let mut tasks = Vec::new();
        for s in [a.clone(), b.clone(), a, b] {
            tasks.push(tokio::spawn(async move {
                let mut done = 0;
                for _ in 0..50 {
                    match s.increment("n", 1).await {
                        Ok(_) => done += 1,
                        Err(e) => assert!(e.to_string().contains("locked"), "{e}"),
                    }
                }
                done
            }));
        }
        let mut done = 0;
        for t in tasks {
            done += t.await.unwrap();
        }
        assert!(done > 0);
        assert_eq!(store(dir.path()).increment("n", 0).await.unwrap(), done);
    }

    #[tokio::test]
    async fn swap_is_conditional_only_over_a_value_that_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        // Nothing read (absent key): an upsert, twice.
        assert!(s.swap("k", None, b"1").await.unwrap());
        assert!(s.swap("k", None, b"2").await.unwrap());
        assert_eq!(s.get("k").await.unwrap().unwrap(), b"2");
        assert!(!s.swap("k", Some(b"1"), b"3").await.unwrap());
        assert!(s.swap("k", Some(b"2"), b"3").await.unwrap());
        assert_eq!(s.get("k").await.unwrap().unwrap(), b"3");
    }
}
