//! The small key-value interface the hub needs, and an in-memory store for tests.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// A key-value store failed; the message says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key-value store: {0}")]
pub struct StoreError(pub String);

/// What the hub needs from a key-value store: plain reads and writes, an atomic counter and a
/// compare-and-swap on one key.
///
/// This is the shape of `wasi:keyvalue` (store, atomics, batch), so the Spin component implements it
/// in a few lines; [`MemoryStore`] implements it for tests.
pub trait KeyValue {
    /// A compare-and-swap in progress on one key (see [`KeyValue::cas_begin`]).
    type Cas;

    /// The value of `key`, if any.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// The values of `keys`, in the same order. One round trip where the store allows it.
    fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        keys.iter().map(|k| self.get(k)).collect()
    }

    /// Sets `key` to `value`.
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError>;

    /// Deletes `key`; deleting a missing key is not an error.
    fn delete(&self, key: &str) -> Result<(), StoreError>;

    /// Deletes every key of `keys`.
    fn delete_many(&self, keys: &[String]) -> Result<(), StoreError> {
        keys.iter().try_for_each(|k| self.delete(k))
    }

    /// Every key that starts with `prefix`, in no particular order.
    fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError>;

    /// Atomically adds `delta` to the counter at `key` (a missing key counts as 0) and returns the
    /// new value. Concurrent increments never lose an update.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError>;

    /// The value of the counter at `key` (0 when missing), without changing it.
    fn counter(&self, key: &str) -> Result<i64, StoreError> {
        self.increment(key, 0)
    }

    /// Starts a compare-and-swap on `key`: returns a handle and the value now stored.
    fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError>;

    /// Sets the key of `cas` to `value` if it still holds the value [`KeyValue::cas_begin`]
    /// returned (absent included). `Ok(false)` when another writer got there first.
    fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<bool, StoreError>;
}

/// Forwards every operation, overridden ones included, to the wrapped store.
macro_rules! forward_key_value {
    ($($ty:ty),*) => {$(
        impl<T: KeyValue + ?Sized> KeyValue for $ty {
            type Cas = T::Cas;
            fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
                (**self).get(key)
            }
            fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
                (**self).get_many(keys)
            }
            fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
                (**self).set(key, value)
            }
            fn delete(&self, key: &str) -> Result<(), StoreError> {
                (**self).delete(key)
            }
            fn delete_many(&self, keys: &[String]) -> Result<(), StoreError> {
                (**self).delete_many(keys)
            }
            fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
                (**self).list_keys(prefix)
            }
            fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
                (**self).increment(key, delta)
            }
            fn counter(&self, key: &str) -> Result<i64, StoreError> {
                (**self).counter(key)
            }
            fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError> {
                (**self).cas_begin(key)
            }
            fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<bool, StoreError> {
                (**self).cas_swap(cas, value)
            }
        }
    )*};
}

forward_key_value!(&T, std::sync::Arc<T>);

/// A thread-safe in-memory [`KeyValue`] store: the reference for the semantics the hub relies on,
/// used by the unit tests (concurrency included).
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: Mutex<BTreeMap<String, Vec<u8>>>,
}

/// A compare-and-swap handle of [`MemoryStore`]: the key and the value seen when it began.
#[derive(Debug)]
pub struct MemoryCas {
    key: String,
    seen: Option<Vec<u8>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many keys the store holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the store holds no key.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Every key, sorted.
    pub fn keys(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        // A panic while holding the lock leaves the map consistent (every operation is one map call).
        self.map
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl KeyValue for MemoryStore {
    type Cas = MemoryCas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.lock().get(key).cloned())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.lock().insert(key.to_owned(), value.to_vec());
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        self.lock().remove(key);
        Ok(())
    }

    fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .lock()
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let mut map = self.lock();
        let old = match map.get(key) {
            None => 0,
            Some(v) => parse_decimal(v)
                .ok_or_else(|| StoreError(format!("`{key}` does not hold a counter")))?,
        };
        let new = old
            .checked_add(delta)
            .ok_or_else(|| StoreError(format!("counter `{key}` overflows")))?;
        map.insert(key.to_owned(), new.to_string().into_bytes());
        Ok(new)
    }

    fn cas_begin(&self, key: &str) -> Result<(MemoryCas, Option<Vec<u8>>), StoreError> {
        let seen = self.lock().get(key).cloned();
        let cas = MemoryCas {
            key: key.to_owned(),
            seen: seen.clone(),
        };
        Ok((cas, seen))
    }

    fn cas_swap(&self, cas: MemoryCas, value: &[u8]) -> Result<bool, StoreError> {
        let mut map = self.lock();
        if map.get(&cas.key) != cas.seen.as_ref() {
            return Ok(false);
        }
        map.insert(cas.key, value.to_vec());
        Ok(true)
    }
}

/// Decodes a counter as hosts store it: decimal ASCII (Redis, most hosts), or the 8 little-endian
/// bytes of an `i64` (Spin's own SQLite store). An ASCII digit is never a zero byte, and the top
/// byte of any counter below 2^56 is zero, so the two never look alike.
pub fn decode_counter(bytes: &[u8]) -> Option<i64> {
    if let [.., 0] = bytes
        && let Ok(le) = <[u8; 8]>::try_from(bytes)
    {
        return Some(i64::from_le_bytes(le));
    }
    parse_decimal(bytes)
}

fn parse_decimal(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cas_fails_when_the_value_changed_since_begin() {
        let s = MemoryStore::new();
        let (cas, seen) = s.cas_begin("k").unwrap();
        assert_eq!(seen, None);
        s.set("k", b"other").unwrap();
        assert!(!s.cas_swap(cas, b"mine").unwrap());
        assert_eq!(s.get("k").unwrap().as_deref(), Some(&b"other"[..]));

        let (cas, seen) = s.cas_begin("k").unwrap();
        assert_eq!(seen.as_deref(), Some(&b"other"[..]));
        assert!(s.cas_swap(cas, b"mine").unwrap());
        assert_eq!(s.get("k").unwrap().as_deref(), Some(&b"mine"[..]));
    }

    #[test]
    fn cas_on_a_missing_key_fails_once_someone_creates_it() {
        let s = MemoryStore::new();
        let (a, _) = s.cas_begin("k").unwrap();
        let (b, _) = s.cas_begin("k").unwrap();
        assert!(s.cas_swap(a, b"a").unwrap());
        assert!(!s.cas_swap(b, b"b").unwrap());
        assert_eq!(s.get("k").unwrap().as_deref(), Some(&b"a"[..]));
    }

    #[test]
    fn increments_from_many_threads_are_all_counted() {
        let s = std::sync::Arc::new(MemoryStore::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        s.increment("n", 1).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(s.counter("n").unwrap(), 8000);
        assert_eq!(s.increment("n", -8000).unwrap(), 0);
    }

    #[test]
    fn list_keys_returns_exactly_the_prefix() {
        let s = MemoryStore::new();
        for k in ["a:1", "a:2", "a", "ab:1", "b:1"] {
            s.set(k, b"x").unwrap();
        }
        let mut keys = s.list_keys("a:").unwrap();
        keys.sort();
        assert_eq!(keys, ["a:1", "a:2"]);
        s.delete_many(&keys).unwrap();
        assert_eq!(s.keys(), ["a", "ab:1", "b:1"]);
    }

    #[test]
    fn counters_decode_in_both_host_encodings() {
        assert_eq!(decode_counter(b"42"), Some(42));
        assert_eq!(decode_counter(b"12345678"), Some(12_345_678));
        assert_eq!(decode_counter(&42i64.to_le_bytes()), Some(42));
        assert_eq!(decode_counter(&0i64.to_le_bytes()), Some(0));
        assert_eq!(decode_counter(b"x"), None);
        assert_eq!(decode_counter(b""), None);
    }
}
