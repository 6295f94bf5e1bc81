//! The test double for [`Sql`]: rusqlite on a file, one connection per [`SqliteDb`], as Spin
//! opens one connection per `spin:sqlite` `open` (so concurrent "requests" are concurrent
//! connections, serialized by SQLite's file locks and rusqlite's 5 s busy timeout).

#![allow(dead_code)]

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use dochub_hub::{Clock, Dialect, Hub, Limits, Sql, SqlError, SqlValue};
use rusqlite::types::{Value, ValueRef};

/// One connection to a SQLite file.
pub struct SqliteDb {
    conn: rusqlite::Connection,
    recompiles: Cell<u64>,
    statements: Cell<u64>,
    busy_at_once: Cell<bool>,
}

impl SqliteDb {
    /// A new connection to `path` (created if missing).
    pub fn open(path: &Path) -> Self {
        Self {
            conn: rusqlite::Connection::open(path).expect("open the test database"),
            recompiles: Cell::new(0),
            statements: Cell::new(0),
            busy_at_once: Cell::new(false),
        }
    }

    /// A read-only connection to `path`, as SQLite opens a file it may not write.
    pub fn open_read_only(path: &Path) -> Self {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        Self {
            conn: rusqlite::Connection::open_with_flags(path, flags).expect("open read-only"),
            recompiles: Cell::new(0),
            statements: Cell::new(0),
            busy_at_once: Cell::new(false),
        }
    }

    /// The connection, for tests that look at the tables directly.
    pub fn conn(&self) -> &rusqlite::Connection {
        &self.conn
    }

    /// How many statements ran on this connection: each is a call into the host under Spin.
    pub fn statements(&self) -> u64 {
        self.statements.get()
    }

    /// How many times SQLite compiled a statement again after preparing it. Each request
    /// opens a new connection under Spin, so a statement is compiled at every use, and a
    /// second compile doubles that cost.
    pub fn recompiles(&self) -> u64 {
        self.recompiles.get()
    }

    fn count_recompiles(&self, statement: &rusqlite::Statement<'_>, before: i32) {
        let after = statement.get_status(rusqlite::StatementStatus::RePrepare);
        self.recompiles
            .set(self.recompiles.get() + u64::try_from(after - before).unwrap_or(0));
    }
}

fn bind(params: &[SqlValue]) -> Vec<Value> {
    params
        .iter()
        .map(|p| match p {
            SqlValue::Int(n) => Value::Integer(*n),
            SqlValue::Text(s) => Value::Text(s.clone()),
            SqlValue::Null => Value::Null,
        })
        .collect()
}

fn error(e: rusqlite::Error) -> SqlError {
    SqlError(e.to_string())
}

impl Sql for SqliteDb {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        self.statements.set(self.statements.get() + 1);
        let mut statement = self.conn.prepare_cached(sql).map_err(error)?;
        let recompiled = statement.get_status(rusqlite::StatementStatus::RePrepare);
        let columns = statement.column_count();
        let mut rows = statement
            .query(rusqlite::params_from_iter(bind(params)))
            .map_err(error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(error)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i).map_err(error)? {
                    ValueRef::Integer(n) => SqlValue::Int(n),
                    ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Null => SqlValue::Null,
                    other => return Err(SqlError(format!("unexpected column type {other:?}"))),
                });
            }
            out.push(values);
        }
        drop(rows);
        self.count_recompiles(&statement, recompiled);
        Ok(out)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.statements.set(self.statements.get() + 1);
        let mut statement = self.conn.prepare_cached(sql).map_err(error)?;
        let recompiled = statement.get_status(rusqlite::StatementStatus::RePrepare);
        let n = statement
            .execute(rusqlite::params_from_iter(bind(params)))
            .map_err(error)?;
        self.count_recompiles(&statement, recompiled);
        Ok(n as u64)
    }

    /// As the hub component's kept connection does: the setting stays with the connection.
    fn answer_busy_at_once(&self) -> Result<(), SqlError> {
        if !self.busy_at_once.get() {
            self.query("PRAGMA busy_timeout = 0", &[])?;
            self.busy_at_once.set(true);
        }
        Ok(())
    }
}

/// A clock the test moves by hand.
#[derive(Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock at `ms`.
    pub fn at(ms: i64) -> Self {
        Self(Arc::new(AtomicI64::new(ms)))
    }

    /// Sets the clock, backwards too (as NTP may).
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Moves the clock forward.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A fresh database folder; hubs opened on it share the file.
pub struct TestDb {
    dir: tempfile::TempDir,
}

impl TestDb {
    /// A new empty database.
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temporary folder"),
        }
    }

    /// The database file.
    pub fn path(&self) -> std::path::PathBuf {
        self.dir.path().join("sqlite_db.db")
    }

    /// A hub on a new connection, with the system clock and default limits.
    pub fn hub(&self) -> Hub<SqliteDb> {
        Hub::new(SqliteDb::open(&self.path()))
    }

    /// A hub on a new connection with this clock and these limits.
    pub fn hub_with(&self, clock: &ManualClock, limits: Limits) -> Hub<SqliteDb, ManualClock> {
        Hub::with_clock(SqliteDb::open(&self.path()), clock.clone(), limits)
    }
}

/// 2026-01-01T00:00:00Z in milliseconds.
pub const T0: i64 = 1_767_225_600_000;
