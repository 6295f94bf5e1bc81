//! The hub's store on PostgreSQL (`spin:postgres`), at the address `hub_database_url` holds.

use dochub_hub::{Dialect, Sql, SqlError, SqlValue, first_row};
use dochub_spin_imports::pg3;

use crate::store_failure;

/// A connection from Spin's pool for the hub's PostgreSQL at `url`.
pub(crate) fn open(url: &str) -> Result<SpinPostgres, String> {
    pg3::Connection::open(url)
        .map(|conn| SpinPostgres(std::rc::Rc::new(conn)))
        // The URL may hold a password: the error names the failure, not the address.
        .map_err(|e| format!("cannot connect to the hub's PostgreSQL: {e:?}"))
}

/// [`Sql`] over Spin's `spin:postgres` (one pooled connection, for the request or for a reused
/// instance; clones share it).
///
/// Spin v4.0.2 never answers a query that returns no rows (it waits for a column list that only
/// the first row brings; see `dochub-host`'s `postgres` module). So every query runs inside a
/// statement that always returns a row: the original's rows, each after their count, or one row
/// holding the count 0. A data-modifying `WITH` cannot be nested, so a statement that starts
/// with `WITH` runs as written: the hub writes those to return exactly one row, as it does the
/// queries of [`Sql::query_row`] (the wrapping took 6–25 % of a send's time in the database).
#[derive(Clone)]
pub(crate) struct SpinPostgres(std::rc::Rc<pg3::Connection>);

impl SpinPostgres {
    /// Whether the database answers a statement (`SELECT 1`, which returns a row, so it runs
    /// as written); a failure is worded as the hub words a store's.
    pub(crate) fn probe(&self) -> Result<(), String> {
        self.0
            .query("SELECT 1", &[])
            .map(drop)
            .map_err(|e| store_failure(&format!("{e:?}")))
    }
}

/// `sql` as a statement that returns at least one row; its first column is how many rows `sql`
/// returned, the rest are `sql`'s columns (all NULL in the row that stands for none). A join on
/// `true` runs as a nested loop over the materialized rows, so their order is kept.
fn never_empty(sql: &str) -> Option<String> {
    let starts_with_with = sql
        .trim_start()
        .get(..4)
        .is_some_and(|word| word.eq_ignore_ascii_case("with"));
    (!starts_with_with).then(|| {
        format!(
            "WITH dochub_rows AS ({sql}) SELECT n.count, dochub_rows.* \
             FROM (SELECT COUNT(*) AS count FROM dochub_rows) n LEFT JOIN dochub_rows ON true"
        )
    })
}

fn sql_value(value: pg3::DbValue) -> Result<SqlValue, SqlError> {
    match value {
        pg3::DbValue::Int64(n) => Ok(SqlValue::Int(n)),
        pg3::DbValue::Int32(n) => Ok(SqlValue::Int(n.into())),
        pg3::DbValue::Str(s) => Ok(SqlValue::Text(s)),
        pg3::DbValue::DbNull => Ok(SqlValue::Null),
        other => Err(SqlError(format!("unexpected PostgreSQL value {other:?}"))),
    }
}

fn pg_params(params: &[SqlValue]) -> Vec<pg3::ParameterValue> {
    params
        .iter()
        .map(|p| match p {
            SqlValue::Int(n) => pg3::ParameterValue::Int64(*n),
            SqlValue::Text(s) => pg3::ParameterValue::Str(s.clone()),
            SqlValue::Null => pg3::ParameterValue::DbNull,
        })
        .collect()
}

impl Sql for SpinPostgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        let wrapped = never_empty(sql);
        let rows = self
            .0
            .query(wrapped.as_deref().unwrap_or(sql), &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?
            .rows;
        if wrapped.is_none() {
            return rows
                .into_iter()
                .map(|row| row.into_iter().map(sql_value).collect())
                .collect();
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut values = row.into_iter();
            match values.next() {
                Some(pg3::DbValue::Int64(0)) => break,
                Some(pg3::DbValue::Int64(_)) => {
                    out.push(values.map(sql_value).collect::<Result<_, _>>()?)
                }
                other => return Err(SqlError(format!("unexpected row count {other:?}"))),
            }
        }
        Ok(out)
    }

    fn query_row(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlValue>, SqlError> {
        let rows = self
            .0
            .query(sql, &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?
            .rows;
        first_row(rows)?.into_iter().map(sql_value).collect()
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.0
            .execute(sql, &pg_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))
    }
}
