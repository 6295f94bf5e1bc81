//! `fermyon:spin/key-value@2.0.0` and `wasi:keyvalue@0.2.0-draft2` over [`KvStore`].

use std::sync::Arc;

use wasmtime::component::{Resource, ResourceTable};

use super::{Cas, KvError, KvStore, KvStores, SwapError};
use crate::bindings::{spin_key_value as spin, wasi_atomics, wasi_batch, wasi_store};
use crate::component::ComponentConfig;

/// A `fermyon:spin/key-value` store handle.
pub struct SpinStore(KvStore);

/// A `wasi:keyvalue/store` bucket handle.
pub struct Bucket(KvStore);

/// A `wasi:keyvalue/atomics` compare-and-swap handle.
pub struct CasHandle {
    store: KvStore,
    cas: Cas,
}

/// `fermyon:spin/key-value` and `wasi:keyvalue` for one request: the handles it opened, over
/// the app's stores, limited to the labels its component lists.
pub struct KvCtx {
    table: ResourceTable,
    kv: KvStores,
    component: Arc<ComponentConfig>,
}

impl KvCtx {
    /// A request of `component`, with no store open yet.
    pub fn new(kv: KvStores, component: Arc<ComponentConfig>) -> Self {
        KvCtx {
            table: ResourceTable::new(),
            kv,
            component,
        }
    }

    /// Spin refuses labels the component did not list, and labels the app has no store for.
    fn open_store(&self, label: &str) -> Result<KvStore, OpenError> {
        if !self.component.key_value_stores.iter().any(|l| l == label) {
            return Err(OpenError::AccessDenied);
        }
        let store = self.kv.get(label).cloned().ok_or(OpenError::NoSuchStore)?;
        if let KvStore::Sqlite(_) = store {
            // Spin opens a SQLite-backed store in place (see `crate::blocking`).
            crate::blocking::in_place(|| ());
        }
        Ok(store)
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

impl spin::Host for KvCtx {}

impl spin::HostStore for KvCtx {
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
        if let Err(e) = self.kv.admit_read([key.as_str()]) {
            return Ok(Err(spin_error(e)));
        }
        Ok(store.get(&key).await.map_err(spin_error))
    }

    async fn set(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self
            .kv
            .admit_write([(key.as_str(), Some(value.as_slice()))])
        {
            return Ok(Err(spin_error(e)));
        }
        Ok(store.set(&key, &value).await.map_err(spin_error))
    }

    async fn delete(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
    ) -> wasmtime::Result<Result<(), spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_write([(key.as_str(), None)]) {
            return Ok(Err(spin_error(e)));
        }
        Ok(store.delete(&key).await.map_err(spin_error))
    }

    async fn exists(
        &mut self,
        this: Resource<SpinStore>,
        key: String,
    ) -> wasmtime::Result<Result<bool, spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_read([key.as_str()]) {
            return Ok(Err(spin_error(e)));
        }
        Ok(store.exists(&key).await.map_err(spin_error))
    }

    async fn get_keys(
        &mut self,
        this: Resource<SpinStore>,
    ) -> wasmtime::Result<Result<Vec<String>, spin::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_read([""]) {
            return Ok(Err(spin_error(e)));
        }
        Ok(store.keys().await.map_err(spin_error))
    }

    async fn drop(&mut self, this: Resource<SpinStore>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl wasi_store::Host for KvCtx {
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

impl wasi_store::HostBucket for KvCtx {
    async fn get(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_read([key.as_str()]) {
            return Ok(Err(wasi_error(e)));
        }
        Ok(store.get(&key).await.map_err(wasi_error))
    }

    async fn set(
        &mut self,
        this: Resource<Bucket>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self
            .kv
            .admit_write([(key.as_str(), Some(value.as_slice()))])
        {
            return Ok(Err(wasi_error(e)));
        }
        Ok(store.set(&key, &value).await.map_err(wasi_error))
    }

    async fn delete(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_write([(key.as_str(), None)]) {
            return Ok(Err(wasi_error(e)));
        }
        Ok(store.delete(&key).await.map_err(wasi_error))
    }

    async fn exists(
        &mut self,
        this: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wasi_store::Error>> {
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_read([key.as_str()]) {
            return Ok(Err(wasi_error(e)));
        }
        Ok(store.exists(&key).await.map_err(wasi_error))
    }

    async fn list_keys(
        &mut self,
        this: Resource<Bucket>,
        cursor: Option<String>,
    ) -> wasmtime::Result<Result<wasi_store::KeyResponse, wasi_store::Error>> {
        // Every key comes back in one response; Spin refuses a cursor, so does this host.
        if cursor.is_some() {
            return Ok(Err(wasi_store::Error::Other(
                "list_keys: cursor not supported".into(),
            )));
        }
        let store = self.table.get(&this)?.0.clone();
        if let Err(e) = self.kv.admit_read([""]) {
            return Ok(Err(wasi_error(e)));
        }
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

impl wasi_atomics::Host for KvCtx {
    async fn increment(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        if let Err(e) = self.kv.admit_write([(key.as_str(), None)]) {
            return Ok(Err(wasi_error(e)));
        }
        Ok(store.increment(&key, delta).await.map_err(wasi_error))
    }

    async fn swap(
        &mut self,
        cas: Resource<CasHandle>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_atomics::CasError>> {
        let handle = self.table.delete(cas)?;
        match handle.cas.swap(&value).await {
            Ok(()) => Ok(Ok(())),
            Err(SwapError::Other(e)) => Ok(Err(wasi_atomics::CasError::StoreError(wasi_error(e)))),
            Err(SwapError::CasFailed) => {
                // As Spin: a fresh handle on the same key, its `current()` already read.
                let fresh = async {
                    let mut cas = handle.store.new_cas(handle.cas.key()).await?;
                    cas.current().await?;
                    Ok::<_, KvError>(cas)
                };
                match fresh.await {
                    Ok(cas) => {
                        let fresh = CasHandle {
                            store: handle.store,
                            cas,
                        };
                        let fresh = self.table.push(fresh).map_err(table_error)?;
                        Ok(Err(wasi_atomics::CasError::CasFailed(fresh)))
                    }
                    Err(e) => Ok(Err(wasi_atomics::CasError::StoreError(wasi_error(e)))),
                }
            }
        }
    }
}

impl wasi_atomics::HostCas for KvCtx {
    async fn new(
        &mut self,
        bucket: Resource<Bucket>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<CasHandle>, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        let cas = match store.new_cas(&key).await {
            Ok(cas) => cas,
            Err(e) => return Ok(Err(wasi_error(e))),
        };
        Ok(Ok(self
            .table
            .push(CasHandle { store, cas })
            .map_err(table_error)?))
    }

    async fn current(
        &mut self,
        this: Resource<CasHandle>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_store::Error>> {
        let handle = self.table.get_mut(&this)?;
        Ok(handle.cas.current().await.map_err(wasi_error))
    }

    async fn drop(&mut self, this: Resource<CasHandle>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl wasi_batch::Host for KvCtx {
    async fn get_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<Vec<(String, Option<Vec<u8>>)>, wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        if let Err(e) = self.kv.admit_read(keys.iter().map(String::as_str)) {
            return Ok(Err(wasi_error(e)));
        }
        if keys.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        Ok(store.get_many(keys).await.map_err(wasi_error))
    }

    async fn set_many(
        &mut self,
        bucket: Resource<Bucket>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        if let Err(e) = self.kv.admit_write(
            key_values
                .iter()
                .map(|(k, v)| (k.as_str(), Some(v.as_slice()))),
        ) {
            return Ok(Err(wasi_error(e)));
        }
        if key_values.is_empty() {
            return Ok(Ok(()));
        }
        Ok(store.set_many(key_values).await.map_err(wasi_error))
    }

    async fn delete_many(
        &mut self,
        bucket: Resource<Bucket>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<(), wasi_store::Error>> {
        let store = self.table.get(&bucket)?.0.clone();
        if let Err(e) = self.kv.admit_write(keys.iter().map(|k| (k.as_str(), None))) {
            return Ok(Err(wasi_error(e)));
        }
        if keys.is_empty() {
            return Ok(Ok(()));
        }
        Ok(store.delete_many(keys).await.map_err(wasi_error))
    }
}
