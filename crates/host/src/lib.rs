//! dochub's local Spin host: runs the HTTP components of a `spin.toml` under wasmtime, as
//! `spin up` would, so the app runs and is tested without Spin installed.
//!
//! A faithful subset of Spin: manifest v2, Spin's routing rules and request headers, read-only
//! file mounts (copied at start, as `spin up` copies them, or mounted in place with
//! [`HostOptions::direct_mounts`]), key-value stores (SQLite in `.spin/`, or Redis by runtime config) with
//! `wasi:keyvalue` atomics, SQLite databases ([`sqlite`]), variables (`SPIN_VARIABLE_*`),
//! outbound PostgreSQL. A component that imports anything else is refused at start-up, naming the
//! import. Each interface keeps its own per-request context (the key-value handles, the SQLite
//! and PostgreSQL connections, the variables), linked on its own as Spin's factors link theirs;
//! a request's store only holds them side by side. Where Spin's own behaviour is weak (key-value compare-and-swap, see [`kv`]; PostgreSQL
//! connection pooling; a PostgreSQL query with no rows never answers), this host is weak the same
//! way, so a test that passes here passes under `spin up`. A request whose authority Spin cannot
//! tell (no `Host` and none in the target, an invalid `Host`, or the two disagreeing) gets no
//! response at all, its connection closed, as Spin's `trigger-http` does (`set_req_uri`).
//!
//! It also defends itself where Spin v4.0.2 does not ([`limits`]): a header-read (and idle
//! keep-alive) timeout, a cap on connections with a back-off after failed accepts, a deadline
//! per request that stops stuck components but not waiting ones (epoch interruption; `504`),
//! a memory limit per instance, a connect timeout for
//! PostgreSQL, and a shutdown on SIGINT/SIGTERM that finishes the requests in flight. None of
//! these changes what a component sees while it keeps within them.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let host = dochub_host::start(dochub_host::HostOptions {
//!     manifest: "spin.toml".into(),
//!     listen: "127.0.0.1:0".parse()?,
//!     ..Default::default()
//! })
//! .await?;
//! println!("serving on http://{}", host.addr());
//! host.shutdown().await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod app;
mod bindings;
mod blocking;
mod build;
mod component;
mod deadline;
pub mod emulate;
pub mod kv;
pub mod limits;
pub mod manifest;
mod p3;
mod postgres;
pub mod routes;
pub mod runtime_config;
mod server;
pub mod sqlite;
mod staging;
mod state;
pub mod variables;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

pub use app::{App, LoadOptions};
pub use build::build_components;
pub use limits::Limits;
pub use postgres::PgPools;
pub use server::{RunningHost, serve};
pub use state::Services;

/// How to start a host.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The `spin.toml` to run.
    pub manifest: PathBuf,
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Spin's `.spin/` state folder; default: `.spin` beside the manifest.
    pub state_dir: Option<PathBuf>,
    /// A Spin runtime-config file (key-value store backends).
    pub runtime_config: Option<PathBuf>,
    /// Variable values that override `SPIN_VARIABLE_*` and the manifest's defaults.
    pub variables: HashMap<String, String>,
    /// Environment variables added to every component, like `spin up --env`.
    pub env: Vec<(String, String)>,
    /// Connection, request and instance limits ([`limits`]).
    pub limits: Limits,
    /// Mount directories in place (`spin up --direct-mounts`: only directories, and a relative
    /// source is resolved against the working directory, not the app folder) instead of copying
    /// every mounted file at start as `spin up` does.
    pub direct_mounts: bool,
    /// Apply a Spin edge host's published limits ([`emulate`]): imports, app size, memory,
    /// request duration, body sizes, key-value quotas.
    pub emulate: Option<emulate::Platform>,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            manifest: PathBuf::from("spin.toml"),
            listen: SocketAddr::from(([127, 0, 0, 1], 3000)),
            state_dir: None,
            runtime_config: None,
            variables: HashMap::new(),
            env: Vec::new(),
            limits: Limits::default(),
            direct_mounts: false,
            emulate: None,
        }
    }
}

/// Loads the app and serves it in the background.
pub async fn start(options: HostOptions) -> anyhow::Result<RunningHost> {
    let manifest = manifest::AppManifest::from_file(&options.manifest)?;
    let state_dir = options
        .state_dir
        .clone()
        .unwrap_or_else(|| manifest.base_dir.join(".spin"));
    if let (Some(platform), Some(_)) = (options.emulate, &options.runtime_config)
        && !platform.takes_runtime_config()
    {
        anyhow::bail!(
            "{} takes no runtime configuration (--emulate {}): drop --runtime-config-file",
            platform.title(),
            platform.name()
        );
    }
    let runtime_config = match &options.runtime_config {
        Some(path) => runtime_config::load(path)?,
        None => runtime_config::RuntimeConfig::default(),
    };
    let app = App::load(
        &manifest,
        &LoadOptions {
            state_dir,
            stores: runtime_config.key_value,
            sqlite_databases: runtime_config.sqlite,
            variables: options.variables.clone(),
            env: options.env.clone(),
            limits: match options.emulate {
                Some(platform) => emulate::limits(platform, &options.limits),
                None => options.limits.clone(),
            },
            direct_mounts: options.direct_mounts,
            emulate: options.emulate,
        },
    )
    .await?;
    serve(app, options.listen).await
}
