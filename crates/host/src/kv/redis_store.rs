//! A key-value store on Redis, sending the commands Spin v4.0.2's Redis store sends
//! (`crates/key-value-redis/src/store.rs`), so it succeeds and fails where Spin's does.

use redis::aio::MultiplexedConnection;

use super::{KvError, SwapError};

/// A connection to one Redis server, shared by every request.
#[derive(Clone)]
pub struct RedisStore {
    client: redis::Client,
    conn: MultiplexedConnection,
}

/// A compare-and-swap's own connection: Redis scopes `WATCH` to a connection.
pub struct RedisCas {
    conn: MultiplexedConnection,
}

impl RedisStore {
    /// Connects (and checks the connection with `PING`).
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let _: String = redis::cmd("PING").query_async(&mut conn).await?;
        Ok(RedisStore { client, conn })
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("GET").arg(key).query_async(&mut conn).await?)
    }

    pub async fn exists(&self, key: &str) -> Result<bool, KvError> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("EXISTS").arg(key).query_async(&mut conn).await?)
    }

    /// Spin sends `KEYS <key>…` here (not `MGET`), so do we: see the module docs of `kv`.
    pub async fn get_many(
        &self,
        keys: Vec<String>,
    ) -> Result<Vec<(String, Option<Vec<u8>>)>, KvError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        Ok(redis::cmd("KEYS").arg(keys).query_async(&mut conn).await?)
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> Result<(), KvError> {
        let mut conn = self.conn.clone();
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    pub async fn set_many(&self, pairs: Vec<(String, Vec<u8>)>) -> Result<(), KvError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let _: () = redis::cmd("MSET").arg(pairs).query_async(&mut conn).await?;
        Ok(())
    }

    pub async fn delete_many(&self, keys: Vec<String>) -> Result<(), KvError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let _: i64 = redis::cmd("DEL").arg(keys).query_async(&mut conn).await?;
        Ok(())
    }

    pub async fn keys(&self) -> Result<Vec<String>, KvError> {
        let mut conn = self.conn.clone();
        let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut conn).await?;
        keys.sort();
        Ok(keys)
    }

    pub async fn increment(&self, key: &str, delta: i64) -> Result<i64, KvError> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("INCRBY")
            .arg(key)
            .arg(delta)
            .query_async(&mut conn)
            .await?)
    }

    /// A compare-and-swap gets a connection of its own, as in Spin.
    pub async fn new_cas(&self) -> Result<RedisCas, KvError> {
        Ok(RedisCas {
            conn: self.client.get_multiplexed_async_connection().await?,
        })
    }
}

impl RedisCas {
    /// `WATCH key`, then `GET key`.
    pub async fn current(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let mut conn = self.conn.clone();
        let _: () = redis::cmd("WATCH").arg(key).query_async(&mut conn).await?;
        Ok(redis::cmd("GET").arg(key).query_async(&mut conn).await?)
    }

    /// `MULTI SET EXEC`, then `UNWATCH key`, which Redis rejects: the swap reports `CasFailed`
    /// after its write, as Spin's does.
    pub async fn swap(&self, key: &str, value: &[u8]) -> Result<(), SwapError> {
        let mut conn = self.conn.clone();
        let written: Result<(), redis::RedisError> = redis::pipe()
            .atomic()
            .set(key, value)
            .query_async(&mut conn)
            .await;
        let unwatched: Result<(), redis::RedisError> =
            redis::cmd("UNWATCH").arg(key).query_async(&mut conn).await;
        match (written, unwatched) {
            (Ok(()), Ok(())) => Ok(()),
            _ => Err(SwapError::CasFailed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Runs against the Redis server on 127.0.0.1:6379; keys carry a unique prefix.
    async fn store() -> Option<RedisStore> {
        match RedisStore::connect("redis://127.0.0.1:6379").await {
            Ok(s) => Some(s),
            Err(e) if std::env::var_os("CI").is_none() => {
                eprintln!("skipping: no Redis on 127.0.0.1:6379 ({e})");
                None
            }
            Err(e) => panic!("Redis is required under CI: {e}"),
        }
    }

    fn unique(name: &str) -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        format!("dochub-host-test:{nanos}:{name}")
    }

    #[tokio::test]
    async fn increment_is_atomic_and_decimal() {
        let Some(s) = store().await else { return };
        let counter = unique("n");
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let s = s.clone();
            let counter = counter.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..50 {
                    s.increment(&counter, 1).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(s.get(&counter).await.unwrap().unwrap(), b"200");
        assert!(s.exists(&counter).await.unwrap());
        assert!(s.keys().await.unwrap().contains(&counter));
        s.delete_many(vec![counter.clone()]).await.unwrap();
        assert!(!s.exists(&counter).await.unwrap());
    }

    #[tokio::test]
    async fn swap_reports_failure_after_its_write_as_spins_does() {
        let Some(s) = store().await else { return };
        let key = unique("cas");
        // Two first swaps: both WATCH an absent key. The first lands, the second's EXEC is
        // aborted by the first's write. Both report failure.
        let a = s.new_cas().await.unwrap();
        let b = s.new_cas().await.unwrap();
        assert_eq!(a.current(&key).await.unwrap(), None);
        assert_eq!(b.current(&key).await.unwrap(), None);
        assert!(matches!(
            a.swap(&key, b"a").await,
            Err(SwapError::CasFailed)
        ));
        assert!(matches!(
            b.swap(&key, b"b").await,
            Err(SwapError::CasFailed)
        ));
        assert_eq!(s.get(&key).await.unwrap().unwrap(), b"a");
        // Without `current()` nothing is watched: an unconditional write, still "failed".
        let c = s.new_cas().await.unwrap();
        assert!(matches!(
            c.swap(&key, b"c").await,
            Err(SwapError::CasFailed)
        ));
        assert_eq!(s.get(&key).await.unwrap().unwrap(), b"c");
        s.delete_many(vec![key]).await.unwrap();
    }

    #[tokio::test]
    async fn get_many_fails_like_spins() {
        let Some(s) = store().await else { return };
        let (k1, k2) = (unique("m1"), unique("m2"));
        s.set_many(vec![
            (k1.clone(), b"1".to_vec()),
            (k2.clone(), b"2".to_vec()),
        ])
        .await
        .unwrap();
        assert!(s.get_many(vec![k1.clone(), k2.clone()]).await.is_err());
        assert_eq!(s.get_many(Vec::new()).await.unwrap(), Vec::new());
        s.delete_many(vec![k1, k2]).await.unwrap();
    }
}
