//! What each request's `Store` holds: WASI, WASI HTTP and the Spin interfaces' state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{
    RequestOptions, WasiBody, WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView,
};

use crate::bindings::spin_variables;
use crate::kv::KvStores;
use crate::postgres::PgPools;
use crate::sqlite::SqliteDatabases;

/// A component's configuration, resolved once at start-up.
#[derive(Debug, Clone, Default)]
pub struct ComponentConfig {
    /// The component id.
    pub id: String,
    /// Key-value labels it may open.
    pub key_value_stores: Vec<String>,
    /// SQLite database labels it may open.
    pub sqlite_databases: Vec<String>,
    /// Outbound hosts it may reach.
    pub allowed_outbound_hosts: Vec<String>,
    /// Its variables, rendered.
    pub variables: HashMap<String, String>,
    /// Its environment.
    pub environment: Vec<(String, String)>,
    /// Read-only directory mounts: host directory, guest path.
    pub mounts: Vec<(PathBuf, String)>,
}

/// State of the Spin interfaces for one request.
pub struct SpinCtx {
    /// Resources handed to the guest (stores, buckets, CAS handles, connections).
    pub table: ResourceTable,
    /// The component being run.
    pub component: Arc<ComponentConfig>,
    /// The app's key-value stores.
    pub kv: KvStores,
    /// The app's SQLite databases.
    pub sqlite: SqliteDatabases,
    /// SQLite connections this request holds open.
    pub sqlite_connections: usize,
    /// The app's PostgreSQL connection pools.
    pub pg: PgPools,
}

/// What every request of an app shares: its stores, databases and connection pools.
#[derive(Clone, Default)]
pub struct Services {
    /// Key-value stores by label.
    pub kv: KvStores,
    /// SQLite databases by label.
    pub sqlite: SqliteDatabases,
    /// PostgreSQL pools by address.
    pub pg: PgPools,
}

/// The data of one request's `Store`.
pub struct State {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    http_hooks: NoOutboundHttp,
    table: ResourceTable,
    /// Spin interfaces.
    pub spin: SpinCtx,
    /// Memory limits.
    pub limits: MemoryLimiter,
}

impl State {
    /// Prepares a fresh state for one request of `component`.
    pub fn new(
        component: Arc<ComponentConfig>,
        services: &Services,
        max_memory: usize,
    ) -> anyhow::Result<Self> {
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stdout().inherit_stderr();
        for (key, value) in &component.environment {
            wasi.env(key, value);
        }
        for (host, guest) in &component.mounts {
            wasi.preopened_dir(host, guest, FsPerms::ReadOnly)
                .map_err(|e| anyhow::anyhow!("cannot mount {} at {guest}: {e}", host.display()))?;
        }
        Ok(State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            http_hooks: NoOutboundHttp,
            table: ResourceTable::new(),
            spin: SpinCtx {
                table: ResourceTable::new(),
                component,
                kv: services.kv.clone(),
                sqlite: services.sqlite.clone(),
                sqlite_connections: 0,
                pg: services.pg.clone(),
            },
            limits: MemoryLimiter {
                limits: StoreLimitsBuilder::new()
                    .memory_size(max_memory)
                    .instances(64)
                    .build(),
                max_memory,
                peak: 0,
            },
        })
    }
}

/// wasmtime's [`StoreLimits`], also recording the largest size a memory grew to, so the memory
/// limit can be sized from what the components use (logged per request at `debug`).
pub struct MemoryLimiter {
    limits: StoreLimits,
    max_memory: usize,
    /// The largest size, in bytes, any memory of the instance asked for and was given.
    pub peak: usize,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        if allowed {
            self.peak = self.peak.max(desired);
        } else {
            tracing::warn!(
                "a component asked for {desired} bytes of memory, over the limit of {} (--max-instance-memory)",
                self.max_memory
            );
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
        }
    }
}

impl spin_variables::Host for SpinCtx {
    async fn get(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<String, spin_variables::Error>> {
        if let Err(e) = crate::variables::validate_name(&name) {
            return Ok(Err(spin_variables::Error::InvalidName(e.to_string())));
        }
        Ok(self.component.variables.get(&name).cloned().ok_or_else(|| {
            spin_variables::Error::Undefined(format!(
                "no variable `{name}` in component `{}`",
                self.component.id
            ))
        }))
    }
}

/// dochub's components make no outbound HTTP requests, so none is allowed: a component that
/// tries gets `HTTP-request-denied`, as under Spin without `allowed_outbound_hosts` for it.
struct NoOutboundHttp;

type SendResult = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ),
    wasmtime_wasi_http::Error,
>;

impl WasiHttpHooks for NoOutboundHttp {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}
