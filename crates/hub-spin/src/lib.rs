//! The hub's store under Spin, in one place for the hub, which keeps its messages there, and
//! `/api/health` (`dochub-health-spin`), which probes it. Both read the same variable and open
//! the store with the same calls, so health reports on the store the hub actually uses, in the
//! words the hub would use.
//!
//! - [`HubStore::configured`]: PostgreSQL (`spin:postgres`) at the variable `hub_database_url`
//!   when it is set, else Spin's SQLite database `default` (`spin:sqlite`);
//! - [`HubStore::open`]: a connection to it, an [`OpenStore`], which is the hub's
//!   [`dochub_hub::Sql`];
//! - [`OpenStore::probe`]: whether it answers as a send needs.
//!
//! The feature `edge` leaves SQLite out: Akamai Functions offers none, and a component that
//! imports `spin:sqlite` does not load there.
//!
//! ```no_run
//! use dochub_hub_spin::HubStore;
//! let probe = HubStore::configured().open().and_then(|db| db.probe());
//! println!("{probe:?}");
//! ```
#![deny(missing_docs)]

mod postgres;
#[cfg(not(feature = "edge"))]
mod sqlite;

use dochub_hub::{Dialect, Sql, SqlError, SqlValue};

use postgres::SpinPostgres;
#[cfg(not(feature = "edge"))]
use sqlite::SpinSqlite;

/// The variable holding the hub's PostgreSQL address, for a caller that reads it itself
/// (a WASIp3 instance, which keeps its settings).
pub const DATABASE_URL: &str = "hub_database_url";

/// Where the hub keeps its messages in this deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubStore {
    /// Spin's SQLite database `default`, as `hub_database_url` is empty. The edge build has no
    /// SQLite: there this means the hub has no store.
    Sqlite,
    /// PostgreSQL at this address (which may hold a password: errors never show it).
    Postgres(String),
}

impl HubStore {
    /// The store `hub_database_url` names. Unreadable reads as empty, as for every hub setting
    /// that has a default.
    pub fn configured() -> HubStore {
        HubStore::of_setting(&HubStore::read_setting().unwrap_or_default())
    }

    /// The variable `hub_database_url`, for a caller that keeps it (a reused instance).
    pub fn read_setting() -> Result<String, dochub_spin_imports::variables::Error> {
        dochub_spin_imports::variables::get(DATABASE_URL)
    }

    /// The store a value of `hub_database_url` names.
    pub fn of_setting(url: &str) -> HubStore {
        match url.trim() {
            "" => HubStore::Sqlite,
            url => HubStore::Postgres(url.to_owned()),
        }
    }

    /// A new connection to this store: on PostgreSQL one from Spin's pool, on SQLite the
    /// database file opened. Whether to keep it is the caller's to decide. The error is what a
    /// client is told (503).
    pub fn open(&self) -> Result<OpenStore, String> {
        let connection = match self {
            HubStore::Postgres(url) => Connection::Postgres(postgres::open(url)?),
            #[cfg(not(feature = "edge"))]
            HubStore::Sqlite => Connection::Sqlite(sqlite::open()?),
            #[cfg(feature = "edge")]
            HubStore::Sqlite => return Err(NO_SQLITE.to_owned()),
        };
        Ok(OpenStore(connection))
    }
}

/// Connections for one request, one per call: [`HubStore::connector`].
pub type Connector = Box<dyn Fn() -> Result<OpenStore, String>>;

impl HubStore {
    /// Connections for one request that may wait (a long-poll, a stream): SQLite's database
    /// is opened once and kept, as it has no pool for waiters to starve and need not be opened
    /// at every look; PostgreSQL gives a connection from Spin's pool at each call, so a
    /// waiting request holds none in between. An SQLite that does not open (or the edge
    /// build's missing one) fails here; PostgreSQL's errors come from each call.
    pub fn connector(&self) -> Result<Connector, String> {
        match self {
            HubStore::Sqlite => {
                let db = self.open()?;
                Ok(Box::new(move || Ok(db.clone())))
            }
            HubStore::Postgres(_) => {
                let store = self.clone();
                Ok(Box::new(move || store.open()))
            }
        }
    }
}

/// Why the edge build has no store while `hub_database_url` is empty.
#[cfg(feature = "edge")]
const NO_SQLITE: &str = "the hub keeps its messages in PostgreSQL in the edge build, and no \
    database is configured: set the variable `hub_database_url`";

/// A connection to the hub's store ([`HubStore::open`]); clones share it.
#[derive(Clone)]
pub struct OpenStore(Connection);

#[derive(Clone)]
enum Connection {
    #[cfg(not(feature = "edge"))]
    Sqlite(SpinSqlite),
    Postgres(SpinPostgres),
}

impl OpenStore {
    /// Whether the store answers as a send needs, without writing anything: SQLite, whether
    /// the file reads as a database and would give the write lock; PostgreSQL, whether it
    /// answers a statement. A failure is worded as the hub words a store's; after one, drop
    /// the connection: its state is not known.
    pub fn probe(&self) -> Result<(), String> {
        match &self.0 {
            #[cfg(not(feature = "edge"))]
            Connection::Sqlite(db) => db.probe(),
            Connection::Postgres(db) => db.probe(),
        }
    }

    fn sql(&self) -> &dyn Sql {
        match &self.0 {
            #[cfg(not(feature = "edge"))]
            Connection::Sqlite(db) => db,
            Connection::Postgres(db) => db,
        }
    }
}

impl Sql for OpenStore {
    fn dialect(&self) -> Dialect {
        self.sql().dialect()
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        self.sql().query(sql, params)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        self.sql().execute(sql, params)
    }

    fn query_row(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlValue>, SqlError> {
        self.sql().query_row(sql, params)
    }

    fn answer_busy_at_once(&self) -> Result<(), SqlError> {
        self.sql().answer_busy_at_once()
    }
}

/// A store's error as the hub itself would word it to a client.
fn store_failure(cause: &str) -> String {
    match dochub_hub::StoreFailure::of(cause) {
        Some(failure) => failure.message(cause),
        None => format!("the hub's store fails: {cause}"),
    }
}
