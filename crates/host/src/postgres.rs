//! `spin:postgres/postgres@3.0.0` on tokio-postgres, limited by `allowed_outbound_hosts`.

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::types::{ToSql, Type};
use wasmtime::component::Resource;

use crate::bindings::postgres::{
    Column, DbDataType, DbValue, Error, Host, HostConnection, ParameterValue, RowSet,
};
use crate::state::SpinCtx;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An open connection, owned by one guest resource.
pub struct PgConnection {
    client: tokio_postgres::Client,
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

impl Host for SpinCtx {}

impl HostConnection for SpinCtx {
    async fn open(
        &mut self,
        address: String,
    ) -> wasmtime::Result<Result<Resource<PgConnection>, Error>> {
        let mut config = match tokio_postgres::Config::from_str(&address) {
            Ok(config) => config,
            Err(e) => {
                return Ok(Err(Error::ConnectionFailed(format!(
                    "invalid address: {e}"
                ))));
            }
        };
        config.connect_timeout(CONNECT_TIMEOUT);
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
                    "postgres://{host}:{port} is not in the component's allowed_outbound_hosts"
                ))));
            }
        }
        let (client, connection) = match config.connect(tokio_postgres::NoTls).await {
            Ok(pair) => pair,
            Err(e) => return Ok(Err(Error::ConnectionFailed(e.to_string()))),
        };
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("postgres connection closed: {e}");
            }
        });
        Ok(Ok(self.table.push(PgConnection { client })?))
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
            Err(e) => return Ok(Err(Error::QueryFailed(e.to_string()))),
        };
        let rows = match conn.client.query(&stmt, &refs).await {
            Ok(rows) => rows,
            Err(e) => return Ok(Err(Error::QueryFailed(e.to_string()))),
        };
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
            .map_err(|e| Error::QueryFailed(e.to_string())))
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
                ParameterValue::DbNull => Box::new(None::<String>),
                other => {
                    return Err(Error::BadParameter(format!(
                        "parameter type {other:?} is not supported by this host"
                    )));
                }
            })
        })
        .collect()
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
