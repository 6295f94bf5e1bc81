//! A key-value store on Redis. Atomic operations are single commands or Lua scripts, which Redis
//! runs without interleaving, so several hosts can share one server.

use redis::aio::MultiplexedConnection;

use super::KvError;

const COMPARE_AND_SWAP: &str = r"
local current = redis.call('GET', KEYS[1])
if ARGV[1] == 'absent' then
  if current then return 0 end
elseif (not current) or current ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1
";

/// A connection to one Redis server, shared by every request.
#[derive(Clone)]
pub struct RedisStore {
    conn: MultiplexedConnection,
    cas: std::sync::Arc<redis::Script>,
}

impl RedisStore {
    /// Connects (and checks the connection with `PING`).
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let _: String = redis::cmd("PING").query_async(&mut conn).await?;
        Ok(RedisStore {
            conn,
            cas: std::sync::Arc::new(redis::Script::new(COMPARE_AND_SWAP)),
        })
    }

    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        let mut conn = self.conn.clone();
        Ok(redis::cmd("GET").arg(key).query_async(&mut conn).await?)
    }

    pub async fn get_many(&self, keys: Vec<String>) -> Result<Vec<Option<Vec<u8>>>, KvError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn.clone();
        Ok(redis::cmd("MGET").arg(keys).query_async(&mut conn).await?)
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

    pub async fn delete(&self, key: &str) -> Result<(), KvError> {
        let mut conn = self.conn.clone();
        let _: i64 = redis::cmd("DEL").arg(key).query_async(&mut conn).await?;
        Ok(())
    }

    pub async fn keys(&self) -> Result<Vec<String>, KvError> {
        let mut conn = self.conn.clone();
        let mut keys = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
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

    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> Result<bool, KvError> {
        let mut conn = self.conn.clone();
        let mut invocation = self.cas.key(key);
        match expected {
            Some(expected) => invocation.arg("value").arg(expected),
            None => invocation.arg("absent").arg(""),
        };
        let swapped: i64 = invocation.arg(new).invoke_async(&mut conn).await?;
        Ok(swapped == 1)
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
    async fn increment_and_cas_are_atomic() {
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

        let key = unique("cas");
        assert!(s.compare_and_swap(&key, None, b"1").await.unwrap());
        assert!(!s.compare_and_swap(&key, None, b"2").await.unwrap());
        assert!(!s.compare_and_swap(&key, Some(b"0"), b"2").await.unwrap());
        assert!(s.compare_and_swap(&key, Some(b"1"), b"\xff").await.unwrap());
        assert_eq!(s.get(&key).await.unwrap().unwrap(), b"\xff");
        assert!(s.keys().await.unwrap().contains(&key));
        let many = s
            .get_many(vec![key.clone(), unique("absent")])
            .await
            .unwrap();
        assert_eq!(many, vec![Some(b"\xff".to_vec()), None]);
        for k in [counter, key] {
            s.delete(&k).await.unwrap();
        }
    }
}
