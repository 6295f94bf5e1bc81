//! What the hub's algorithm ([`Hub`](super::Hub)) asks of a database engine, and the
//! connection it hands one.

use super::*;

/// What SQLite and PostgreSQL do differently. Everything else (which rows a send writes, what a
/// read answers, when a purge runs, the schema's tables) is the algorithm's, in `store.rs`.
pub(super) trait Engine: Sync {
    /// What this engine's "busy" means ([`HubError::Busy`]).
    fn busy(&self) -> Busy;

    /// Runs a send's steps ([`Hub::send_steps`](super::Hub)) as one atomic unit.
    fn atomically(
        &self,
        conn: &Conn<'_>,
        op: &mut dyn FnMut() -> Result<(), HubError>,
    ) -> Result<(), HubError>;

    /// Stores a send in one statement when it needs nothing written but the message itself
    /// (`hub_send`, see the crate docs), answering [`Stored::NotAtOnce`], having written
    /// nothing, when it needs more. With the stored message, its thread (`None`: its own id).
    fn send_at_once(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
    ) -> Result<(Stored, Option<i64>), HubError>;

    /// Allocates the id and the timestamp and stores a send's copies in `thread`: the last of
    /// its steps, after the sender and the recipient are registered.
    fn insert(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
        thread: Option<i64>,
    ) -> Result<Stored, HubError>;

    /// The rows of `machine`'s (`$1`) mailbox holding every one of `words`, newest first, as
    /// the unsearched form in [`Hub::mailbox`](super::Hub::mailbox) selects them (`$2` oldest
    /// creation time, `$3` the id below which, `$4` the most rows, then `filter`); adds the
    /// search's parameter to `params`.
    fn search_rows(
        &self,
        words: &[String],
        columns: &str,
        filter: &str,
        params: &mut Vec<SqlValue>,
    ) -> String;

    /// Brings the full-text index up to date before a search, where sends leave that to it.
    fn catch_up_search(&self, conn: &Conn<'_>) -> Result<(), HubError>;

    /// Deletes the messages created before `oldest`, and what indexes them, and the machines
    /// a purge forgets ([`forgotten_machines`]).
    fn purge_expired(&self, conn: &Conn<'_>, oldest: i64) -> Result<(), HubError>;

    /// Set-up's first step, before the tables: the database's own settings.
    fn prepare(&self, conn: &Conn<'_>) -> Result<(), HubError>;

    /// Adds the columns of `upgrade` its table lacks and runs what fills them, as one atomic
    /// unit.
    fn upgrade(&self, conn: &Conn<'_>, upgrade: &Upgrade) -> Result<(), HubError>;

    /// Adds the counts of each machine's messages and what keeps them (`read_kept`,
    /// `unread_kept`) to a database without `unread_kept`, in one atomic step.
    fn count_messages(&self, conn: &Conn<'_>) -> Result<(), HubError>;

    /// The engine's own objects, made last: its full-text index and what a send calls.
    fn make_objects(&self, conn: &Conn<'_>) -> Result<(), HubError>;

    /// How many statements [`Engine::make_objects`] runs that may each race the same statement
    /// of another set-up.
    fn objects(&self) -> usize;
}

/// What [`HubError::Busy`] tells of, and so how the hub answers it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Busy {
    /// Another connection holds SQLite's write lock: the operation is tried again after a
    /// pause, for up to [`BUSY_PATIENCE`].
    LockHeld,
    /// PostgreSQL broke a deadlock by cancelling the statement, which took nothing: a read
    /// that takes messages looks again; anything else is answered 503 for the client to retry.
    /// PostgreSQL waits for locks itself.
    Cancelled,
}

/// A connection as an engine uses it: statements in the hub's form (`$n` placeholders),
/// errors as the hub's.
pub(super) struct Conn<'a> {
    pub(super) sql: &'a dyn Sql,
    pub(super) dialect: Dialect,
}

impl Conn<'_> {
    pub(super) fn query(
        &self,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<Vec<Vec<SqlValue>>, HubError> {
        self.sql
            .query(&self.dialect.statement(sql), params)
            .map_err(store_error)
    }

    pub(super) fn query_row(
        &self,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<Vec<SqlValue>, HubError> {
        self.sql
            .query_row(&self.dialect.statement(sql), params)
            .map_err(store_error)
    }

    pub(super) fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, HubError> {
        self.sql
            .execute(&self.dialect.statement(sql), params)
            .map_err(store_error)
    }
}

/// A send on its way to the store, with what its statements take.
pub(super) struct Outgoing<'a> {
    pub(super) request: &'a SendRequest,
    pub(super) key: Option<&'a IdempotencyKey>,
    /// The sender's clock, milliseconds.
    pub(super) now: i64,
    pub(super) limits: &'a Limits,
}

impl Outgoing<'_> {
    /// The oldest creation time not expired.
    pub(super) fn oldest(&self) -> i64 {
        self.now - self.limits.retention_ms
    }

    pub(super) fn max_unread(&self) -> i64 {
        i64::try_from(self.limits.max_unread).unwrap_or(i64::MAX)
    }

    pub(super) fn max_read(&self) -> i64 {
        i64::try_from(self.limits.max_read).unwrap_or(i64::MAX)
    }

    pub(super) fn reply_to(&self) -> SqlValue {
        self.request.reply_to.map_or(SqlValue::Null, |r| {
            i64::try_from(r).unwrap_or(i64::MAX).into()
        })
    }

    /// The parameters `$1`..`$4` of [`send_candidates`]: recipient, sender, oldest creation
    /// time, [`Limits::max_unread`].
    pub(super) fn target_params(&self) -> Vec<SqlValue> {
        let (to, from) = (self.request.to.as_str(), self.request.from.as_str());
        vec![
            to.into(),
            from.into(),
            self.oldest().into(),
            self.max_unread().into(),
        ]
    }
}

/// What a send's insert did.
pub(super) enum Stored {
    /// Stored with this id and timestamp. `trim`: whether the sender's read messages may now be
    /// over [`Limits::max_read`] (on PostgreSQL never: the send's statement trims them).
    Message { id: i64, created: i64, trim: bool },
    /// A direct send whose recipient's inbox was full: nothing stored.
    InboxFull,
    /// A concurrent send with the same key claimed it first: nothing stored.
    KeyTaken,
    /// The send needs more than its message written ([`Engine::send_at_once`]): nothing
    /// stored.
    NotAtOnce,
}
