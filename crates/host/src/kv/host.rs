//! `fermyon:spin/key-value@2.0.0` and `wasi:keyvalue@0.2.0-draft2` over [`KvStore`].

use wasmtime::component::Resource;

use super::{KvError, KvStore};
use crate::bindings::{spin_key_value as spin, wasi_atomics, wasi_batch, wasi_store};
use crate::state::SpinCtx;

/// A `fermyon:spin/key-value` store handle.
pub struct SpinStore(KvStore);

/// A `wasi:keyvalue/store` bucket handle.
pub struct Bucket(KvStore);

/// A `wasi:keyvalue/atomics` compare-and-swap handle: the value seen when it was made.
pub struct Cas {
    store: KvStore,
    key: String,
    current: Option<Vec<u8>>,
}

impl SpinCtx {
    /// Spin refuses labels the component did not list, and labels the app has no store for.
    fn open_store(&self, label: &str) -> Result<KvStore, OpenError> {
        if !self.component.key_value_stores.iter().any(|l| l == label) {
            return Err(OpenError::AccessDenied);
        }
        self.kv.get(label).cloned().ok_or(OpenError::NoSuchStore)
    }
}

enum OpenError {
    AccessDenied,
    NoSuchStore,
}

fn spin_error(e: KvError) -> spin::Error {
    spin::Error::Other(e.to_string())
}

fn wasi_error(e: KvError) -> wasi_store::Error {
    wasi_store::Error::Other(e.to_string())
}

fn table_error(e: wasmtime::component::ResourceTableError) -> wasmtime::Error {
    wasmtime::Error::from(e)
}

impl spin::Host for SpinCtx {}

impl spin::HostStore for SpinCtx {
    async fn open(
        &mut self,
        label: String,
    ) -> wasmtime::Result<Result<Resource<SpinStore>, spin::Error>> {
        let store = match self.open_store(&label) {
            Ok(store) => store,
            Err(OpenError::AccessDenied) => return Ok(Err(spin::Error::AccessDenied)),
            Err(OpenError::NoSuchStore) => return Ok(Err(spin::Error::NoSuchStore)),
        };
        Ok(Ok(self
            .table
            .push(SpinStore(store))
            .map_err(table_error)?))
    }

    async fn get(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.get(&key).await.map_err(spin_error))
    }

    async fn set(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.set(&key, &value).await.map_err(spin_error))
    }

    async fn delete(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
    ) -> wasmtime::Result<Result<(), spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.delete(&key).await.map_err(spin_error))
    }

    async fn exists(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
    ) -> wasmtime::Result<Result<bool, spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.exists(&key).await.map_err(spin_error))
    }

    async fn get_keys(
        &mut self,
        this: Resource<SpinStore>,
    ) -> wasmtime::Result<Result<Vec<String>, spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.keys().await.map_err(spin_error))
    }

    async fn drop(&mut self, this: Resource<SpinStore>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl wasi_store::Host for SpinCtx {
    async fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<Bucket>, wasi_store::Error>> {
        let store = match self.open_store(&identifier) {
            Ok(store) => store,
            Err(OpenError::AccessDenied) => return Ok(Err(wasi_store::Error::AccessDenied)),
            Err(OpenError::NoSuchStore) => return Ok(Err(wasi_store::Error::NoSuchStore)),
        };
        Ok(Ok(self.table.push(Bucket(store)).map_err(table_error)?))
    }
}

impl wasi_store::HostBucket for SpinCtx {
    async fn get(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.get(&key).await.map_err(wasi_error))
    }

    async fn set(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.set(&key, &value).await.map_err(wasi_error))
    }

    async fn delete(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.delete(&key).await.map_err(wasi_error))
    }

    async fn exists(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store.exists(&key).await.map_err(wasi_error))
    }

    async fn list_keys(
        &mut self,
        this: Resource<Bucket>,
        // Every key comes back in one response, so a cursor never needs to be followed.
        _cursor: Option<String>,
    ) -> wasmtime::Result<Result<wasi_store::KeyResponse, wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        Ok(store
            .keys()
            .await
            .map(|keys| wasi_store::KeyResponse { keys, cursor: None })
            .map_err(wasi_error))
    }

    async fn drop(&mut self, this: Resource<Bucket>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl wasi_atomics::Host for SpinCtx {
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        Ok(store.increment(&key, delta).await.map_err(wasi_error))
    }

    async fn swap(
        &mut self,
        cas: Resource<Cas>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_atomics::CasError>> {
        let (store, key, expected) = {
            let cas = self.table.get(&cas)?;
            (cas.store.clone(), cas.key.clone(), cas.current.clone())
        };
        match store
            .compare_and_swap(&key, expected.as_deref(), &value)
            .await
        {
            Ok(true) => {
                self.table.delete(cas)?;
                Ok(Ok(()))
            }
            Ok(false) => {
                // Hand the handle back refreshed, so `current` shows what won and a retry can succeed.
                let now = store.get(&key).await;
                match now {
                    Ok(now) => {
                        self.table.get_mut(&cas)?.current = now;
                        Ok(Err(wasi_atomics::CasError::CasFailed(cas)))
                    }
                    Err(e) => {
                        self.table.delete(cas)?;
                        Ok(Err(wasi_atomics::CasError::StoreError(wasi_error(e))))
                    }
                }
            }
            Err(e) => {
                self.table.delete(cas)?;
                Ok(Err(wasi_atomics::CasError::StoreError(wasi_error(e))))
            }
        }
    }
}

impl wasi_atomics::HostCas for SpinCtx {
    async fn new(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<Cas>, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        let current = match store.get(&key).await {
            Ok(current) => current,
            Err(e) => return Ok(Err(wasi_error(e))),
        };
        let cas = Cas {
            store,
            key,
            current,
        };
        Ok(Ok(self.table.push(cas).map_err(table_error)?))
    }

    async fn current(
        &mut self,
        this: Resource<Cas>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_store::Error>> {
        Ok(Ok(self.table.get(&this)?.current.clone()))
    }

    async fn drop(&mut self, this: Resource<Cas>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl wasi_batch::Host for SpinCtx {
    async fn get_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<Vec<(String, Option<Vec<u8>>)>, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        // Spin returns only the keys that exist.
        Ok(match store.get_many(keys.clone()).await {
            Ok(values) => Ok(keys
                .into_iter()
                .zip(values)
                .filter(|(_, v)| v.is_some())
                .collect()),
            Err(e) => Err(wasi_error(e)),
        })
    }

    async fn set_many(
        &mut self,
        bucket: Resource<Bucket>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        for (key, value) in key_values {
            if let Err(e) = store.set(&key, &value).await {
                return Ok(Err(wasi_error(e)));
            }
        }
        Ok(Ok(()))
    }

    async fn delete_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        for key in keys {
            if let Err(e) = store.delete(&key).await {
                return Ok(Err(wasi_error(e)));
            }
        }
        Ok(Ok(()))
    }
}
