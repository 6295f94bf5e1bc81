//! The hub's store on Spin's SQLite database `default` (`spin:sqlite`): the default build's;
//! the edge build leaves it out, so that its components do not import `spin:sqlite`.

use std::cell::Cell;
use std::rc::Rc;

use dochub_hub::{Dialect, Sql, SqlError, SqlValue};
use dochub_spin_imports::sqlite3;

use crate::store_failure;

/// Spin's SQLite database `default`.
pub(crate) fn open() -> Result<SpinSqlite, String> {
    sqlite3::Connection::open("default")
        .map(|conn| {
            SpinSqlite(Rc::new(Connection {
                conn,
                busy_at_once: Cell::new(false),
            }))
        })
        .map_err(|e| format!("cannot open the SQLite database `default`: {e:?}"))
}

/// [`Sql`] over Spin's `spin:sqlite` (one connection for the request, or for a reused
/// instance's life; clones share it).
#[derive(Clone)]
pub(crate) struct SpinSqlite(Rc<Connection>);

struct Connection {
    conn: sqlite3::Connection,
    /// Whether `busy_timeout` 0 is set ([`Sql::answer_busy_at_once`]): once per connection.
    busy_at_once: Cell<bool>,
}

impl SpinSqlite {
    /// Whether the database can be read, and written as a send writes: it is asked for the
    /// write lock a send takes (an empty transaction, rolled back: nothing is written), which
    /// reads the file's header first, so a file that is not a database fails here. A full disk
    /// shows only when a write needs room.
    ///
    /// The lock is asked for without waiting (`busy_timeout` 0, as the hub sets it before it
    /// writes): another writer holding it shows as well that the file takes writes, and probes
    /// queueing behind sends and each other made health wait up to half a second. The file is
    /// not read again when the lock is busy: a committing writer keeps readers out too (before
    /// the first send turns on WAL), so a read would report a busy store as a failed one; and a
    /// lock is held only on a file SQLite has read as a database.
    pub(crate) fn probe(&self) -> Result<(), String> {
        self.answer_busy_at_once()
            .map_err(|SqlError(e)| store_failure(&e))?;
        match run(&self.0.conn, "BEGIN IMMEDIATE") {
            Ok(()) => run(&self.0.conn, "ROLLBACK").map_err(|e| store_failure(&e)),
            Err(e) if SqlError(e.clone()).is_busy() => Ok(()),
            Err(e) => Err(store_failure(&e)),
        }
    }
}

fn run(conn: &sqlite3::Connection, sql: &str) -> Result<(), String> {
    conn.execute(sql, &[])
        .map(drop)
        .map_err(|e| format!("{e:?}"))
}

fn sqlite_params(params: &[SqlValue]) -> Vec<sqlite3::Value> {
    params
        .iter()
        .map(|p| match p {
            SqlValue::Int(n) => sqlite3::Value::Integer(*n),
            SqlValue::Text(s) => sqlite3::Value::Text(s.clone()),
            SqlValue::Null => sqlite3::Value::Null,
        })
        .collect()
}

impl Sql for SpinSqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        let result = self
            .0
            .conn
            .execute(sql, &sqlite_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?;
        result
            .rows
            .into_iter()
            .map(|row| {
                row.values
                    .into_iter()
                    .map(|v| match v {
                        sqlite3::Value::Integer(n) => Ok(SqlValue::Int(n)),
                        sqlite3::Value::Text(s) => Ok(SqlValue::Text(s)),
                        sqlite3::Value::Null => Ok(SqlValue::Null),
                        other => Err(SqlError(format!("unexpected SQLite value {other:?}"))),
                    })
                    .collect()
            })
            .collect()
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.0
            .conn
            .execute(sql, &sqlite_params(params))
            .map_err(|e| SqlError(format!("{e:?}")))?;
        Ok(self.0.conn.changes())
    }

    fn answer_busy_at_once(&self) -> Result<(), SqlError> {
        if !self.0.busy_at_once.get() {
            self.query("PRAGMA busy_timeout = 0", &[])?;
            self.0.busy_at_once.set(true);
        }
        Ok(())
    }
}
