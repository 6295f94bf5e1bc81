//! The hub's store under Spin, in one place for the hub, which keeps its messages there, and
//! `/api/health` (`dochub-health-spin`), which probes it. Both read the same variable and open
//! the store with the same calls, so health reports on the store the hub actually uses, in the
//! words the hub would use.
//!
//! - [`HubStore::configured`]: PostgreSQL (`spin:postgres`) at the variable `hub_database_url`
//!   when it is set, else Spin's SQLite database `default` (`spin:sqlite`);
//! - [`open_postgres`] and [`open_sqlite`]: a connection, as the hub's [`dochub_hub::Sql`];
//! - [`SpinPostgres::probe`] and [`SqliteProbe::probe`]: whether it answers as a send needs.
//!
//! The feature `edge` leaves SQLite out: Akamai Functions offers none, and a component that
//! imports `spin:sqlite` does not load there.
//!
//! ```no_run
//! use dochub_hub_spin::{HubStore, open_postgres};
//! let probe = match HubStore::configured() {
//!     HubStore::Postgres(url) => open_postgres(&url).and_then(|db| db.probe()),
//!     HubStore::Sqlite => dochub_hub_spin::SqliteProbe::open().and_then(|db| db.probe()),
//! };
//! println!("{probe:?}");
//! ```
#![deny(missing_docs)]

mod postgres;
#[cfg(not(feature = "edge"))]
mod sqlite;

pub use postgres::{SpinPostgres, open_postgres};
#[cfg(not(feature = "edge"))]
pub use sqlite::{SpinSqlite, SqliteProbe, open_sqlite};

/// The variable holding the hub's PostgreSQL address, for a caller that reads it itself
/// (a WASIp3 instance, which keeps its settings).
pub const DATABASE_URL: &str = "hub_database_url";

/// Where the hub keeps its messages in this deployment.
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
}

/// A store's error as the hub itself would word it to a client.
fn store_failure(cause: &str) -> String {
    match dochub_hub::StoreFailure::of(cause) {
        Some(failure) => failure.message(cause),
        None => format!("the hub's store fails: {cause}"),
    }
}
