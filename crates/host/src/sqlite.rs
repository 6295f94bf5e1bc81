//! SQLite databases for guests: `spin:sqlite/sqlite@3.0.0` and `fermyon:spin/sqlite@2.0.0`, as
//! Spin v4.0.2 provides them.
//!
//! What Spin does, read from its source (`crates/factor-sqlite/src/{lib,host}.rs`,
//! `crates/sqlite/src/lib.rs`, `crates/sqlite-inproc/src/lib.rs`, `crates/runtime-config/src/lib.rs`,
//! `wit/deps/spin-sqlite@3.0.0/sqlite.wit`, `wit/deps/spin@2.0.0/sqlite.wit`), and what this
//! host does the same way:
//!
//! - **Interfaces.** Spin links `fermyon:spin/sqlite` (v1, unversioned), `fermyon:spin/sqlite@2.0.0`,
//!   `spin:sqlite/sqlite@3.0.0` and `@3.1.0` (async, WASI 0.3). spin-sdk 5.2 imports `@2.0.0` as
//!   `spin_sdk::sqlite` and `@3.0.0` as `spin_sdk::sqlite3`; this host provides those two. `@3.0.0`
//!   adds `last-insert-rowid` and `changes`.
//! - **Labels.** A component lists the labels it may open (`sqlite_databases = ["default"]`);
//!   opening another label is `access-denied`. A listed label with no database configured stops
//!   the app from starting. `default` is always configured: `<state dir>/sqlite_db.db`
//!   (`.spin/sqlite_db.db` beside `spin.toml`). A runtime config may add or replace labels with
//!   `[sqlite_database.<label>] type = "spin"` and an optional `path` (relative paths resolve
//!   against the current working directory; no `path` is an in-memory database). Spin's
//!   `type = "libsql"` (a remote libSQL/Turso server) is not provided here and is refused at start.
//! - **Connections.** Every `open` creates a *new* connection (Spin's `ConnectionCreator` contract:
//!   "a new connection, not a reused one"), opened lazily at its first statement and closed when
//!   the guest drops it (at the end of the request at the latest). Nothing is shared between two
//!   opens or two requests, so `BEGIN … COMMIT` across several `execute` calls on one connection
//!   is a real SQLite transaction, isolated from other requests by SQLite's file locking, and a
//!   connection dropped mid-transaction is rolled back when it closes.
//! - **Settings.** Spin sets no pragma: the rollback journal (not WAL), `foreign_keys` off, and
//!   rusqlite's default busy timeout of 5 s. So a deferred `BEGIN` that reads and then writes can
//!   fail at once with `io("database is locked")` while another connection writes (SQLite refuses
//!   to wait where waiting could deadlock); single statements and `BEGIN IMMEDIATE` wait instead.
//!   A guest may change these itself (`PRAGMA journal_mode = WAL` persists in the file).
//! - **`ATTACH`** of a file is denied (an authorizer); attaching `""` or `:memory:` is allowed.
//! - **Values** map one to one: `integer` ↔ i64, `real` ↔ f64, `text` ↔ UTF-8 string, `blob` ↔
//!   bytes, `null`; each column returns what SQLite stored. A result over 128 MiB is an error.
//! - **Errors.** Every SQL or I/O failure is `io(<rusqlite's message>)`; `no-such-database`,
//!   `access-denied` and `invalid-connection` as above; more than 256 connections open in one
//!   request is `io("too many connections opened")`.
//!
//! One difference: where Spin panics on a text value that is not UTF-8 (and so answers
//! `io("internal runtime error")` for that connection from then on), this host answers an `io`
//! error naming the column.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use rusqlite::types::{Value as SqlValue, ValueRef};
use wasmtime::component::{Resource, ResourceTable};

use crate::bindings::{sqlite_v2 as v2, sqlite_v3 as v3};
use crate::component::ComponentConfig;

/// Spin's limit on the bytes a query result may hold (`spin_world::MAX_HOST_BUFFERED_BYTES`).
const MAX_RESULT_BYTES: usize = 128 << 20;

/// Spin's resource table holds at most this many connections per instance.
const MAX_CONNECTIONS: usize = 256;

/// The default database's file name in the state folder, as in Spin.
pub const DEFAULT_DATABASE_FILE: &str = "sqlite_db.db";

/// Where one database label lives, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseConfig {
    /// A file (created with its parent folders if missing).
    File(PathBuf),
    /// A private in-memory database: every open starts empty.
    InMemory,
}

/// The SQLite databases of a running app, by label.
#[derive(Clone, Default)]
pub struct SqliteDatabases {
    databases: Arc<HashMap<String, DatabaseConfig>>,
}

impl SqliteDatabases {
    /// Resolves the labels the components use. `configured` comes from the runtime config;
    /// `default`, when not configured, is `<state_dir>/sqlite_db.db`. A used label that is not
    /// configured is an error listing each component and label, as Spin's start-up error does.
    pub fn new(
        used: &BTreeMap<String, Vec<String>>,
        configured: &HashMap<String, DatabaseConfig>,
        state_dir: &Path,
    ) -> anyhow::Result<Self> {
        let mut databases = configured.clone();
        databases
            .entry("default".to_string())
            .or_insert_with(|| DatabaseConfig::File(state_dir.join(DEFAULT_DATABASE_FILE)));
        let missing: Vec<String> = used
            .iter()
            .flat_map(|(component, labels)| {
                labels
                    .iter()
                    .filter(|label| !databases.contains_key(*label))
                    .map(move |label| format!("- Component {component} uses database '{label}'"))
            })
            .collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "One or more components use SQLite databases which are not defined.\n\
                 Check the spelling, or pass a runtime configuration file that defines these \
                 databases ([sqlite_database.<label>] type = \"spin\").\nDetails:\n{}",
                missing.join("\n")
            );
        }
        for config in databases.values() {
            if let DatabaseConfig::File(path) = config
                && let Some(parent) = path.parent()
            {
                std::fs::create_dir_all(parent).with_context(|| {
                    format!(
                        "failed to create sqlite database directory '{}'",
                        parent.display()
                    )
                })?;
            }
        }
        Ok(SqliteDatabases {
            databases: Arc::new(databases),
        })
    }

    /// Each used database file that exists but cannot be read, or written, with why: said once
    /// at start, so an operator learns it before the first request fails on it. (Spin says
    /// nothing until a statement fails; nothing here changes what a guest sees.)
    pub fn problems(&self, used: &BTreeMap<String, Vec<String>>) -> Vec<String> {
        let labels: std::collections::BTreeSet<&String> = used.values().flatten().collect();
        let mut out = Vec::new();
        for label in labels {
            let Some(DatabaseConfig::File(path)) = self.get(label) else {
                continue;
            };
            if !path.exists() {
                continue;
            }
            let probe = open(&DatabaseConfig::File(path.clone())).and_then(|conn| {
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
                conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK")
            });
            if let Err(e) = probe {
                out.push(format!(
                    "SQLite database `{label}` ({}) fails: {e}; every statement on it fails \
                     until it is repaired or replaced",
                    path.display()
                ));
            }
        }
        out
    }

    fn get(&self, label: &str) -> Option<&DatabaseConfig> {
        self.databases.get(label)
    }
}

/// One guest connection: its own SQLite connection, opened at the first statement.
pub struct SqliteConnection {
    config: DatabaseConfig,
    conn: Option<Arc<Mutex<rusqlite::Connection>>>,
}

impl SqliteConnection {
    fn connection(&mut self) -> Result<Arc<Mutex<rusqlite::Connection>>, v3::Error> {
        if let Some(conn) = &self.conn {
            return Ok(conn.clone());
        }
        let conn = open(&self.config).map_err(io)?;
        let conn = Arc::new(Mutex::new(conn));
        self.conn = Some(conn.clone());
        Ok(conn)
    }
}

fn open(config: &DatabaseConfig) -> rusqlite::Result<rusqlite::Connection> {
    let conn = match config {
        DatabaseConfig::File(path) => rusqlite::Connection::open(path)?,
        DatabaseConfig::InMemory => rusqlite::Connection::open_in_memory()?,
    };
    conn.authorizer(Some(|ctx: rusqlite::hooks::AuthContext<'_>| {
        use rusqlite::hooks::{AuthAction, Authorization};
        match ctx.action {
            AuthAction::Attach { filename } if !matches!(filename, "" | ":memory:") => {
                Authorization::Deny
            }
            _ => Authorization::Allow,
        }
    }));
    Ok(conn)
}

fn io(e: impl std::fmt::Display) -> v3::Error {
    v3::Error::Io(e.to_string())
}

/// Runs one statement and collects its rows, as Spin's `execute_query` does.
fn execute_blocking(
    conn: &Mutex<rusqlite::Connection>,
    statement: &str,
    parameters: Vec<v3::Value>,
) -> Result<v3::QueryResult, v3::Error> {
    let conn = conn
        .lock()
        .map_err(|_| io("the connection failed earlier"))?;
    let mut stmt = conn.prepare_cached(statement).map_err(io)?;
    let columns: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let width = columns.len();
    let params = parameters.into_iter().map(|v| match v {
        v3::Value::Integer(i) => SqlValue::Integer(i),
        v3::Value::Real(r) => SqlValue::Real(r),
        v3::Value::Text(t) => SqlValue::Text(t),
        v3::Value::Blob(b) => SqlValue::Blob(b),
        v3::Value::Null => SqlValue::Null,
    });
    let mut rows = stmt.query(rusqlite::params_from_iter(params)).map_err(io)?;
    let mut out = Vec::new();
    let mut bytes = std::mem::size_of::<v3::QueryResult>();
    while let Some(row) = rows.next().map_err(io)? {
        let mut values = Vec::with_capacity(width);
        for i in 0..width {
            let value = match row.get_ref(i).map_err(io)? {
                ValueRef::Null => v3::Value::Null,
                ValueRef::Integer(i) => v3::Value::Integer(i),
                ValueRef::Real(r) => v3::Value::Real(r),
                ValueRef::Text(t) => v3::Value::Text(
                    String::from_utf8(t.to_vec())
                        .map_err(|_| io(format!("column {i} holds text that is not UTF-8")))?,
                ),
                ValueRef::Blob(b) => v3::Value::Blob(b.to_vec()),
            };
            bytes += value_size(&value);
            values.push(value);
        }
        if bytes > MAX_RESULT_BYTES {
            return Err(io(format!(
                "query result exceeds limit of {MAX_RESULT_BYTES} bytes"
            )));
        }
        out.push(v3::RowResult { values });
    }
    Ok(v3::QueryResult { columns, rows: out })
}

fn value_size(value: &v3::Value) -> usize {
    std::mem::size_of::<v3::Value>()
        + match value {
            v3::Value::Text(t) => t.len(),
            v3::Value::Blob(b) => b.len(),
            _ => 0,
        }
}

/// `fermyon:spin/sqlite` and `spin:sqlite` for one request: the connections it opened, over the
/// app's databases, limited to the labels its component lists.
pub struct SqliteCtx {
    table: ResourceTable,
    databases: SqliteDatabases,
    component: Arc<ComponentConfig>,
    open_connections: usize,
}

impl SqliteCtx {
    /// A request of `component`, with no connection open yet.
    pub fn new(databases: SqliteDatabases, component: Arc<ComponentConfig>) -> Self {
        SqliteCtx {
            table: ResourceTable::new(),
            databases,
            component,
            open_connections: 0,
        }
    }

    fn sqlite_open(
        &mut self,
        label: &str,
    ) -> wasmtime::Result<Result<Resource<SqliteConnection>, v3::Error>> {
        if !self.component.sqlite_databases.iter().any(|l| l == label) {
            return Ok(Err(v3::Error::AccessDenied));
        }
        let Some(config) = self.databases.get(label).cloned() else {
            return Ok(Err(v3::Error::NoSuchDatabase));
        };
        if self.open_connections >= MAX_CONNECTIONS {
            return Ok(Err(io("too many connections opened")));
        }
        let resource = self.table.push(SqliteConnection { config, conn: None })?;
        self.open_connections += 1;
        Ok(Ok(resource))
    }

    async fn sqlite_execute(
        &mut self,
        this: &Resource<SqliteConnection>,
        statement: String,
        parameters: Vec<v3::Value>,
    ) -> wasmtime::Result<Result<v3::QueryResult, v3::Error>> {
        let conn = match self.table.get_mut(this)?.connection() {
            Ok(conn) => conn,
            Err(e) => return Ok(Err(e)),
        };
        let result =
            tokio::task::spawn_blocking(move || execute_blocking(&conn, &statement, parameters))
                .await
                .unwrap_or_else(|e| Err(io(format!("internal runtime error: {e}"))));
        Ok(result)
    }

    /// Runs `f` on the connection's SQLite handle; a connection that cannot open traps, as in Spin.
    fn sqlite_with<T>(
        &mut self,
        this: &Resource<SqliteConnection>,
        f: impl FnOnce(&rusqlite::Connection) -> T,
    ) -> wasmtime::Result<T> {
        let conn = self
            .table
            .get_mut(this)?
            .connection()
            .map_err(|e| wasmtime::format_err!("cannot open the SQLite database: {e:?}"))?;
        let conn = conn
            .lock()
            .map_err(|_| wasmtime::format_err!("the SQLite connection failed earlier"))?;
        Ok(f(&conn))
    }

    fn sqlite_drop(&mut self, this: Resource<SqliteConnection>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        self.open_connections = self.open_connections.saturating_sub(1);
        Ok(())
    }
}

impl v3::Host for SqliteCtx {}

impl v3::HostConnection for SqliteCtx {
    async fn open(
        &mut self,
        database: String,
    ) -> wasmtime::Result<Result<Resource<SqliteConnection>, v3::Error>> {
        self.sqlite_open(&database)
    }

    async fn execute(
        &mut self,
        this: Resource<SqliteConnection>,
        statement: String,
        parameters: Vec<v3::Value>,
    ) -> wasmtime::Result<Result<v3::QueryResult, v3::Error>> {
        self.sqlite_execute(&this, statement, parameters).await
    }

    async fn last_insert_rowid(
        &mut self,
        this: Resource<SqliteConnection>,
    ) -> wasmtime::Result<i64> {
        self.sqlite_with(&this, rusqlite::Connection::last_insert_rowid)
    }

    async fn changes(&mut self, this: Resource<SqliteConnection>) -> wasmtime::Result<u64> {
        self.sqlite_with(&this, rusqlite::Connection::changes)
    }

    async fn drop(&mut self, this: Resource<SqliteConnection>) -> wasmtime::Result<()> {
        self.sqlite_drop(this)
    }
}

impl v2::Host for SqliteCtx {}

impl v2::HostConnection for SqliteCtx {
    async fn open(
        &mut self,
        database: String,
    ) -> wasmtime::Result<Result<Resource<SqliteConnection>, v2::Error>> {
        Ok(self.sqlite_open(&database)?.map_err(to_v2_error))
    }

    async fn execute(
        &mut self,
        this: Resource<SqliteConnection>,
        statement: String,
        parameters: Vec<v2::Value>,
    ) -> wasmtime::Result<Result<v2::QueryResult, v2::Error>> {
        let parameters = parameters.into_iter().map(from_v2_value).collect();
        Ok(self
            .sqlite_execute(&this, statement, parameters)
            .await?
            .map(to_v2_result)
            .map_err(to_v2_error))
    }

    async fn drop(&mut self, this: Resource<SqliteConnection>) -> wasmtime::Result<()> {
        self.sqlite_drop(this)
    }
}

fn to_v2_error(e: v3::Error) -> v2::Error {
    match e {
        v3::Error::NoSuchDatabase => v2::Error::NoSuchDatabase,
        v3::Error::AccessDenied => v2::Error::AccessDenied,
        v3::Error::InvalidConnection => v2::Error::InvalidConnection,
        v3::Error::DatabaseFull => v2::Error::DatabaseFull,
        v3::Error::Io(s) => v2::Error::Io(s),
    }
}

fn from_v2_value(v: v2::Value) -> v3::Value {
    match v {
        v2::Value::Integer(i) => v3::Value::Integer(i),
        v2::Value::Real(r) => v3::Value::Real(r),
        v2::Value::Text(t) => v3::Value::Text(t),
        v2::Value::Blob(b) => v3::Value::Blob(b),
        v2::Value::Null => v3::Value::Null,
    }
}

fn to_v2_value(v: v3::Value) -> v2::Value {
    match v {
        v3::Value::Integer(i) => v2::Value::Integer(i),
        v3::Value::Real(r) => v2::Value::Real(r),
        v3::Value::Text(t) => v2::Value::Text(t),
        v3::Value::Blob(b) => v2::Value::Blob(b),
        v3::Value::Null => v2::Value::Null,
    }
}

fn to_v2_result(r: v3::QueryResult) -> v2::QueryResult {
    v2::QueryResult {
        columns: r.columns,
        rows: r
            .rows
            .into_iter()
            .map(|row| v2::RowResult {
                values: row.values.into_iter().map(to_v2_value).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_that_cannot_be_read_is_named_at_start() {
        let state = tempfile::tempdir().unwrap();
        let used = BTreeMap::from([("hub".to_string(), vec!["default".to_string()])]);
        let databases = SqliteDatabases::new(&used, &HashMap::new(), state.path()).unwrap();
        // Not there yet: Spin creates it at the first statement, nothing to say.
        assert!(databases.problems(&used).is_empty());
        let file = state.path().join(DEFAULT_DATABASE_FILE);
        rusqlite::Connection::open(&file)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        assert!(databases.problems(&used).is_empty());
        std::fs::write(&file, vec![b'x'; 8192]).unwrap();
        let problems = databases.problems(&used);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("SQLite database `default` (")
                && problems[0].contains("file is not a database"),
            "{problems:?}"
        );
    }

    fn conn(config: DatabaseConfig) -> Arc<Mutex<rusqlite::Connection>> {
        SqliteConnection { config, conn: None }
            .connection()
            .unwrap()
    }

    // The generated value type has no `PartialEq`; its debug form says the same.
    fn show(values: &[v3::Value]) -> String {
        format!("{values:?}")
    }

    fn run(
        c: &Mutex<rusqlite::Connection>,
        sql: &str,
        params: Vec<v3::Value>,
    ) -> Result<v3::QueryResult, v3::Error> {
        execute_blocking(c, sql, params)
    }

    #[test]
    fn values_round_trip_and_returning_works() {
        let dir = tempfile::tempdir().unwrap();
        let c = conn(DatabaseConfig::File(dir.path().join("db.sqlite")));
        run(
            &c,
            "CREATE TABLE t (id INTEGER PRIMARY KEY, i, r, s, b, n)",
            vec![],
        )
        .unwrap();
        let inserted = run(
            &c,
            "INSERT INTO t (i, r, s, b, n) VALUES (?, ?, ?, ?, ?) RETURNING id, i, r, s, b, n",
            vec![
                v3::Value::Integer(i64::MIN),
                v3::Value::Real(1.5),
                v3::Value::Text("é✓".into()),
                v3::Value::Blob(vec![0, 255]),
                v3::Value::Null,
            ],
        )
        .unwrap();
        assert_eq!(inserted.columns, ["id", "i", "r", "s", "b", "n"]);
        assert_eq!(
            show(&inserted.rows[0].values),
            show(&[
                v3::Value::Integer(1),
                v3::Value::Integer(i64::MIN),
                v3::Value::Real(1.5),
                v3::Value::Text("é✓".into()),
                v3::Value::Blob(vec![0, 255]),
                v3::Value::Null,
            ])
        );
        assert_eq!(c.lock().unwrap().changes(), 1);
        assert_eq!(c.lock().unwrap().last_insert_rowid(), 1);
    }

    #[test]
    fn errors_are_io_with_sqlites_message() {
        let c = conn(DatabaseConfig::InMemory);
        let Err(v3::Error::Io(msg)) = run(&c, "SELEC 1", vec![]) else {
            panic!("a syntax error is an io error");
        };
        assert!(msg.contains("syntax error"), "{msg}");
        assert!(matches!(run(&c, "SELECT ?", vec![]), Err(v3::Error::Io(_))));
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.db");
        let attach = format!("ATTACH DATABASE '{}' AS other", other.display());
        assert!(matches!(run(&c, &attach, vec![]), Err(v3::Error::Io(_))));
        run(&c, "ATTACH DATABASE ':memory:' AS scratch", vec![]).unwrap();
    }

    #[test]
    fn each_connection_is_its_own_so_transactions_are_isolated() {
        let dir = tempfile::tempdir().unwrap();
        let config = DatabaseConfig::File(dir.path().join("db.sqlite"));
        let a = conn(config.clone());
        let b = conn(config.clone());
        run(&a, "CREATE TABLE t (v INTEGER)", vec![]).unwrap();
        run(&a, "BEGIN", vec![]).unwrap();
        run(&a, "INSERT INTO t VALUES (1)", vec![]).unwrap();
        let seen = run(&b, "SELECT count(*) FROM t", vec![]).unwrap();
        assert_eq!(show(&seen.rows[0].values), show(&[v3::Value::Integer(0)]));
        // A connection closed mid-transaction rolls back.
        drop(a);
        let c = conn(config);
        let seen = run(&c, "SELECT count(*) FROM t", vec![]).unwrap();
        assert_eq!(show(&seen.rows[0].values), show(&[v3::Value::Integer(0)]));
    }

    #[test]
    fn in_memory_opens_start_empty_and_files_persist() {
        let a = conn(DatabaseConfig::InMemory);
        run(&a, "CREATE TABLE t (v)", vec![]).unwrap();
        let b = conn(DatabaseConfig::InMemory);
        assert!(run(&b, "SELECT * FROM t", vec![]).is_err());
    }

    #[test]
    fn unconfigured_labels_stop_the_start_and_default_is_built_in() {
        let dir = tempfile::tempdir().unwrap();
        let used = BTreeMap::from([(
            "hub".to_string(),
            vec!["default".to_string(), "other".into()],
        )]);
        let err = SqliteDatabases::new(&used, &HashMap::new(), dir.path())
            .err()
            .expect("`other` is not configured");
        assert!(
            err.to_string()
                .contains("- Component hub uses database 'other'"),
            "{err}"
        );
        let configured = HashMap::from([("other".to_string(), DatabaseConfig::InMemory)]);
        let dbs = SqliteDatabases::new(&used, &configured, &dir.path().join("state")).unwrap();
        assert_eq!(
            dbs.get("default"),
            Some(&DatabaseConfig::File(dir.path().join("state/sqlite_db.db")))
        );
        assert!(dir.path().join("state").is_dir());
    }
}
