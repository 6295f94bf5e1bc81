//! What each request's `Store` holds: WASI, WASI HTTP and the Spin interfaces' state.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{DirPerms, FilePerms, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::WasiHttpCtx;
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::p2::types::{HostFutureIncomingResponse, OutgoingRequestConfig};
use wasmtime_wasi_http::p2::{HttpResult, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};
use wasmtime_wasi_http::p3::bindings::http::types::ErrorCode as P3ErrorCode;

use crate::component::ComponentConfig;
use crate::kv::{KvCtx, KvStores};
use crate::postgres::{PgCtx, PgPools};
use crate::sqlite::{SqliteCtx, SqliteDatabases};
use crate::variables::VariablesCtx;

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
    /// `fermyon:spin/key-value` and `wasi:keyvalue`.
    pub kv: KvCtx,
    /// `fermyon:spin/sqlite` and `spin:sqlite`.
    pub sqlite: SqliteCtx,
    /// `spin:postgres`.
    pub pg: PgCtx,
    /// `fermyon:spin/variables`.
    pub variables: VariablesCtx,
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
            wasi.preopened_dir(host, guest, DirPerms::READ, FilePerms::READ)
                .map_err(|e| anyhow::anyhow!("cannot mount {} at {guest}: {e}", host.display()))?;
        }
        Ok(State {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            http_hooks: NoOutboundHttp,
            table: ResourceTable::new(),
            kv: KvCtx::new(services.kv.clone(), component.clone()),
            sqlite: SqliteCtx::new(services.sqlite.clone(), component.clone()),
            pg: PgCtx::new(services.pg.clone(), component.clone()),
            variables: VariablesCtx::new(component),
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

/// dochub's components make no outbound HTTP requests, so none is allowed: a component that
/// tries gets `HTTP-request-denied`, as under Spin without `allowed_outbound_hosts` for it.
struct NoOutboundHttp;

impl WasiHttpHooks for NoOutboundHttp {
    fn send_request(
        &mut self,
        _request: hyper::Request<HyperOutgoingBody>,
        _config: OutgoingRequestConfig,
    ) -> HttpResult<HostFutureIncomingResponse> {
        Err(ErrorCode::HttpRequestDenied.into())
    }
}

/// The same refusal for a WASIp3 component (`wasi:http/client@0.3`).
impl wasmtime_wasi_http::p3::WasiHttpHooks for NoOutboundHttp {
    fn send_request(
        &mut self,
        _request: http::Request<P3Body>,
        _options: Option<wasmtime_wasi_http::p3::RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), P3ErrorCode>> + Send>,
    ) -> Box<dyn Future<Output = P3SendResult> + Send> {
        Box::new(async { Err(P3ErrorCode::HttpRequestDenied.into()) })
    }
}

type P3Body = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, P3ErrorCode>;

type P3SendResult = Result<
    (
        http::Response<P3Body>,
        Box<dyn Future<Output = Result<(), P3ErrorCode>> + Send>,
    ),
    wasmtime_wasi::TrappableError<P3ErrorCode>,
>;

impl wasmtime_wasi_http::p3::WasiHttpView for State {
    fn http(&mut self) -> wasmtime_wasi_http::p3::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::p3::WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_hooks,
        }
    }
}
