//! The one thing the hub needs from a database: run a statement with parameters, get rows or a
//! count back. The `hub` component implements [`Sql`] over Spin's `spin:sqlite` and
//! `spin:postgres`; the crate's tests over rusqlite.

use std::borrow::Cow;

/// A statement parameter or a result column: the hub stores only integers and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlValue {
    /// A 64-bit integer (`BIGINT`).
    Int(i64),
    /// A UTF-8 string (`TEXT`).
    Text(String),
    /// SQL `NULL`.
    Null,
}

impl SqlValue {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Self::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The text, if this is text.
    pub fn into_text(self) -> Option<String> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for SqlValue {
    fn from(n: i64) -> Self {
        Self::Int(n)
    }
}

impl From<&str> for SqlValue {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

impl From<Option<&str>> for SqlValue {
    fn from(s: Option<&str>) -> Self {
        s.map_or(Self::Null, SqlValue::from)
    }
}

/// Which SQL the database speaks. The hub writes its statements with PostgreSQL's `$1`
/// placeholders and `CAST(... AS BIGINT|TEXT)` where a parameter's type cannot be inferred; both
/// engines accept the rest as written. A `LIMIT` takes `CAST($n AS BIGINT)`, never a bare
/// `$n`: SQLite plans with a bare one's bound value, and so compiles the statement a second
/// time at its first step, where every request's statements are compiled afresh already
/// (Spin opens a new connection per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite (Spin's `spin:sqlite`, libSQL): `?1` placeholders; writers are serialized.
    Sqlite,
    /// PostgreSQL (`spin:postgres`).
    Postgres,
}

impl Dialect {
    /// `sql` with this dialect's placeholders (`$1` becomes `?1` on SQLite). The hub's statements
    /// contain no `$` other than in placeholders.
    pub fn statement<'a>(&self, sql: &'a str) -> Cow<'a, str> {
        match self {
            Self::Postgres => Cow::Borrowed(sql),
            Self::Sqlite => Cow::Owned(sql.replace('$', "?")),
        }
    }
}

/// A failed statement, with the database's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("database error: {0}")]
pub struct SqlError(pub String);

impl SqlError {
    /// Whether the statement failed because the hub's tables, columns (a database of an earlier
    /// release) or, on PostgreSQL, its function do not exist yet (SQLite: `no such table`, `no
    /// such column`, or `cannot modify ... because it is a view` for a view whose trigger an
    /// interrupted set-up never made; PostgreSQL: `relation|column|function ... does not
    /// exist`): the hub then sets them up and retries.
    pub fn is_missing_object(&self) -> bool {
        self.0.contains("no such table")
            || self.0.contains("no such column")
            || (self.0.contains("cannot modify") && self.0.contains("because it is a view"))
            || ((self.0.contains("relation")
                || self.0.contains("function")
                || self.0.contains("column"))
                && self.0.contains("does not exist"))
    }

    /// The store-wide failure this error tells of, if it is one.
    pub fn failure(&self) -> Option<StoreFailure> {
        StoreFailure::of(&self.0)
    }

    /// Whether the database was too busy to take the write (SQLite's busy timeout ran out, or a
    /// PostgreSQL deadlock or serialization failure): worth a retry by the client.
    pub fn is_busy(&self) -> bool {
        let m = self.0.to_ascii_lowercase();
        m.contains("database is locked")
            || m.contains("database is busy")
            || m.contains("deadlock detected")
            || m.contains("could not serialize")
    }
}

/// A store that fails every request alike, whatever the request: answered 503 naming the cause,
/// not 500, since the fault is the store's and the client's request may well succeed later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFailure {
    /// The store cannot be read: not a database, damaged, or its file cannot be opened.
    Unreadable,
    /// The store can be read but not written: read-only, or the disk is full.
    Unwritable,
    /// The connection broke while a statement ran: whether it took effect is unknown.
    ConnectionLost,
}

impl StoreFailure {
    /// The failure a database message tells of, from SQLite's and PostgreSQL's own wording
    /// (as Spin's `spin:sqlite` and `spin:postgres` pass them on, and `rusqlite`'s).
    pub fn of(message: &str) -> Option<StoreFailure> {
        let m = message.to_ascii_lowercase();
        let any = |needles: &[&str]| needles.iter().any(|n| m.contains(n));
        if any(&[
            "readonly database",
            "read-only",
            "database or disk is full",
            "no space left",
        ]) {
            Some(StoreFailure::Unwritable)
        } else if any(&[
            "file is not a database",
            "disk image is malformed",
            "unable to open database",
            "disk i/o error",
            "is a directory",
        ]) {
            Some(StoreFailure::Unreadable)
        } else if any(&[
            // tokio-postgres's `Debug`, which Spin v4.0.2 passes on as the error's text.
            "kind: closed",
            "kind: io",
            "connection closed",
            "(closed)",
            "\"closed\"",
            "connection reset",
            "broken pipe",
            "terminating connection",
            "server closed the connection",
            "unexpected eof",
        ]) {
            Some(StoreFailure::ConnectionLost)
        } else {
            None
        }
    }

    /// What a client is told: the cause, and what to do.
    pub fn message(self, cause: &str) -> String {
        match self {
            StoreFailure::Unreadable => format!(
                "the hub's store is unreadable: {cause}; an operator must repair or replace it"
            ),
            StoreFailure::Unwritable => format!(
                "the hub's store is unwritable: {cause}; reads that change nothing still work"
            ),
            StoreFailure::ConnectionLost => format!(
                "the connection to the hub's store was lost during the request ({cause}), so \
                 whether it took effect is unknown; retrying with the same Idempotency-Key is safe"
            ),
        }
    }
}

/// A connection to the hub's database. Each call runs one statement; the statements of one
/// [`Sql`] value run on one connection, in order, so `BEGIN IMMEDIATE` ... `COMMIT` is a
/// transaction on SQLite.
pub trait Sql {
    /// The SQL this database speaks.
    fn dialect(&self) -> Dialect;

    /// Runs one statement and returns its rows (none for a statement without results).
    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError>;

    /// Runs one statement and returns how many rows it inserted, updated or deleted.
    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError>;

    /// Runs a query that always returns exactly one row (a call of a function that returns
    /// one, a `SELECT` of scalars) and returns that row. A store that must rewrite other
    /// queries to learn whether they returned rows (Spin's PostgreSQL) runs this one as written.
    fn query_row(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlValue>, SqlError> {
        first_row(self.query(sql, params)?)
    }

    /// SQLite: has this connection answer at once, busy, when another holds the write lock
    /// (`busy_timeout` 0), so that the hub paces its own waits for it. The setting stays with
    /// the connection: one that serves many requests may remember that it ran this and skip
    /// the statement.
    fn answer_busy_at_once(&self) -> Result<(), SqlError> {
        self.query("PRAGMA busy_timeout = 0", &[]).map(drop)
    }
}

/// The one row of [`Sql::query_row`]'s answer, or an error when there is none.
pub fn first_row<R>(rows: Vec<R>) -> Result<R, SqlError> {
    rows.into_iter()
        .next()
        .ok_or_else(|| SqlError("a query of one row answered none".to_owned()))
}

impl<S: Sql + ?Sized> Sql for &S {
    fn dialect(&self) -> Dialect {
        (**self).dialect()
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, SqlError> {
        (**self).query(sql, params)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, SqlError> {
        (**self).execute(sql, params)
    }

    fn query_row(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<SqlValue>, SqlError> {
        (**self).query_row(sql, params)
    }

    fn answer_busy_at_once(&self) -> Result<(), SqlError> {
        (**self).answer_busy_at_once()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_statements_use_numbered_question_marks() {
        let sql = "SELECT a FROM t WHERE b = $1 AND c < $12";
        assert_eq!(Dialect::Postgres.statement(sql), sql);
        assert_eq!(
            Dialect::Sqlite.statement(sql),
            "SELECT a FROM t WHERE b = ?1 AND c < ?12"
        );
    }

    #[test]
    fn errors_are_classified_from_both_engines_messages() {
        assert!(SqlError("no such table: hub_messages".into()).is_missing_object());
        assert!(
            SqlError("db error: ERROR: relation \"hub_messages\" does not exist".into())
                .is_missing_object()
        );
        assert!(
            SqlError("function hub_unread(text, bigint, bigint) does not exist".into())
                .is_missing_object()
        );
        assert!(!SqlError("syntax error".into()).is_missing_object());
        assert!(SqlError("Io(\"database is locked\")".into()).is_busy());
        assert!(SqlError("ERROR: deadlock detected".into()).is_busy());
        assert!(!SqlError("UNIQUE constraint failed".into()).is_busy());
        for (message, failure) in [
            ("Io(\"file is not a database\")", StoreFailure::Unreadable),
            (
                "Io(\"database disk image is malformed\")",
                StoreFailure::Unreadable,
            ),
            (
                "Io(\"attempt to write a readonly database\")",
                StoreFailure::Unwritable,
            ),
            ("Io(\"database or disk is full\")", StoreFailure::Unwritable),
            (
                "QueryFailed(Text(\"connection closed\"))",
                StoreFailure::ConnectionLost,
            ),
            ("QueryFailed(Closed)", StoreFailure::ConnectionLost),
            (
                "QueryFailed(Text(\"Error { kind: Closed, cause: None }\"))",
                StoreFailure::ConnectionLost,
            ),
        ] {
            assert_eq!(
                SqlError(message.into()).failure(),
                Some(failure),
                "{message}"
            );
        }
        assert_eq!(SqlError("UNIQUE constraint failed".into()).failure(), None);
    }
}
