//! The hub's storage logic on SQL: registration, send, inbox reads, acknowledgement, machine list.
//! Why each statement is safe is in the crate docs.

use crate::HubError;
use crate::model::{
    IdempotencyKey, Inbox, InboxMessage, MachineEntry, MachineName, Message, Recipient,
    SendRequest, iso_millis,
};
use crate::sql::{Dialect, Sql, SqlError, SqlValue};

/// Inbox reads return at most this many messages.
pub const MAX_LIMIT: usize = 500;
/// Inbox reads return this many messages when the request does not say.
pub const DEFAULT_LIMIT: usize = 50;
/// `last_seen` is written at most once per this many milliseconds per machine.
pub const SEEN_EVERY_MS: i64 = 1_000;
/// How long an `Idempotency-Key` is remembered: 24 hours.
pub const IDEMPOTENCY_MS: i64 = 24 * 60 * 60 * 1000;
/// Default of the variable `hub_max_unread`.
pub const DEFAULT_MAX_UNREAD: u64 = 10_000;
/// The JSON an inbox answer may hold, by default: 4 MiB, well under the 10 MiB response limit
/// of edge hosts and the memory of one instance.
pub const DEFAULT_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// What one message may take in an inbox answer besides its body: ids, names, timestamp, keys.
const MESSAGE_JSON_OVERHEAD: i64 = 384;
/// Default of the variable `hub_retention_days`.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// An acknowledging read that lost every message it chose to a concurrent reader looks again at
/// most this many times.
const ACK_ATTEMPTS: usize = 20;
/// A SQLite send whose transaction could not get the write lock within the busy timeout (5 s
/// per attempt under Spin) is tried again this many times in all; it wrote nothing meanwhile.
const SEND_ATTEMPTS: usize = 4;

/// The schema, created on first use. Messages are one row per recipient; `id` is the hub-wide
/// message id (the copies of a broadcast share it), allocated from `hub_counter` under its row
/// lock, so ids are committed in increasing order (see the crate docs).
const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL, \
     sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     PRIMARY KEY (machine, id))",
    "CREATE INDEX IF NOT EXISTS hub_messages_created ON hub_messages (created)",
    "CREATE TABLE IF NOT EXISTS hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    "INSERT INTO hub_counter (name, value) VALUES ('ids', 0) ON CONFLICT (name) DO NOTHING",
    "CREATE TABLE IF NOT EXISTS hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL, \
     id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     PRIMARY KEY (sender, idem_key))",
    "CREATE INDEX IF NOT EXISTS hub_sends_created ON hub_sends (created)",
];

/// The columns of a message row, in the order [`message_of`] reads them.
const MESSAGE_COLUMNS: &str = "id, sender, recipient, body, created";

/// Where the hub gets the time from.
pub trait Clock {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// The limits that keep the store bounded (Spin variables `hub_max_unread` and
/// `hub_retention_days`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A send to an inbox holding this many unread messages is refused (507); a broadcast skips it.
    pub max_unread: u64,
    /// Unread messages older than this are deleted, and machines unseen for longer drop out of
    /// broadcasts and of `/machines`, in milliseconds.
    pub retention_ms: i64,
    /// An inbox answer stops at the message that takes its JSON past this many bytes (that one
    /// included, so an answer holds at least one message): fewer messages, never a failure.
    /// The size counted is the most a message's JSON can take, 6 bytes per character of its
    /// body (a control character escaped as `\u00XX`) plus [`MESSAGE_JSON_OVERHEAD`].
    pub answer_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_unread: DEFAULT_MAX_UNREAD,
            retention_ms: DEFAULT_RETENTION_DAYS as i64 * DAY_MS,
            answer_bytes: DEFAULT_ANSWER_BYTES,
        }
    }
}

impl Limits {
    /// Reads the variables' values; an empty value means the default. Anything but a positive
    /// integer (at most 1,000,000,000 unread, 36,500 days) is an error, never a silent default.
    pub fn parse(max_unread: &str, retention_days: &str) -> Result<Self, HubError> {
        let number = |value: &str, name: &str, max: u64, default: u64| {
            let value = value.trim();
            if value.is_empty() {
                return Ok(default);
            }
            value
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| {
                    HubError::Config(format!(
                        "the variable `{name}` must be an integer from 1 to {max}, not `{value}`"
                    ))
                })
        };
        let max_unread = number(
            max_unread,
            "hub_max_unread",
            1_000_000_000,
            DEFAULT_MAX_UNREAD,
        )?;
        let days = number(
            retention_days,
            "hub_retention_days",
            36_500,
            DEFAULT_RETENTION_DAYS,
        )?;
        Ok(Self {
            max_unread,
            retention_ms: days as i64 * DAY_MS,
            ..Self::default()
        })
    }
}

/// The message hub over a SQL database.
#[derive(Debug, Clone)]
pub struct Hub<S, C = SystemClock> {
    db: S,
    clock: C,
    limits: Limits,
}

impl<S: Sql> Hub<S> {
    /// A hub on `db` with the default limits and the system clock.
    pub fn new(db: S) -> Self {
        Self::with_clock(db, SystemClock, Limits::default())
    }
}

impl<S: Sql, C: Clock> Hub<S, C> {
    /// A hub on `db` with these limits, reading the time from `clock`.
    pub fn with_clock(db: S, clock: C, limits: Limits) -> Self {
        Self { db, clock, limits }
    }

    /// The database.
    pub fn db(&self) -> &S {
        &self.db
    }

    /// Sends a message: registers the sender and stores one copy for the recipient, or for every
    /// machine but the sender that is registered now, was seen within the retention period and
    /// has room in its inbox. With `key`, a repeat of the same key by the same sender within 24 h
    /// stores nothing and returns the message the first send stored; the same key with another
    /// recipient or body is refused ([`HubError::KeyReused`]), since answering the first message
    /// would tell the sender a message was stored that never was. Keys belong to their sender:
    /// two machines that pick the same key never meet.
    pub fn send(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
    ) -> Result<Message, HubError> {
        let now = self.clock.now_ms();
        self.with_schema(|| match self.db.dialect() {
            // Writers are serialized on SQLite: one IMMEDIATE transaction makes the steps one.
            Dialect::Sqlite => {
                let mut attempt = 1;
                loop {
                    match self.transaction(|| self.send_steps(request, key, now)) {
                        Err(HubError::Busy) if attempt < SEND_ATTEMPTS => attempt += 1,
                        result => break result,
                    }
                }
            }
            // No multi-statement transaction on PostgreSQL: Spin hands a pooled connection with
            // an unfinished transaction to the next request. The step that must be atomic is
            // one statement (`insert_postgres`).
            Dialect::Postgres => self.send_steps(request, key, now),
        })
    }

    /// Up to `limit` (clamped to 1..=500) unread messages of `machine`'s inbox, oldest first. With
    /// `ack`, they are deleted as they are returned: no other reader ever gets them. `register`
    /// records the machine as seen (and so a recipient of broadcasts).
    pub fn inbox(
        &self,
        machine: &MachineName,
        limit: usize,
        ack: bool,
        register: bool,
    ) -> Result<Inbox, HubError> {
        let limit = limit.clamp(1, MAX_LIMIT) as i64;
        let now = self.clock.now_ms();
        let m = machine.as_str();
        self.with_schema(|| {
            if register {
                self.touch(machine, now)?;
            }
            let oldest = now - self.limits.retention_ms;
            let answer_bytes = i64::try_from(self.limits.answer_bytes).unwrap_or(i64::MAX);
            let window = [m.into(), oldest.into(), limit.into(), answer_bytes.into()];
            let messages = if ack {
                self.take(&window)?
            } else {
                self.query(
                    &format!(
                        "SELECT {MESSAGE_COLUMNS} FROM hub_messages \
                         WHERE machine = $1 AND id IN ({}) ORDER BY id",
                        answer_ids()
                    ),
                    &window,
                )?
                .into_iter()
                .map(message_of)
                .collect::<Result<Vec<_>, _>>()?
            };
            Ok(Inbox {
                machine: m.to_owned(),
                messages: messages
                    .into_iter()
                    .map(|message| InboxMessage { message, read: ack })
                    .collect(),
            })
        })
    }

    /// Marks every message of `machine`'s inbox with an id up to and including `through` read
    /// (deletes it) and registers the machine; returns how many were marked. A repeat returns 0.
    pub fn acknowledge(&self, machine: &MachineName, through: u64) -> Result<u64, HubError> {
        let through = i64::try_from(through).unwrap_or(i64::MAX);
        let now = self.clock.now_ms();
        self.with_schema(|| {
            self.touch(machine, now)?;
            self.execute(
                "DELETE FROM hub_messages WHERE machine = $1 AND id <= $2",
                &[machine.as_str().into(), through.into()],
            )
        })
    }

    /// Every machine seen within the retention period, with when, by name.
    pub fn machines(&self) -> Result<Vec<MachineEntry>, HubError> {
        let oldest = self.clock.now_ms() - self.limits.retention_ms;
        self.with_schema(|| {
            self.query(
                "SELECT name, last_seen FROM hub_machines WHERE last_seen >= $1 ORDER BY name",
                &[oldest.into()],
            )?
            .into_iter()
            .map(|row| {
                let mut row = row.into_iter();
                let name = row.next().and_then(SqlValue::into_text);
                let seen = row.next().and_then(|v| v.as_int());
                match (name, seen) {
                    (Some(name), Some(ms)) => Ok(MachineEntry {
                        name,
                        last_seen: iso_millis(ms),
                    }),
                    _ => Err(corrupt("a machine row")),
                }
            })
            .collect()
        })
    }

    fn send_steps(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Message, HubError> {
        self.touch(&request.from, now)?;
        self.purge(now)?;
        if let Some(key) = key
            && let Some(sent) = self.earlier_send(request, key, now)?
        {
            return same_request(request, key, sent);
        }
        if let Recipient::Machine(to) = &request.to
            && self.unread(to.as_str())? >= self.limits.max_unread
        {
            return Err(HubError::InboxFull(format!(
                "the inbox of `{to}` already holds {} unread messages (hub_max_unread); \
                 it must be read before it takes more",
                self.limits.max_unread
            )));
        }
        let id = match self.db.dialect() {
            Dialect::Sqlite => Some(self.insert_sqlite(request, key, now)?),
            Dialect::Postgres => self.insert_postgres(request, key, now)?,
        };
        match (id, key) {
            (Some(id), _) => Ok(Message {
                id: u64::try_from(id).map_err(|_| corrupt("a negative message id"))?,
                from: request.from.to_string(),
                to: request.to.as_str().to_owned(),
                body: request.body.clone(),
                timestamp: iso_millis(now),
            }),
            // The same key won a race with this send: answer what it stored.
            (None, Some(key)) => match self.earlier_send(request, key, now)? {
                Some(sent) => same_request(request, key, sent),
                None => Err(HubError::Busy),
            },
            (None, None) => Err(corrupt("a send that stored nothing")),
        }
    }

    /// Allocates the id and stores the copies; the caller holds SQLite's write lock.
    fn insert_sqlite(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<i64, HubError> {
        let id = self
            .query(
                "UPDATE hub_counter SET value = value + 1 WHERE name = 'ids' RETURNING value",
                &[],
            )?
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .and_then(|v| v.as_int())
            .ok_or_else(|| corrupt("the message id counter"))?;
        let (targets, mut params) = self.targets(request, now);
        params.extend([
            id.into(),
            request.from.as_str().into(),
            request.to.as_str().into(),
            request.body.as_str().into(),
            now.into(),
        ]);
        self.execute(
            &format!(
                "INSERT INTO hub_messages (machine, id, sender, recipient, body, created) \
                 SELECT t.name, $5, $6, $7, $8, $9 FROM ({targets}) t"
            ),
            &params,
        )?;
        if let Some(key) = key {
            self.execute(
                "INSERT INTO hub_sends (sender, idem_key, id, recipient, body, created) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    request.from.as_str().into(),
                    key.as_str().into(),
                    id.into(),
                    request.to.as_str().into(),
                    request.body.as_str().into(),
                    now.into(),
                ],
            )?;
        }
        Ok(id)
    }

    /// One statement: allocate the id (the counter's row lock is held until the statement
    /// commits), claim the idempotency key if there is one, and store the copies only if the key
    /// was claimed. `None` when a concurrent send with the same key claimed it first. Always
    /// answers one row (NULL for no id): Spin v4.0.2 never answers a query without rows.
    fn insert_postgres(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Option<i64>, HubError> {
        let (targets, mut params) = self.targets(request, now);
        params.extend([
            SqlValue::from(key.map(IdempotencyKey::as_str)),
            request.from.as_str().into(),
            request.to.as_str().into(),
            request.body.as_str().into(),
            now.into(),
        ]);
        let rows = self.query(
            &format!(
                "WITH c AS (UPDATE hub_counter SET value = value + 1 WHERE name = 'ids' \
                   RETURNING value), \
                 k AS (INSERT INTO hub_sends (sender, idem_key, id, recipient, body, created) \
                   SELECT CAST($6 AS TEXT), CAST($5 AS TEXT), c.value, CAST($7 AS TEXT), \
                     CAST($8 AS TEXT), CAST($9 AS BIGINT) \
                   FROM c WHERE CAST($5 AS TEXT) IS NOT NULL \
                   ON CONFLICT (sender, idem_key) DO NOTHING RETURNING id), \
                 go AS (SELECT value FROM c \
                   WHERE CAST($5 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM k)), \
                 ins AS (INSERT INTO hub_messages (machine, id, sender, recipient, body, created) \
                   SELECT t.name, go.value, CAST($6 AS TEXT), CAST($7 AS TEXT), \
                     CAST($8 AS TEXT), CAST($9 AS BIGINT) \
                   FROM go CROSS JOIN ({targets}) t RETURNING 1) \
                 SELECT (SELECT value FROM go), (SELECT COUNT(*) FROM ins)"
            ),
            &params,
        )?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .and_then(|v| v.as_int()))
    }

    /// The `SELECT` of the recipients' names (column `name`) and its parameters `$1`..`$4`.
    /// PostgreSQL must be able to type every parameter, so both forms name all four.
    fn targets(&self, request: &SendRequest, now: i64) -> (&'static str, Vec<SqlValue>) {
        let oldest = now - self.limits.retention_ms;
        let cap = i64::try_from(self.limits.max_unread).unwrap_or(i64::MAX);
        let (to, from) = (request.to.as_str(), request.from.as_str());
        let params = vec![to.into(), from.into(), oldest.into(), cap.into()];
        let sql = match request.to {
            Recipient::Machine(_) => {
                "SELECT CAST($1 AS TEXT) AS name WHERE CAST($2 AS TEXT) IS NOT NULL \
                 AND CAST($3 AS BIGINT) IS NOT NULL AND CAST($4 AS BIGINT) IS NOT NULL"
            }
            Recipient::All => {
                "SELECT m.name AS name FROM hub_machines m \
                 WHERE CAST($1 AS TEXT) IS NOT NULL AND m.name <> $2 AND m.last_seen >= $3 \
                 AND (SELECT COUNT(*) FROM \
                 (SELECT 1 FROM hub_messages u WHERE u.machine = m.name LIMIT $4) n) < $4"
            }
        };
        (sql, params)
    }

    /// The message an earlier send with this key stored, if it is younger than 24 h.
    fn earlier_send(
        &self,
        request: &SendRequest,
        key: &IdempotencyKey,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        let row = self
            .query(
                "SELECT id, sender, recipient, body, created FROM hub_sends \
                 WHERE sender = $1 AND idem_key = $2 AND created >= $3",
                &[
                    request.from.as_str().into(),
                    key.as_str().into(),
                    (now - IDEMPOTENCY_MS).into(),
                ],
            )?
            .into_iter()
            .next();
        row.map(message_of).transpose()
    }

    fn unread(&self, machine: &str) -> Result<u64, HubError> {
        let cap = i64::try_from(self.limits.max_unread).unwrap_or(i64::MAX);
        let count = self
            .query(
                "SELECT COUNT(*) FROM (SELECT 1 FROM hub_messages WHERE machine = $1 LIMIT $2) n",
                &[machine.into(), cap.into()],
            )?
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .and_then(|v| v.as_int())
            .ok_or_else(|| corrupt("an unread count"))?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// Deletes and returns the messages of the answer `window` ([`answer_ids`]'s parameters).
    /// One `DELETE ... RETURNING`: a
    /// row is deleted by exactly one statement, so two readers never both return it. A reader
    /// whose chosen rows were all taken by another looks again.
    fn take(&self, window: &[SqlValue; 4]) -> Result<Vec<Message>, HubError> {
        for _ in 0..ACK_ATTEMPTS {
            let rows = self.query(
                &format!(
                    "DELETE FROM hub_messages WHERE machine = $1 AND id IN ({}) \
                     RETURNING {MESSAGE_COLUMNS}",
                    answer_ids()
                ),
                window,
            )?;
            if !rows.is_empty() {
                let mut messages = rows
                    .into_iter()
                    .map(message_of)
                    .collect::<Result<Vec<_>, _>>()?;
                messages.sort_by_key(|msg| msg.id);
                return Ok(messages);
            }
            let left = self.query(
                "SELECT 1 FROM hub_messages WHERE machine = $1 AND created >= $2 LIMIT 1",
                &window[..2],
            )?;
            if left.is_empty() {
                return Ok(Vec::new());
            }
        }
        Err(HubError::Busy)
    }

    /// Registers `machine` and records it as seen at `now` (one upsert: concurrent first
    /// registrations all land).
    fn touch(&self, machine: &MachineName, now: i64) -> Result<(), HubError> {
        self.execute(
            "INSERT INTO hub_machines (name, last_seen) VALUES ($1, $2) \
             ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen \
             WHERE hub_machines.last_seen <= excluded.last_seen - $3",
            &[machine.as_str().into(), now.into(), SEEN_EVERY_MS.into()],
        )
        .map(drop)
    }

    /// Deletes what has expired: unread messages and machines past the retention period,
    /// idempotency records past 24 h.
    fn purge(&self, now: i64) -> Result<(), HubError> {
        let oldest = now - self.limits.retention_ms;
        self.execute(
            "DELETE FROM hub_messages WHERE created < $1",
            &[oldest.into()],
        )?;
        self.execute(
            "DELETE FROM hub_machines WHERE last_seen < $1",
            &[oldest.into()],
        )?;
        self.execute(
            "DELETE FROM hub_sends WHERE created < $1",
            &[(now - IDEMPOTENCY_MS).into()],
        )?;
        Ok(())
    }

    /// Runs `op`; if the hub's tables do not exist yet, creates them and runs it once more.
    fn with_schema<T>(&self, op: impl Fn() -> Result<T, HubError>) -> Result<T, HubError> {
        match op() {
            Err(HubError::Store(e)) if e.is_missing_table() => {
                if self.db.dialect() == Dialect::Sqlite {
                    // Write-ahead logging: readers no longer block the writer, and a commit
                    // costs one sync instead of two. The setting stays with the file.
                    let _ = self.db.query("PRAGMA journal_mode=WAL", &[]);
                }
                for statement in SCHEMA {
                    // Another request may be creating the same table at the same moment; the
                    // retry below tells whether the schema is there.
                    let _ = self.db.execute(statement, &[]);
                }
                op()
            }
            other => other,
        }
    }

    /// Runs `op` in an IMMEDIATE transaction (SQLite only): committed if it succeeds, rolled back
    /// otherwise.
    fn transaction<T>(&self, op: impl FnOnce() -> Result<T, HubError>) -> Result<T, HubError> {
        self.execute("BEGIN IMMEDIATE", &[])?;
        match op() {
            Ok(value) => {
                if let Err(e) = self.execute("COMMIT", &[]) {
                    let _ = self.db.execute("ROLLBACK", &[]);
                    return Err(e);
                }
                Ok(value)
            }
            Err(e) => {
                // Dropping the connection would roll back too; this keeps it usable.
                let _ = self.db.execute("ROLLBACK", &[]);
                Err(e)
            }
        }
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, HubError> {
        let dialect = self.db.dialect();
        self.db
            .query(&dialect.statement(sql), params)
            .map_err(store_error)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, HubError> {
        let dialect = self.db.dialect();
        self.db
            .execute(&dialect.statement(sql), params)
            .map_err(store_error)
    }
}

fn store_error(e: SqlError) -> HubError {
    if e.is_busy() {
        HubError::Busy
    } else {
        HubError::Store(e)
    }
}

fn corrupt(what: &str) -> HubError {
    HubError::Store(SqlError(format!(
        "unexpected value in the database: {what}"
    )))
}

/// The ids of the messages an inbox answer holds (parameters: `$1` machine, `$2` oldest
/// creation time, `$3` most messages, `$4` [`Limits::answer_bytes`]): the oldest first, up to
/// and including the one whose JSON takes the answer past the byte budget. One statement
/// decides, so an acknowledging read deletes exactly what it answers.
fn answer_ids() -> String {
    let size = format!("(6 * LENGTH(body) + {MESSAGE_JSON_OVERHEAD})");
    format!(
        "SELECT id FROM (SELECT id, SUM{size} OVER (ORDER BY id) - {size} AS before \
         FROM hub_messages WHERE machine = $1 AND created >= $2 ORDER BY id LIMIT $3) w \
         WHERE w.before < CAST($4 AS BIGINT)"
    )
}

/// The answer to a send that repeats `key`: the message the first send stored, when this send
/// asks for the same recipient and body.
fn same_request(
    request: &SendRequest,
    key: &IdempotencyKey,
    sent: Message,
) -> Result<Message, HubError> {
    if sent.to == request.to.as_str() && sent.body == request.body {
        return Ok(sent);
    }
    Err(HubError::KeyReused(format!(
        "`Idempotency-Key` `{}` was already used by `{}` for message {} with another recipient or body; use a new key for a new message",
        key.as_str(),
        request.from,
        sent.id
    )))
}

/// A message from a row of [`MESSAGE_COLUMNS`].
fn message_of(row: Vec<SqlValue>) -> Result<Message, HubError> {
    let mut row = row.into_iter();
    let mut int = || row.next().and_then(|v| v.as_int());
    let id = int();
    let mut text = || row.next().and_then(SqlValue::into_text);
    let (from, to, body) = (text(), text(), text());
    let created = row.next().and_then(|v| v.as_int());
    match (id, from, to, body, created) {
        (Some(id), Some(from), Some(to), Some(body), Some(created)) => Ok(Message {
            id: u64::try_from(id).map_err(|_| corrupt("a negative message id"))?,
            from,
            to,
            body,
            timestamp: iso_millis(created),
        }),
        _ => Err(corrupt("a message row")),
    }
}
