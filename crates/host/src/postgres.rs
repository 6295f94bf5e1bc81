//! `spin:postgres/postgres@3.0.0` on tokio-postgres, limited by `allowed_outbound_hosts`, as
//! Spin v4.0.2 does it (`crates/factor-outbound-pg/src/{client,host}.rs`):
//!
//! - **TLS** unless the address says `sslmode=disable`: native-tls (the system's OpenSSL), the
//!   server's certificate verified against the system's roots and the host name. A server with a
//!   self-signed certificate is refused (`connection-failed`, with the TLS reason, also logged).
//!   `sslmode=prefer` (the default) and `require` both verify; there is no "TLS without checks".
//! - **Pooling.** Connections are pooled per address (deadpool-postgres, up to 64 per address,
//!   16 addresses). A guest's `open` takes one pooled connection and keeps it until the guest
//!   drops the handle, so `BEGIN … COMMIT` across several `execute`/`query` calls on one handle
//!   is one transaction. When the handle is dropped, the connection goes back to the pool; the
//!   next request to take it first runs `CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL;
//!   UNLISTEN *; SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES;` (deadpool's
//!   "clean" recycling), which does not end an open transaction: a guest that drops a handle
//!   inside a transaction hands it to the next request. Guests must COMMIT or ROLLBACK on every
//!   path. A request that finds all 64 connections taken waits for one, for as long as it takes.
//!
//! - **A query that returns no rows never answers.** Spin's `query` drains the rows, then awaits
//!   the column list, which it only sends when the first row arrives (`query_stream`'s
//!   `cols_tx`); the sender lives on in the row stream, so with no rows the await never ends and
//!   the guest waits for ever. `execute` is not affected. The host does the same, with a warning
//!   in its log, so that a component that relies on an empty answer fails here as under
//!   `spin up`; the request deadline ([`crate::limits::Limits::request_timeout`]) then ends the
//!   request (Spin has none).
//!
//! One difference: a new connection must be made (TCP connect, TLS, authentication) within the
//! connect timeout here ([`crate::limits::Limits::pg_connect_timeout`], 1 s by default), and a
//! pooled one must pass its recycling check within the same bound, or it is dropped and the next
//! one tried; Spin waits for ever, so a database that accepts TCP connections and never answers
//! holds every request that opens it. The wait for a free slot is not bounded, as on Spin: a
//! bound there would fail requests that Spin serves, such as the 65th of 65 requests that each
//! hold a connection for a while. A statement that hangs on an open connection is ended by the
//! request deadline.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_postgres::config::SslMode;
use tokio_postgres::types::{ToSql, Type};
use wasmtime::component::{Resource, ResourceTable};

use crate::bindings::postgres::{
    Column, DbDataType, DbValue, Error, Host, HostConnection, ParameterValue, RowSet,
};
use crate::component::ComponentConfig;

/// Spin's `CONNECTION_POOL_SIZE`.
const POOL_SIZE: usize = 64;
/// Spin's `CONNECTION_POOL_CACHE_CAPACITY`.
const POOL_CACHE_CAPACITY: usize = 16;

/// An open connection, owned by one guest resource; dropping it returns it to its pool.
pub struct PgConnection {
    client: deadpool_postgres::Object,
}

/// The app's connection pools, one per address, shared by every request.
#[derive(Clone)]
pub struct PgPools {
    pools: Arc<Mutex<HashMap<String, deadpool_postgres::Pool>>>,
    connect_timeout: Duration,
}

impl Default for PgPools {
    fn default() -> Self {
        PgPools::new(crate::limits::Limits::default().pg_connect_timeout)
    }
}

impl PgPools {
    /// Pools whose connections must be taken within `connect_timeout`.
    pub fn new(connect_timeout: Duration) -> Self {
        PgPools {
            pools: Arc::default(),
            connect_timeout,
        }
    }

    /// A connection to `address` from its pool: a new one within the connect timeout, a pooled
    /// one after a recycling check within the same bound.
    async fn get(
        &self,
        address: &str,
        mut config: tokio_postgres::Config,
    ) -> anyhow::Result<deadpool_postgres::Object> {
        config.connect_timeout(self.connect_timeout);
        let pool = self.pool(address, config)?;
        match pool.get().await {
            Ok(connected) => Ok(connected),
            Err(deadpool_postgres::PoolError::Timeout(_)) => anyhow::bail!(
                "no answer from the database within {:?} (the host's PostgreSQL connect timeout)",
                self.connect_timeout
            ),
            Err(e) => Err(e.into()),
        }
    }

    /// The pool for `address`, made on first use (with TLS unless `sslmode=disable`).
    fn pool(
        &self,
        address: &str,
        config: tokio_postgres::Config,
    ) -> anyhow::Result<deadpool_postgres::Pool> {
        let mut pools = self
            .pools
            .lock()
            .map_err(|_| anyhow::anyhow!("connection pools unavailable"))?;
        if let Some(pool) = pools.get(address) {
            return Ok(pool.clone());
        }
        let manager_config = deadpool_postgres::ManagerConfig {
            recycling_method: deadpool_postgres::RecyclingMethod::Clean,
        };
        let manager = if config.get_ssl_mode() == SslMode::Disable {
            deadpool_postgres::Manager::from_config(config, tokio_postgres::NoTls, manager_config)
        } else {
            let tls = native_tls::TlsConnector::builder().build()?;
            deadpool_postgres::Manager::from_config(
                config,
                postgres_native_tls::MakeTlsConnector::new(tls),
                manager_config,
            )
        };
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            // The wait for a free slot is not bounded, as on Spin (see the module's docs).
            .timeouts(deadpool_postgres::Timeouts {
                wait: None,
                create: Some(self.connect_timeout),
                recycle: Some(self.connect_timeout),
            })
            .build()?;
        if pools.len() >= POOL_CACHE_CAPACITY
            && let Some(evicted) = pools.keys().next().cloned()
        {
            pools.remove(&evicted);
        }
        pools.insert(address.to_string(), pool.clone());
        Ok(pool)
    }
}

/// Whether `allowed` (entries such as `postgres://*:*`, `postgres://db.internal:5432`,
/// `*://127.0.0.1:*`) permits a connection to `host:port`.
pub fn is_allowed(allowed: &[String], host: &str, port: u16) -> bool {
    allowed.iter().any(|entry| {
        let Some((scheme, rest)) = entry.split_once("://") else {
            return false;
        };
        if scheme != "*" && scheme != "postgres" {
            return false;
        }
        let rest = rest.trim_end_matches('/');
        let (allowed_host, allowed_port) = match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        };
        let host_ok = allowed_host == "*" || allowed_host.eq_ignore_ascii_case(host);
        let port_ok = match allowed_port {
            None => port == 5432,
            Some("*") => true,
            Some(p) => p.parse::<u16>().is_ok_and(|p| p == port),
        };
        host_ok && port_ok
    })
}

/// `spin:postgres` for one request: the connections it opened, from the app's pools, to the
/// hosts its component may reach.
pub struct PgCtx {
    table: ResourceTable,
    pools: PgPools,
    component: Arc<ComponentConfig>,
}

impl PgCtx {
    /// A request of `component`, with no connection open yet.
    pub fn new(pools: PgPools, component: Arc<ComponentConfig>) -> Self {
        PgCtx {
            table: ResourceTable::new(),
            pools,
            component,
        }
    }
}

impl Host for PgCtx {}

impl HostConnection for PgCtx {
    async fn open(
        &mut self,
        address: String,
    ) -> wasmtime::Result<Result<Resource<PgConnection>, Error>> {
        let config = match tokio_postgres::Config::from_str(&address) {
            Ok(config) => config,
            Err(e) => {
                return Ok(Err(Error::ConnectionFailed(format!(
                    "invalid address: {e}"
                ))));
            }
        };
        let ports = config.get_ports();
        for (i, host) in config.get_hosts().iter().enumerate() {
            let host = match host {
                tokio_postgres::config::Host::Tcp(h) => h.clone(),
                #[cfg(unix)]
                tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            if !is_allowed(&self.component.allowed_outbound_hosts, &host, port) {
                return Ok(Err(Error::ConnectionFailed(format!(
                    "address postgres://{host}:{port} is not permitted"
                ))));
            }
        }
        match self.pools.get(&address, config).await {
            Ok(client) => Ok(Ok(self.table.push(PgConnection { client })?)),
            Err(e) => {
                tracing::warn!(
                    "component `{}`: PostgreSQL connection failed: {e:#}",
                    self.component.id
                );
                Ok(Err(Error::ConnectionFailed(format!("{e:#}"))))
            }
        }
    }

    async fn query(
        &mut self,
        this: Resource<PgConnection>,
        statement: String,
        params: Vec<ParameterValue>,
    ) -> wasmtime::Result<Result<RowSet, Error>> {
        let params = match to_sql_params(params) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let refs = as_refs(&params);
        let conn = self.table.get(&this)?;
        let stmt = match conn.client.prepare(&statement).await {
            Ok(s) => s,
            Err(e) => return Ok(Err(Error::QueryFailed(format!("{e:?}")))),
        };
        let rows = match conn.client.query(&stmt, &refs).await {
            Ok(rows) => rows,
            Err(e) => return Ok(Err(Error::QueryFailed(format!("{e:?}")))),
        };
        if rows.is_empty() {
            tracing::warn!(
                "component `{}`: a PostgreSQL query returned no rows; Spin v4.0.2 never answers \
                 such a query, so neither does this host: `{statement}`",
                self.component.id
            );
            std::future::pending::<()>().await;
        }
        let columns = stmt
            .columns()
            .iter()
            .map(|c| Column {
                name: c.name().to_string(),
                data_type: data_type(c.type_()),
            })
            .collect();
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut values = Vec::with_capacity(row.len());
            for (i, column) in row.columns().iter().enumerate() {
                values.push(match to_db_value(row, i, column.type_()) {
                    Ok(v) => v,
                    Err(e) => return Ok(Err(Error::ValueConversionFailed(e.to_string()))),
                });
            }
            out.push(values);
        }
        Ok(Ok(RowSet { columns, rows: out }))
    }

    async fn execute(
        &mut self,
        this: Resource<PgConnection>,
        statement: String,
        params: Vec<ParameterValue>,
    ) -> wasmtime::Result<Result<u64, Error>> {
        let params = match to_sql_params(params) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let refs = as_refs(&params);
        let conn = self.table.get(&this)?;
        Ok(conn
            .client
            .execute(&statement, &refs)
            .await
            .map_err(|e| Error::QueryFailed(format!("{e:?}"))))
    }

    async fn drop(&mut self, this: Resource<PgConnection>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

fn to_sql_params(params: Vec<ParameterValue>) -> Result<Vec<Box<dyn ToSql + Sync + Send>>, Error> {
    params
        .into_iter()
        .map(|p| -> Result<Box<dyn ToSql + Sync + Send>, Error> {
            Ok(match p {
                ParameterValue::Boolean(v) => Box::new(v),
                ParameterValue::Int8(v) => Box::new(v),
                ParameterValue::Int16(v) => Box::new(v),
                ParameterValue::Int32(v) => Box::new(v),
                ParameterValue::Int64(v) => Box::new(v),
                ParameterValue::Floating32(v) => Box::new(v),
                ParameterValue::Floating64(v) => Box::new(v),
                ParameterValue::Str(v) => Box::new(v),
                ParameterValue::Binary(v) => Box::new(v),
                ParameterValue::DbNull => Box::new(PgNull),
                other => {
                    return Err(Error::BadParameter(format!(
                        "parameter type {other:?} is not supported by this host"
                    )));
                }
            })
        })
        .collect()
}

/// SQL NULL for a parameter of any type (`None::<String>` would only fit text columns).
#[derive(Debug)]
struct PgNull;

impl ToSql for PgNull {
    fn to_sql(
        &self,
        _ty: &Type,
        _out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(tokio_postgres::types::IsNull::Yes)
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// tokio-postgres takes `&(dyn ToSql + Sync)`; the owned parameters are also `Send` so the
/// host future stays `Send`.
fn as_refs(params: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

fn data_type(ty: &Type) -> DbDataType {
    match *ty {
        Type::BOOL => DbDataType::Boolean,
        Type::CHAR => DbDataType::Int8,
        Type::INT2 => DbDataType::Int16,
        Type::INT4 => DbDataType::Int32,
        Type::INT8 => DbDataType::Int64,
        Type::FLOAT4 => DbDataType::Floating32,
        Type::FLOAT8 => DbDataType::Floating64,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => DbDataType::Str,
        Type::BYTEA => DbDataType::Binary,
        _ => DbDataType::Other,
    }
}

fn to_db_value(
    row: &tokio_postgres::Row,
    i: usize,
    ty: &Type,
) -> Result<DbValue, tokio_postgres::Error> {
    fn or_null<T>(v: Option<T>, f: impl FnOnce(T) -> DbValue) -> DbValue {
        v.map(f).unwrap_or(DbValue::DbNull)
    }
    Ok(match *ty {
        Type::BOOL => or_null(row.try_get(i)?, DbValue::Boolean),
        Type::CHAR => or_null(row.try_get(i)?, DbValue::Int8),
        Type::INT2 => or_null(row.try_get(i)?, DbValue::Int16),
        Type::INT4 => or_null(row.try_get(i)?, DbValue::Int32),
        Type::INT8 => or_null(row.try_get(i)?, DbValue::Int64),
        Type::FLOAT4 => or_null(row.try_get(i)?, DbValue::Floating32),
        Type::FLOAT8 => or_null(row.try_get(i)?, DbValue::Floating64),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
            or_null(row.try_get(i)?, DbValue::Str)
        }
        Type::BYTEA => or_null(row.try_get(i)?, DbValue::Binary),
        _ => DbValue::Unsupported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outbound_patterns() {
        let any = vec!["postgres://*:*".to_string()];
        assert!(is_allowed(&any, "127.0.0.1", 5432));
        assert!(is_allowed(&any, "db", 1));
        let one = vec!["postgres://db.internal:6543".to_string()];
        assert!(is_allowed(&one, "db.internal", 6543));
        assert!(!is_allowed(&one, "db.internal", 5432));
        assert!(!is_allowed(&one, "other", 6543));
        let default_port = vec!["postgres://db".to_string()];
        assert!(is_allowed(&default_port, "db", 5432));
        assert!(!is_allowed(&default_port, "db", 5433));
        assert!(!is_allowed(&["redis://*:*".to_string()], "db", 5432));
        assert!(!is_allowed(&[], "db", 5432));
    }
}
