//! The hub's storage, written once over SQL: registration, send, inbox reads, acknowledgement,
//! mailbox and its search, purge and set-up. What SQLite and PostgreSQL do differently
//! (statements, locking, full-text machinery) is behind [`Engine`], one implementation each in
//! `store/sqlite.rs` and `store/postgres.rs`; [`Hub::engine`] picks it by [`Dialect`], the one
//! place that does. Why each statement is safe is in the crate docs.

use std::time::Duration;

use crate::HubError;
use crate::model::{
    BROADCAST, IdempotencyKey, Importance, Inbox, InboxMessage, MachineEntry, MachineName, Message,
    Recipient, SendRequest, iso_millis,
};
use crate::sql::{Dialect, Sql, SqlError, SqlValue, StoreFailure};

mod engine;
mod postgres;
mod sqlite;

use engine::{Busy, Conn, Engine, Outgoing, Stored};

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
/// Machines one statement of [`Hub::unread_importance`] looks at, well under every
/// database's limit on parameters.
const MACHINES_PER_LOOK: usize = 100;
/// Default of the variable `hub_max_wait`: 25 s, under the 30 s after which edge hosts such as
/// Akamai Functions end a request.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(25);
/// Default of the variable `hub_max_machines`.
pub const DEFAULT_MAX_MACHINES: u64 = 10_000;
/// Default of the variable `hub_retention_days`.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;
/// Default of the variable `hub_max_read`: read messages a mailbox keeps.
pub const DEFAULT_MAX_READ: u64 = 10_000;
/// Mailbox reads return at most this many messages.
pub const MAX_MAILBOX_LIMIT: usize = 200;
/// The most words a mailbox search takes.
pub const MAX_SEARCH_WORDS: usize = 32;
/// The longest mailbox search, in bytes.
pub const MAX_SEARCH_BYTES: usize = 1_000;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// An acknowledging read that lost every message it chose to a concurrent reader looks again at
/// most this many times.
const ACK_ATTEMPTS: usize = 20;
/// Registering a recipient whose row a concurrent purge removed tries this many times.
const KNOW_ATTEMPTS: usize = 3;
/// An operation that finds the SQLite database busy is tried again, after a pause that doubles
/// from 1 ms to 50 ms, for as long as this. SQLite waits out a held write lock itself (Spin's
/// busy timeout is 5 s), but answers busy at once in some moments, such as while another
/// connection switches the file to write-ahead logging or checkpoints it on closing. Every
/// operation is safe to repeat: a send's try writes nothing unless it commits, and the other
/// writes (registering, acknowledging) are single statements that land whole or not at all.
const BUSY_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);
/// Expired rows are deleted by the first send at least this long after the last purge, not by
/// every send: a purge is four statements, under SQLite's write lock. Until then they are only
/// left out: reads, the unread cap and idempotency keys look at creation times, and a cap
/// that finds no room purges at once before it refuses.
const PURGE_EVERY_MS: i64 = 60 * 1000;

/// The schema, created on first use and whenever a send finds a counter row missing. Every
/// statement is idempotent, so a set-up that races another, or follows one that stopped
/// half-way, completes it. Messages are one row per recipient; `id` is the hub-wide message id
/// (the copies of a broadcast share it), allocated on SQLite from `hub_counter` under the write
/// lock and on PostgreSQL from `hub_message_ids` under the locks of the machines written
/// (`postgres::MESSAGE_IDS`), so ids are committed in increasing order, within each mailbox on
/// PostgreSQL (see the crate docs).
///
/// A machine's mailbox is its rows: one per message it received (`read_at` NULL while unread,
/// the inbox) and one per message it sent to others (written read). The columns after `created`
/// came with the mailbox; [`UPGRADES`] adds them to a database of an earlier release.
const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL, \
     sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     subject TEXT, importance BIGINT NOT NULL DEFAULT 1, thread BIGINT, reply_to BIGINT, \
     read_at BIGINT, PRIMARY KEY (machine, id))",
    "CREATE INDEX IF NOT EXISTS hub_messages_created ON hub_messages (created)",
    "CREATE TABLE IF NOT EXISTS hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL, \
     id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     subject TEXT, importance BIGINT NOT NULL DEFAULT 1, thread BIGINT, reply_to BIGINT, \
     PRIMARY KEY (sender, idem_key))",
    "CREATE INDEX IF NOT EXISTS hub_sends_created ON hub_sends (created)",
    // The counter rows. Created with the tables, they start at 0; if one is ever missing
    // later, it restarts after the largest id (and time) still stored, which is the best the
    // hub can do: ids acknowledged and deleted before the row was lost cannot be known.
    "INSERT INTO hub_counter (name, value) SELECT 'ids', COALESCE(MAX(id), 0) FROM \
     (SELECT MAX(id) AS id FROM hub_messages UNION ALL SELECT MAX(id) FROM hub_sends) m \
     WHERE true ON CONFLICT (name) DO NOTHING",
    // The hub's clock: the latest timestamp given, so the next is never earlier.
    "INSERT INTO hub_counter (name, value) SELECT 'clock', COALESCE(MAX(created), 0) FROM \
     (SELECT MAX(created) AS created FROM hub_messages UNION ALL \
      SELECT MAX(created) FROM hub_sends) m \
     WHERE true ON CONFLICT (name) DO NOTHING",
    // When expired rows were last deleted ([`PURGE_EVERY_MS`]); 0: never.
    "INSERT INTO hub_counter (name, value) VALUES ('purged', 0) ON CONFLICT (name) DO NOTHING",
    // SQLite's full-text index holds every message up to the id `indexed`; messages after it
    // were created at `indexed_at` or later (`SqliteEngine::catch_up_search`). Created with the other rows,
    // they say that everything stored is indexed: so it is in a new database, in one an earlier
    // release indexed at each send, and in one older still once set-up has filled the index.
    // Unused on PostgreSQL, whose index is a generated column.
    // One statement, so both are read in one snapshot: a send between two would leave a
    // message created before `indexed_at` after `indexed`.
    "INSERT INTO hub_counter (name, value) SELECT CASE name WHEN 'ids' THEN 'indexed' \
     ELSE 'indexed_at' END, value FROM hub_counter WHERE name IN ('ids', 'clock') \
     ON CONFLICT (name) DO NOTHING",
];

/// The counter rows [`SCHEMA`] writes, which set-up checks.
const COUNTERS: &[&str] = &["ids", "clock", "purged", "indexed", "indexed_at"];

/// A table's columns added since the first release, and what fills and indexes them once they
/// exist ([`Engine::upgrade`]).
struct Upgrade {
    table: &'static str,
    columns: &'static [(&'static str, &'static str)],
    after: &'static [&'static str],
}

/// Every message of an earlier release starts its own thread; the indexes of the inbox (unread
/// rows), the read rows (trimmed oldest first) and threads.
const UPGRADES: &[Upgrade] = &[
    Upgrade {
        table: "hub_messages",
        columns: &[
            ("subject", "TEXT"),
            ("importance", "BIGINT NOT NULL DEFAULT 1"),
            ("thread", "BIGINT"),
            ("reply_to", "BIGINT"),
            ("read_at", "BIGINT"),
        ],
        after: &[
            "UPDATE hub_messages SET thread = id WHERE thread IS NULL",
            "CREATE INDEX IF NOT EXISTS hub_messages_unread ON hub_messages (machine, id) \
             WHERE read_at IS NULL",
            "CREATE INDEX IF NOT EXISTS hub_messages_read ON hub_messages (machine, id) \
             WHERE read_at IS NOT NULL",
            "CREATE INDEX IF NOT EXISTS hub_messages_thread ON hub_messages (machine, thread)",
        ],
    },
    Upgrade {
        table: "hub_sends",
        columns: &[
            ("subject", "TEXT"),
            ("importance", "BIGINT NOT NULL DEFAULT 1"),
            ("thread", "BIGINT"),
            ("reply_to", "BIGINT"),
        ],
        after: &["UPDATE hub_sends SET thread = id WHERE thread IS NULL"],
    },
];

/// Before the first count: a machine whose messages outlived its row (a release before every
/// inbox belonged to a known machine, or a purge that raced a send before the counts kept the
/// row) is known again, never seen, as [`Hub::know`] makes it.
const MACHINES_OF_MESSAGES: &str = "INSERT INTO hub_machines (name, last_seen) \
     SELECT DISTINCT machine, 0 FROM hub_messages \
     WHERE NOT EXISTS (SELECT 1 FROM hub_machines WHERE name = hub_messages.machine) \
     ON CONFLICT (name) DO NOTHING";

/// The counts of each machine's messages, `hub_machines.read_kept` and `unread_kept`, kept by
/// triggers on `hub_messages` in the statement that inserts, marks or deletes a row. Trimming a
/// mailbox to [`Limits::max_read`] deletes what `read_kept` says is over, without walking the
/// newest `max_read` read rows first (at the default 10,000, 0.8 ms of every send of a busy
/// sender, inside SQLite's write lock); a send finds room in an inbox by reading `unread_kept`,
/// and walks its unread rows only when the count reaches [`Limits::max_unread`], since expired
/// messages are counted until the purge deletes them (the walk took 0.6 ms for an inbox of
/// 10,000). The columns, the triggers and the first counts are made in one atomic step
/// ([`Engine::count_messages`]), so a database whose `hub_machines` has `unread_kept` counts
/// right, and one without it is set up first. That step replaces the triggers of the release
/// that counted read messages only.
///
/// The counts stay exact because a machine's row outlives its messages: the purge forgets a
/// machine only while both counts are 0, which PostgreSQL checks again on the row a concurrent
/// send's trigger has just counted a message on, where it would not see the message itself.
/// A row a purge has deleted is made again by the trigger of the next message.
///
/// This statement makes the first counts.
const COUNT_MESSAGES: &str = "UPDATE hub_machines SET \
     read_kept = (SELECT COUNT(*) FROM hub_messages \
       WHERE hub_messages.machine = hub_machines.name AND hub_messages.read_at IS NOT NULL), \
     unread_kept = (SELECT COUNT(*) FROM hub_messages \
       WHERE hub_messages.machine = hub_machines.name AND hub_messages.read_at IS NULL)";

/// SQL for whether the inbox `name` has room for one more unread message, given `cap`
/// ([`Limits::max_unread`]): its count says so, or else its unexpired unread rows (`u`, which
/// `unexpired` tests), counted up to the cap. `CASE` runs that walk only when the count
/// reaches the cap.
fn has_room_where(name: &str, cap: &str, unexpired: &str) -> String {
    format!(
        "CASE WHEN (SELECT unread_kept FROM hub_machines WHERE hub_machines.name = {name}) < {cap} \
         THEN true ELSE (SELECT COUNT(*) FROM (SELECT 1 FROM hub_messages u \
         WHERE u.machine = {name} AND u.read_at IS NULL AND {unexpired} LIMIT {cap}) n) < {cap} END"
    )
}

/// Which machines a purge forgets: unseen since `oldest` and without messages. A recipient
/// that was never seen is kept while its inbox holds messages. The counts say so too, and
/// PostgreSQL checks them again on a row a concurrent send has just counted a message on (see
/// [`COUNT_MESSAGES`]).
fn forgotten_machines(oldest: &str) -> String {
    format!(
        "last_seen < {oldest} AND read_kept = 0 AND unread_kept = 0 AND NOT EXISTS \
         (SELECT 1 FROM hub_messages WHERE hub_messages.machine = hub_machines.name)"
    )
}

/// What [`Hub::before_send`] read.
struct BeforeSend {
    /// When the last purge ran (the `purged` counter).
    purged: i64,
    /// The sender's `last_seen`; `None` when the hub does not know it.
    sender_seen: Option<i64>,
    /// Whether the hub knows the recipient (for a broadcast, a machine named `*`: never).
    recipient_known: bool,
}

/// Whether the hub may register one more machine; `cap` is the parameter holding
/// [`Limits::max_machines`].
fn room_for_machines(cap: &str) -> String {
    format!(
        "(SELECT COUNT(*) FROM (SELECT 1 FROM hub_machines LIMIT CAST({cap} AS BIGINT)) n) < {cap}"
    )
}

/// The columns of a message row, in the order [`message_of`] reads them.
const MESSAGE_COLUMNS: &str =
    "id, sender, recipient, body, created, subject, importance, thread, reply_to";

/// What a mailbox read asks for (`GET /api/messages/<machine>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MailboxQuery {
    /// The most messages to return (clamped to 1..=[`MAX_MAILBOX_LIMIT`]).
    pub limit: usize,
    /// Only messages with a smaller id: the page before.
    pub before: Option<u64>,
    /// Only this thread.
    pub thread: Option<u64>,
    /// Only messages whose subject or body holds every one of these words ([`search_words`]).
    pub words: Option<Vec<String>>,
}

/// The words of a search: runs of letters and digits, at most [`MAX_SEARCH_WORDS`] of them in
/// at most [`MAX_SEARCH_BYTES`]. Everything else separates words, so no character of the text
/// reaches a full-text engine as syntax.
pub fn search_words(text: &str) -> Result<Vec<String>, HubError> {
    if text.len() > MAX_SEARCH_BYTES {
        return Err(HubError::Invalid(format!(
            "`q` is {} bytes long; a search takes at most {MAX_SEARCH_BYTES}",
            text.len()
        )));
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    if words.is_empty() {
        return Err(HubError::Invalid(
            "`q` holds no word to search for (letters or digits)".to_owned(),
        ));
    }
    if words.len() > MAX_SEARCH_WORDS {
        return Err(HubError::Invalid(format!(
            "`q` holds {} words; a search takes at most {MAX_SEARCH_WORDS}",
            words.len()
        )));
    }
    Ok(words)
}

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

/// The limits that keep the store bounded (Spin variables `hub_max_unread`,
/// `hub_max_machines`, `hub_retention_days`).
///
/// What bounds the store as a whole: at most `max_machines` inboxes (a little more while new
/// names race on PostgreSQL: see [`Limits::max_machines`]), each holding at most `max_unread`
/// messages of at most 64 KiB, none older than `retention_ms`; idempotency records for 24 h.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A send to an inbox holding this many unread messages is refused (507); a broadcast skips
    /// it. Exact on both engines: the count is taken under the lock that orders sends.
    pub max_unread: u64,
    /// Machines the hub knows: senders, readers and every recipient a send names. A send or
    /// registering read that would add one more is refused (507). On SQLite exact; on
    /// PostgreSQL the count and the insert are one statement but not under a lock, so new
    /// names that race may pass it by as many as race.
    pub max_machines: u64,
    /// Messages older than this, read or not, are deleted, and machines unseen for longer drop
    /// out of broadcasts and of `/machines`, in milliseconds.
    pub retention_ms: i64,
    /// Read messages (received and acknowledged, or sent) a machine's mailbox keeps; past it the
    /// oldest read ones go first. Unread messages are never dropped to make room.
    pub max_read: u64,
    /// The longest a long-poll (`?wait=`) waits and an event stream lasts (variable
    /// `hub_max_wait`, in seconds): under the 30 s after which edge hosts end a request.
    pub max_wait: Duration,
    /// An inbox answer stops at the message that takes its JSON past this many bytes (that one
    /// included, so an answer holds at least one message): fewer messages, never a failure.
    /// The size counted is the most a message's JSON can take, 6 bytes per character of its
    /// body (a control character escaped as `\u00XX`) plus `MESSAGE_JSON_OVERHEAD` (384 bytes).
    pub answer_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_unread: DEFAULT_MAX_UNREAD,
            max_machines: DEFAULT_MAX_MACHINES,
            retention_ms: DEFAULT_RETENTION_DAYS as i64 * DAY_MS,
            max_read: DEFAULT_MAX_READ,
            max_wait: DEFAULT_MAX_WAIT,
            answer_bytes: DEFAULT_ANSWER_BYTES,
        }
    }
}

impl Limits {
    /// The variables [`Limits::from_variables`] reads.
    pub const VARIABLES: [&str; 5] = [
        "hub_max_unread",
        "hub_max_machines",
        "hub_retention_days",
        "hub_max_read",
        "hub_max_wait",
    ];

    /// Reads the variables through `variable` (which answers `""` for an unset one); an empty
    /// value means the default. Anything but a positive integer (at most 1,000,000,000 unread
    /// or machines, 36,500 days, 3,600 seconds of wait) is an error, never a silent default.
    pub fn from_variables(variable: impl Fn(&str) -> String) -> Result<Self, HubError> {
        let number = |name: &str, max: u64, default: u64| {
            let value = variable(name);
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
        let days = number("hub_retention_days", 36_500, DEFAULT_RETENTION_DAYS)?;
        Ok(Self {
            max_unread: number("hub_max_unread", 1_000_000_000, DEFAULT_MAX_UNREAD)?,
            max_machines: number("hub_max_machines", 1_000_000_000, DEFAULT_MAX_MACHINES)?,
            retention_ms: days as i64 * DAY_MS,
            max_read: number("hub_max_read", 1_000_000_000, DEFAULT_MAX_READ)?,
            max_wait: Duration::from_secs(number(
                "hub_max_wait",
                3_600,
                DEFAULT_MAX_WAIT.as_secs(),
            )?),
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

    /// This hub on a borrowed database and clock.
    pub fn borrowed(&self) -> Hub<&S, &C> {
        Hub::with_clock(&self.db, &self.clock, self.limits)
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
        self.with_schema(|| {
            if let Some(sent) = self.send_at_once(request, key, now)? {
                return Ok(sent);
            }
            // Read before the write lock: on SQLite this first statement also opens the
            // connection and reads the schema, which other sends need not wait for.
            let before = self.before_send(request)?;
            self.atomically(|| self.send_steps(request, key, &before, now))
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
        self.inbox_at_least(machine, Importance::Low, limit, ack, register)
    }

    /// [`Hub::inbox`] keeping to unread messages of `importance` or above.
    pub fn inbox_at_least(
        &self,
        machine: &MachineName,
        importance: Importance,
        limit: usize,
        ack: bool,
        register: bool,
    ) -> Result<Inbox, HubError> {
        let now = self.clock.now_ms();
        let m = machine.as_str();
        self.with_schema(|| {
            if register {
                match self.touch(machine, now) {
                    // Being seen is bookkeeping: a store that takes no writes still serves reads.
                    Err(HubError::StoreFailed(StoreFailure::Unwritable, _)) => {}
                    other => other?,
                }
            }
            let oldest = now - self.limits.retention_ms;
            let window = self.window(machine, oldest, limit, 0, importance);
            let messages = if ack {
                let taken = self.take(&window, now)?;
                if !taken.is_empty() {
                    self.trim_read_after_commit(machine);
                }
                taken
            } else {
                self.peek(&window)?
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

    /// The limits this hub keeps.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether `machine`'s inbox holds an unexpired message with an id above `after`: one
    /// indexed look, what a waiting request asks at each look.
    pub fn has_unread(&self, machine: &MachineName, after: u64) -> Result<bool, HubError> {
        self.has_unread_at_least(machine, after, Importance::Low)
    }

    /// [`Hub::has_unread`] counting only messages of `importance` or above.
    pub fn has_unread_at_least(
        &self,
        machine: &MachineName,
        after: u64,
        importance: Importance,
    ) -> Result<bool, HubError> {
        let oldest = self.clock.now_ms() - self.limits.retention_ms;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        self.with_schema(|| {
            Ok(!self
                .query(
                    "SELECT 1 FROM hub_messages WHERE machine = $1 AND read_at IS NULL \
                     AND id > $2 AND created >= $3 AND importance >= $4 LIMIT 1",
                    &[
                        machine.as_str().into(),
                        after.into(),
                        oldest.into(),
                        importance.level().into(),
                    ],
                )?
                .is_empty())
        })
    }

    /// The highest importance among each machine's unread messages, in the order given
    /// (`None`: it has none): one statement answers many waiting long-polls at once.
    pub fn unread_importance(
        &self,
        machines: &[&MachineName],
    ) -> Result<Vec<Option<Importance>>, HubError> {
        let oldest = self.clock.now_ms() - self.limits.retention_ms;
        let mut names: Vec<&str> = machines.iter().map(|m| m.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut levels = std::collections::HashMap::new();
        for chunk in names.chunks(MACHINES_PER_LOOK) {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT machine, MAX(importance) FROM hub_messages WHERE read_at IS NULL \
                 AND created >= $1 AND machine IN ({}) GROUP BY machine",
                marks.join(", ")
            );
            let mut params = vec![SqlValue::from(oldest)];
            params.extend(chunk.iter().map(|name| SqlValue::from(*name)));
            for row in self.with_schema(|| self.query(&sql, &params))? {
                if let [SqlValue::Text(machine), SqlValue::Int(level)] = row.as_slice() {
                    levels.insert(machine.clone(), *level);
                }
            }
        }
        Ok(machines
            .iter()
            .map(|m| {
                levels
                    .get(m.as_str())
                    .and_then(|l| Importance::from_level(*l))
            })
            .collect())
    }

    /// Up to `limit` unread messages of `machine`'s inbox with an id above `after`, oldest
    /// first, bounded in bytes like an inbox answer; nothing is acknowledged.
    pub fn messages_after(
        &self,
        machine: &MachineName,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Message>, HubError> {
        let oldest = self.clock.now_ms() - self.limits.retention_ms;
        let window = self.window(machine, oldest, limit, after, Importance::Low);
        self.with_schema(|| self.peek(&window))
    }

    /// The messages of `window`, oldest first, left unread.
    fn peek(&self, window: &[SqlValue; 6]) -> Result<Vec<Message>, HubError> {
        self.query(
            &format!(
                "SELECT {MESSAGE_COLUMNS} FROM hub_messages \
                 WHERE machine = $1 AND id IN ({}) ORDER BY id",
                answer_ids()
            ),
            window,
        )?
        .into_iter()
        .map(message_of)
        .collect()
    }

    /// Records `machine` as seen (and so a recipient of broadcasts), as a registering read does.
    pub fn seen(&self, machine: &MachineName) -> Result<(), HubError> {
        let now = self.clock.now_ms();
        self.with_schema(|| self.touch(machine, now))
    }

    /// The parameters of [`answer_ids`].
    fn window(
        &self,
        machine: &MachineName,
        oldest: i64,
        limit: usize,
        after: u64,
        importance: Importance,
    ) -> [SqlValue; 6] {
        let limit = limit.clamp(1, MAX_LIMIT) as i64;
        let answer_bytes = i64::try_from(self.limits.answer_bytes).unwrap_or(i64::MAX);
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        [
            machine.as_str().into(),
            oldest.into(),
            limit.into(),
            answer_bytes.into(),
            after.into(),
            importance.level().into(),
        ]
    }

    /// Marks every message of `machine`'s inbox with an id up to and including `through` read
    /// (it leaves the inbox and stays in the mailbox) and registers the machine; returns how
    /// many were marked. A repeat returns 0.
    pub fn acknowledge(&self, machine: &MachineName, through: u64) -> Result<u64, HubError> {
        let through = i64::try_from(through).unwrap_or(i64::MAX);
        self.mark_read(machine, "id <= $4", vec![through.into()])
    }

    /// Marks the messages of `machine`'s inbox with these ids read, and no other: what a reader
    /// was given, when it read with an importance filter that left older messages unread.
    /// At most [`MAX_LIMIT`] ids (what one read returns); ids not in the inbox are passed
    /// over. Registers the machine; returns how many were marked.
    pub fn acknowledge_ids(&self, machine: &MachineName, ids: &[u64]) -> Result<u64, HubError> {
        if ids.len() > MAX_LIMIT {
            return Err(HubError::Invalid(format!(
                "at most {MAX_LIMIT} ids are acknowledged at once, not {}",
                ids.len()
            )));
        }
        if ids.is_empty() {
            // Still a registering call, as acknowledging nothing by `through` is.
            return self.seen(machine).map(|()| 0);
        }
        let placeholders = (0..ids.len())
            .map(|i| format!("CAST(${} AS BIGINT)", i + 4))
            .collect::<Vec<_>>()
            .join(", ");
        let ids = ids
            .iter()
            .map(|&id| i64::try_from(id).unwrap_or(i64::MAX).into())
            .collect();
        self.mark_read(machine, &format!("id IN ({placeholders})"), ids)
    }

    /// Marks the unread, unexpired messages of `machine`'s inbox that `which` (over `$4` on)
    /// picks read, registering the machine.
    fn mark_read(
        &self,
        machine: &MachineName,
        which: &str,
        which_params: Vec<SqlValue>,
    ) -> Result<u64, HubError> {
        let now = self.clock.now_ms();
        let oldest = now - self.limits.retention_ms;
        let mut params: Vec<SqlValue> = vec![machine.as_str().into(), now.into(), oldest.into()];
        params.extend(which_params);
        self.with_schema(|| {
            self.touch(machine, now)?;
            // Expired messages are no longer in the inbox: the purge deletes them, and marking
            // them would lock rows it may be deleting (see `postgres::purge_messages`).
            let marked = self.execute(
                &format!(
                    "UPDATE hub_messages SET read_at = $2 \
                     WHERE machine = $1 AND {which} AND read_at IS NULL AND created >= $3"
                ),
                &params,
            )?;
            if marked > 0 {
                self.trim_read_after_commit(machine);
            }
            Ok(marked)
        })
    }

    /// `machine`'s mailbox: the messages it received (read or not) and sent, newest first,
    /// bounded in bytes like an inbox answer; acknowledges nothing.
    pub fn mailbox(&self, machine: &MachineName, query: &MailboxQuery) -> Result<Inbox, HubError> {
        let oldest = self.clock.now_ms() - self.limits.retention_ms;
        let limit = query.limit.clamp(1, MAX_MAILBOX_LIMIT) as i64;
        let before = query
            .before
            .map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX));
        let mut params: Vec<SqlValue> = vec![
            machine.as_str().into(),
            oldest.into(),
            before.into(),
            limit.into(),
            i64::try_from(self.limits.answer_bytes)
                .unwrap_or(i64::MAX)
                .into(),
        ];
        let columns = "m.id, m.sender, m.recipient, m.body, m.created, m.subject, m.importance, \
                       m.thread, m.reply_to, m.read_at";
        let mut filter = String::new();
        if let Some(thread) = query.thread {
            params.push(i64::try_from(thread).unwrap_or(i64::MAX).into());
            filter = format!(" AND m.thread = ${}", params.len());
        }
        let rows = match &query.words {
            None => format!(
                "SELECT {columns} FROM hub_messages m WHERE m.machine = $1 AND m.created >= $2 \
                 AND m.id < $3{filter} ORDER BY m.id DESC LIMIT CAST($4 AS BIGINT)"
            ),
            Some(words) => self
                .engine()
                .search_rows(words, columns, &filter, &mut params),
        };
        let size = format!("(6 * LENGTH(body) + {MESSAGE_JSON_OVERHEAD})");
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS}, read_at FROM (SELECT r.*, \
             SUM{size} OVER (ORDER BY id DESC) - {size} AS before_it FROM ({rows}) r) w \
             WHERE w.before_it < CAST($5 AS BIGINT) ORDER BY id DESC"
        );
        self.with_schema(|| {
            if query.words.is_some() {
                self.engine().catch_up_search(&self.conn())?;
            }
            let messages = self
                .query(&sql, &params)?
                .into_iter()
                .map(|mut row| {
                    // Sent copies are written read: nothing for their sender to read.
                    let read = row.pop().is_some_and(|read_at| read_at != SqlValue::Null);
                    Ok(InboxMessage {
                        message: message_of(row)?,
                        read,
                    })
                })
                .collect::<Result<_, HubError>>()?;
            Ok(Inbox {
                machine: machine.to_string(),
                messages,
            })
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

    /// A send in one statement, the common case: no purge is due, the sender and the recipient
    /// are known, the key (if any) is new, the replied message is there and the recipient has
    /// room, so nothing but the message itself is written. A send's steps
    /// ([`Hub::send_steps`]) are each a statement, and each statement a call into the host,
    /// which Spin runs on its blocking pool and back; this checks all of that and stores the
    /// message in one ([`Engine::send_at_once`]), which writes nothing when a check fails.
    /// `None` then: the caller takes the steps one by one. Both forms give the same guarantees
    /// (the crate docs).
    fn send_at_once(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        let send = self.outgoing(request, key, now);
        let (stored, thread) = self.engine().send_at_once(&self.conn(), &send)?;
        match stored {
            Stored::Message { id, created, .. } => {
                stored_message(request, id, created, thread).map(Some)
            }
            Stored::InboxFull => Err(self.inbox_full(request)),
            // The key was used before: answer that send, or, when it had expired (and is
            // deleted now), take the steps.
            Stored::KeyTaken => match key {
                Some(key) => match self.earlier_send(request, key, now)? {
                    Some(sent) => same_request(request, key, sent).map(Some),
                    None => Ok(None),
                },
                None => Err(corrupt("a send without a key lost its key")),
            },
            Stored::NotAtOnce => Ok(None),
        }
    }

    fn send_steps(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        before: &BeforeSend,
        now: i64,
    ) -> Result<Message, HubError> {
        // Purge first: it forgets recipients without messages, which this send may register,
        // so after a purge the read above no longer says who is known.
        let purged = self.purge_when_due(before.purged, now)?;
        if purged
            || before
                .sender_seen
                .is_none_or(|seen| seen <= now - SEEN_EVERY_MS)
        {
            self.touch(&request.from, now)?;
        }
        if let Recipient::Machine(to) = &request.to
            && (purged || !before.recipient_known)
        {
            self.know(to, now)?;
        }
        if let Some(key) = key
            && let Some(sent) = self.earlier_send(request, key, now)?
        {
            return same_request(request, key, sent);
        }
        let thread = match request.reply_to {
            Some(id) => Some(self.thread_of(&request.from, id, now)?),
            None => None,
        };
        let send = self.outgoing(request, key, now);
        let stored = self.engine().insert(&self.conn(), &send, thread)?;
        match (stored, key) {
            (Stored::Message { id, created, trim }, _) => {
                // Inside the send's transaction: a failure stores nothing.
                if trim && request.to.as_str() != request.from.as_str() {
                    self.trim_read(&request.from)?;
                }
                stored_message(request, id, created, thread)
            }
            (Stored::InboxFull, _) => Err(self.inbox_full(request)),
            // The same key won a race with this send: answer what it stored.
            (Stored::KeyTaken, Some(key)) => match self.earlier_send(request, key, now)? {
                Some(sent) => same_request(request, key, sent),
                None => Err(HubError::Busy),
            },
            (Stored::KeyTaken, None) => Err(corrupt("a send without a key lost its key")),
            (Stored::NotAtOnce, _) => Err(corrupt("a send's steps were gated")),
        }
    }

    fn inbox_full(&self, request: &SendRequest) -> HubError {
        HubError::InboxFull(format!(
            "the inbox of `{}` already holds {} unread messages (hub_max_unread); \
             it must be read before it takes more",
            request.to.as_str(),
            self.limits.max_unread
        ))
    }

    /// What a send decides on before it writes, in one read: the last purge, and whether the
    /// sender and the recipient need registering. A sender seen within [`SEEN_EVERY_MS`] and a
    /// known recipient take no statement of their own. It runs before the send's write (on
    /// SQLite, before its transaction), so the store may move on meanwhile, and each decision
    /// holds anyway: the purge is claimed by a compare-and-swap on `purged`, so a purge run by
    /// another send in between is not run twice; a sender seen within [`SEEN_EVERY_MS`] is
    /// never the one a purge forgets; and a concurrent purge that forgets the recipient after
    /// this read does it at the same moment as between [`Hub::know`]'s look and the insert, as
    /// harmlessly (the purge only forgets a machine unseen for the retention period whose
    /// inbox is empty, and the message is delivered by name).
    fn before_send(&self, request: &SendRequest) -> Result<BeforeSend, HubError> {
        let rows = self.query(
            "SELECT (SELECT value FROM hub_counter WHERE name = 'purged'), \
             (SELECT last_seen FROM hub_machines WHERE name = CAST($1 AS TEXT)), \
             (SELECT unread_kept FROM hub_machines WHERE name = CAST($2 AS TEXT)), \
             (SELECT value FROM hub_counter WHERE name = 'indexed'), \
             (SELECT read_kept FROM hub_machines WHERE name = CAST($1 AS TEXT))",
            &[request.from.as_str().into(), request.to.as_str().into()],
        )?;
        let row = rows.into_iter().next().unwrap_or_default();
        let value = |i: usize| row.get(i).and_then(SqlValue::as_int);
        // A database set up by an earlier release lacks `indexed`: set-up adds it before the
        // first send that leaves its text to the next search. One without the counts fails
        // this read, which sets them up too.
        let (Some(purged), Some(_)) = (value(0), value(3)) else {
            return Err(unprepared());
        };
        Ok(BeforeSend {
            purged,
            sender_seen: value(1),
            recipient_known: value(2).is_some(),
        })
    }

    /// The integer a counter `UPDATE ... RETURNING value` answers; `None` when its row is
    /// missing.
    fn counter(&self, sql: &str, params: &[SqlValue]) -> Result<Option<i64>, HubError> {
        Ok(self
            .query(sql, params)?
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .and_then(|v| v.as_int()))
    }

    /// The message an earlier send with this key stored, if it is younger than 24 h. An older
    /// record that no purge has deleted yet is deleted here, so that the key is free again.
    fn earlier_send(
        &self,
        request: &SendRequest,
        key: &IdempotencyKey,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        let sender_and_key = [request.from.as_str().into(), key.as_str().into()];
        let Some(row) = self
            .query(
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM hub_sends WHERE sender = $1 AND idem_key = $2"
                ),
                &sender_and_key,
            )?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let oldest = now - IDEMPOTENCY_MS;
        // `created` is the fifth of MESSAGE_COLUMNS.
        if row
            .get(4)
            .and_then(SqlValue::as_int)
            .is_some_and(|created| created < oldest)
        {
            let mut params = sender_and_key.to_vec();
            params.push(oldest.into());
            self.execute(
                "DELETE FROM hub_sends WHERE sender = $1 AND idem_key = $2 AND created < $3",
                &params,
            )?;
            return Ok(None);
        }
        message_of(row).map(Some)
    }

    /// Deletes and returns the messages of the answer `window` ([`answer_ids`]'s parameters).
    /// One `DELETE ... RETURNING`: a
    /// row is deleted by exactly one statement, so two readers never both return it. A reader
    /// whose chosen rows were all taken by another looks again.
    fn take(&self, window: &[SqlValue; 6], now: i64) -> Result<Vec<Message>, HubError> {
        let mut params = window.to_vec();
        params.push(now.into());
        for _ in 0..ACK_ATTEMPTS {
            let rows = match self.query(
                &format!(
                    "UPDATE hub_messages SET read_at = CAST($7 AS BIGINT) \
                     WHERE machine = $1 AND read_at IS NULL AND id IN ({}) \
                     RETURNING {MESSAGE_COLUMNS}",
                    answer_ids()
                ),
                &params,
            ) {
                Ok(rows) => rows,
                // PostgreSQL cancels one of two readers that locked overlapping rows in
                // opposite orders; the cancelled statement took nothing, so it looks again.
                Err(HubError::Busy) if self.engine().busy() == Busy::Cancelled => continue,
                Err(e) => return Err(e),
            };
            if !rows.is_empty() {
                let mut messages = rows
                    .into_iter()
                    .map(message_of)
                    .collect::<Result<Vec<_>, _>>()?;
                messages.sort_by_key(|msg| msg.id);
                return Ok(messages);
            }
            let left = self.query(
                "SELECT 1 FROM hub_messages WHERE machine = $1 AND read_at IS NULL \
                 AND created >= $2 AND importance >= $3 LIMIT 1",
                &[window[0].clone(), window[1].clone(), window[5].clone()],
            )?;
            if left.is_empty() {
                return Ok(Vec::new());
            }
        }
        Err(HubError::Busy)
    }

    /// The thread of message `id` in `machine`'s mailbox (a message it sent or received), which
    /// a reply joins. Not there: the same 404 whether the id exists elsewhere or not at all.
    fn thread_of(&self, machine: &MachineName, id: u64, now: i64) -> Result<i64, HubError> {
        let id = i64::try_from(id).unwrap_or(i64::MAX);
        let oldest = now - self.limits.retention_ms;
        let thread = self.counter(
            &replied_thread_sql("$1", "$2", "$3"),
            &[machine.as_str().into(), id.into(), oldest.into()],
        )?;
        thread.ok_or_else(|| {
            HubError::NotFound(format!(
                "`reply_to`: `{machine}` has no message {id}: a reply answers a message its \
                 sender sent or received, while the hub keeps it"
            ))
        })
    }

    /// Deletes `machine`'s oldest read messages past [`Limits::max_read`], as many as its count
    /// (`read_kept`, [`COUNT_MESSAGES`]) says are over: one row looked up when under, and
    /// the rows deleted when over. A trim that deleted fewer (a concurrent one on PostgreSQL
    /// took some of the same rows) leaves the rest to the next, which the count tells.
    fn trim_read(&self, machine: &MachineName) -> Result<(), HubError> {
        let cap = i64::try_from(self.limits.max_read).unwrap_or(i64::MAX);
        self.execute(
            &trim_read_sql("$1", "CAST($2 AS BIGINT)"),
            &[machine.as_str().into(), cap.into()],
        )?;
        Ok(())
    }

    /// [`Hub::trim_read`] after a change that has committed, whose answer must not be lost to
    /// a failed trim: retried, the change would be made twice (an acknowledging read would
    /// take the next messages, and the first ones would reach no one). The count makes the
    /// next trim delete what this one left.
    fn trim_read_after_commit(&self, machine: &MachineName) {
        let _ = self.trim_read(machine);
    }

    /// Registers `machine` and records it as seen at `now` (one upsert: concurrent first
    /// registrations all land). A new name is refused when the hub knows
    /// [`Limits::max_machines`] machines already.
    fn touch(&self, machine: &MachineName, now: i64) -> Result<(), HubError> {
        match self.touch_once(machine, now) {
            // Machines that expired since the last purge hold places: free them, then decide.
            Err(HubError::MachinesFull(_)) => {
                self.purge(now)?;
                self.touch_once(machine, now)
            }
            other => other,
        }
    }

    fn touch_once(&self, machine: &MachineName, now: i64) -> Result<(), HubError> {
        let changed = self.execute(
            &format!(
                "INSERT INTO hub_machines (name, last_seen) \
                 SELECT CAST($1 AS TEXT), CAST($2 AS BIGINT) \
                 WHERE EXISTS (SELECT 1 FROM hub_machines WHERE name = $1) OR {} \
                 ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen \
                 WHERE hub_machines.last_seen <= excluded.last_seen - $3",
                room_for_machines("$4")
            ),
            &[
                machine.as_str().into(),
                now.into(),
                SEEN_EVERY_MS.into(),
                self.machine_cap().into(),
            ],
        )?;
        // Nothing written: seen within the last second, or a new name the hub has no room for.
        if changed == 0 {
            self.known(machine)?;
        }
        Ok(())
    }

    /// Registers the recipient of a send as a machine the hub knows, never seen (`last_seen`
    /// 0: no broadcasts, not listed), unless it is known already; refused like a new name in
    /// [`Hub::touch`]. So every inbox belongs to a known machine, and the cap bounds inboxes.
    fn know(&self, machine: &MachineName, now: i64) -> Result<(), HubError> {
        match self.know_once(machine) {
            Err(HubError::MachinesFull(_)) => {
                self.purge(now)?;
                self.know_once(machine)
            }
            other => other,
        }
    }

    fn know_once(&self, machine: &MachineName) -> Result<(), HubError> {
        let name = [machine.as_str().into()];
        // On PostgreSQL the look, the insert and the check are separate statements: another
        // send's purge may forget a never-seen name between an insert that met it and the
        // check. A full hub fails every try; a purged name is inserted on the next.
        for _ in 0..KNOW_ATTEMPTS {
            if !self
                .query("SELECT 1 FROM hub_machines WHERE name = $1", &name)?
                .is_empty()
            {
                return Ok(());
            }
            let added = self.execute(
                &format!(
                    "INSERT INTO hub_machines (name, last_seen) SELECT CAST($1 AS TEXT), 0 \
                     WHERE {} ON CONFLICT (name) DO NOTHING",
                    room_for_machines("$2")
                ),
                &[machine.as_str().into(), self.machine_cap().into()],
            )?;
            if added > 0 {
                return Ok(());
            }
        }
        self.known(machine)
    }

    /// Ok when `machine` is registered; [`HubError::MachinesFull`] otherwise.
    fn known(&self, machine: &MachineName) -> Result<(), HubError> {
        let rows = self.query(
            "SELECT 1 FROM hub_machines WHERE name = $1",
            &[machine.as_str().into()],
        )?;
        if rows.is_empty() {
            return Err(HubError::MachinesFull(format!(
                "the hub already knows {} machines (hub_max_machines), so it takes no new name \
                 such as `{machine}`; a machine without messages that is unseen for \
                 hub_retention_days is forgotten",
                self.limits.max_machines
            )));
        }
        Ok(())
    }

    fn machine_cap(&self) -> i64 {
        i64::try_from(self.limits.max_machines).unwrap_or(i64::MAX)
    }

    /// [`Hub::purge`], when the `last` one is at least [`PURGE_EVERY_MS`] old (or in the
    /// future: a clock that was set back). Of concurrent sends that find it due, the one whose
    /// claim lands purges. Whether this one did.
    fn purge_when_due(&self, last: i64, now: i64) -> Result<bool, HubError> {
        if last > now - PURGE_EVERY_MS && last <= now {
            return Ok(false);
        }
        let claimed = self.counter(
            "UPDATE hub_counter SET value = $1 WHERE name = 'purged' AND value = $2 \
             RETURNING value",
            &[now.into(), last.into()],
        )?;
        if claimed.is_some() {
            self.purge(now)?;
        }
        Ok(claimed.is_some())
    }

    /// Deletes what has expired: unread messages and machines past the retention period,
    /// idempotency records past 24 h.
    fn purge(&self, now: i64) -> Result<(), HubError> {
        let oldest = now - self.limits.retention_ms;
        self.engine().purge_expired(&self.conn(), oldest)?;
        self.execute(
            "DELETE FROM hub_sends WHERE created < $1",
            &[(now - IDEMPOTENCY_MS).into()],
        )?;
        Ok(())
    }

    /// Runs `op` (patiently); if the hub's tables or counter rows are missing, sets them up and
    /// runs it once more.
    fn with_schema<T>(&self, op: impl Fn() -> Result<T, HubError>) -> Result<T, HubError> {
        match self.patiently(&op) {
            Err(e) if unprepared_error(&e) => {}
            other => return other,
        }
        // Concurrent first requests all set up; one that fails (busy, or beaten to an object)
        // may still find the schema complete, made by another. If not, its failure says why.
        let set_up = self.set_up();
        match (self.patiently(&op), set_up) {
            (Err(e), Err(why)) if unprepared_error(&e) => Err(why),
            (result, _) => result,
        }
    }

    /// Runs `op`, again while it finds the database busy where waiting helps ([`Busy`]).
    fn patiently<T>(&self, op: &impl Fn() -> Result<T, HubError>) -> Result<T, HubError> {
        match self.engine().busy() {
            Busy::LockHeld => while_busy(Pacing::Growing, op),
            Busy::Cancelled => op(),
        }
    }

    /// Creates what is missing of the schema and checks the result: a failed step is an error,
    /// never ignored, and the counter rows must be there at the end.
    fn set_up(&self) -> Result<(), HubError> {
        let mut pass = 1;
        // Busy too: SQLite answers a lock upgrade that would deadlock with another set-up at once.
        while let Err(e) = self.patiently(&|| self.set_up_pass()) {
            if pass == self.set_up_passes() {
                return Err(e);
            }
            pass += 1;
        }
        let names: Vec<String> = COUNTERS.iter().map(|name| format!("'{name}'")).collect();
        let names = names.join(", ");
        let counters = self.counter(
            &format!("SELECT COUNT(*) FROM hub_counter WHERE name IN ({names})"),
            &[],
        )?;
        if counters != i64::try_from(COUNTERS.len()).ok() {
            return Err(HubError::Unprepared(
                "the hub's counter rows are missing after set-up".to_owned(),
            ));
        }
        Ok(())
    }

    /// One pass of set-up, in this order: the database's settings, the tables, their upgrades
    /// and counts, then the engine's own objects.
    fn set_up_pass(&self) -> Result<(), HubError> {
        let (engine, conn) = (self.engine(), self.conn());
        engine.prepare(&conn)?;
        for statement in SCHEMA {
            self.execute(statement, &[])?;
        }
        // Once the columns exist nothing sets up again, so what fills them comes in the same
        // atomic unit. The rows a database of an earlier release holds were all unread (that
        // release deleted what was read), which `read_at` NULL says.
        for upgrade in UPGRADES {
            engine.upgrade(&conn, upgrade)?;
        }
        engine.count_messages(&conn)?;
        engine.make_objects(&conn)
    }

    /// How many set-up passes run before giving up. On PostgreSQL, `CREATE ... IF NOT EXISTS`
    /// racing the same statement of another request fails (a duplicate key in `pg_type`); the
    /// next pass finds that object made and may meet the race on the next one, so there is one
    /// pass per object and a few more.
    fn set_up_passes(&self) -> usize {
        SCHEMA.len() + UPGRADES.len() + self.engine().objects() + 4
    }

    /// The engine of this hub's database: the one place that looks at its [`Dialect`].
    fn engine(&self) -> &'static dyn Engine {
        match self.db.dialect() {
            Dialect::Sqlite => &sqlite::SqliteEngine,
            Dialect::Postgres => &postgres::PostgresEngine,
        }
    }

    fn conn(&self) -> Conn<'_> {
        Conn {
            sql: &self.db,
            dialect: self.db.dialect(),
        }
    }

    /// A send as the engine takes it.
    fn outgoing<'a>(
        &'a self,
        request: &'a SendRequest,
        key: Option<&'a IdempotencyKey>,
        now: i64,
    ) -> Outgoing<'a> {
        Outgoing {
            request,
            key,
            now,
            limits: &self.limits,
        }
    }

    /// Runs `op` as one atomic unit ([`Engine::atomically`]).
    fn atomically<T>(&self, op: impl FnOnce() -> Result<T, HubError>) -> Result<T, HubError> {
        let (mut op, mut value) = (Some(op), None);
        self.engine().atomically(&self.conn(), &mut || {
            if let Some(op) = op.take() {
                value = Some(op()?);
            }
            Ok(())
        })?;
        value.ok_or_else(|| corrupt("an atomic unit that did not run"))
    }

    fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, HubError> {
        self.conn().query(sql, params)
    }

    fn execute(&self, sql: &str, params: &[SqlValue]) -> Result<u64, HubError> {
        self.conn().execute(sql, params)
    }
}

/// How [`while_busy`] waits before it tries again.
#[derive(Clone, Copy)]
enum Pacing {
    /// 1 ms, doubling up to 50: for a whole operation, whose statements may have waited in
    /// SQLite's own busy handler already.
    Growing,
    /// Half a millisecond to one and a half each time, whatever was waited: for the write lock,
    /// which then goes to any waiter alike, and waiters that met do not stay in step.
    Even,
}

/// Runs `op` again while it finds SQLite busy, for up to [`BUSY_PATIENCE`], pausing as
/// `pacing` says.
fn while_busy<T>(
    pacing: Pacing,
    mut op: impl FnMut() -> Result<T, HubError>,
) -> Result<T, HubError> {
    let started = std::time::Instant::now();
    let mut growing = std::time::Duration::from_millis(1);
    loop {
        match op() {
            Err(HubError::Busy) if started.elapsed() < BUSY_PATIENCE => {
                let pause = match pacing {
                    Pacing::Growing => {
                        let pause = growing;
                        growing = (growing * 2).min(std::time::Duration::from_millis(50));
                        pause
                    }
                    Pacing::Even => {
                        let jitter = u64::from(started.elapsed().subsec_nanos() % 1000);
                        std::time::Duration::from_micros(500 + jitter)
                    }
                };
                std::thread::sleep(pause);
            }
            result => return result,
        }
    }
}

fn store_error(e: SqlError) -> HubError {
    if e.is_busy() {
        HubError::Busy
    } else if let Some(failure) = e.failure() {
        HubError::StoreFailed(failure, failure.message(&e.0))
    } else {
        HubError::Store(e)
    }
}

/// Whether `e` says the schema is missing a piece (set-up completes it).
fn unprepared_error(e: &HubError) -> bool {
    match e {
        HubError::Store(e) => e.is_missing_object(),
        HubError::Unprepared(_) => true,
        _ => false,
    }
}

fn unprepared() -> HubError {
    HubError::Unprepared("a counter row of the hub is missing".to_owned())
}

fn corrupt(what: &str) -> HubError {
    HubError::Store(SqlError(format!(
        "unexpected value in the database: {what}"
    )))
}

/// The ids of the messages an inbox answer holds (parameters: `$1` machine, `$2` oldest
/// creation time, `$3` most messages, `$4` [`Limits::answer_bytes`], `$5` the id after which
/// to start, `$6` the lowest importance level): the unread ones, oldest first, up to
/// and including the one whose JSON takes the answer past the byte budget. One statement
/// decides, so an acknowledging read deletes exactly what it answers.
fn answer_ids() -> String {
    let size = format!("(6 * LENGTH(body) + {MESSAGE_JSON_OVERHEAD})");
    format!(
        "SELECT id FROM (SELECT id, SUM{size} OVER (ORDER BY id) - {size} AS before \
         FROM hub_messages WHERE machine = $1 AND read_at IS NULL AND created >= $2 \
         AND id > CAST($5 AS BIGINT) AND importance >= CAST($6 AS BIGINT) \
         ORDER BY id LIMIT CAST($3 AS BIGINT)) w \
         WHERE w.before < CAST($4 AS BIGINT)"
    )
}

/// The message a send stored with this id, timestamp and thread (`None`: its own id).
fn stored_message(
    request: &SendRequest,
    id: i64,
    created: i64,
    thread: Option<i64>,
) -> Result<Message, HubError> {
    let id = u64::try_from(id).map_err(|_| corrupt("a negative message id"))?;
    Ok(Message {
        id,
        from: request.from.to_string(),
        to: request.to.as_str().to_owned(),
        body: request.body.clone(),
        timestamp: iso_millis(created),
        subject: request.subject.clone(),
        importance: request.importance,
        thread: thread
            .map_or(Ok(id), u64::try_from)
            .map_err(|_| corrupt("a thread"))?,
        reply_to: request.reply_to,
    })
}

/// The thread of message `id` in `machine`'s mailbox, if created at `oldest` or later (SQL of
/// each): what a reply joins.
fn replied_thread_sql(machine: &str, id: &str, oldest: &str) -> String {
    format!(
        "SELECT COALESCE(thread, id) FROM hub_messages \
         WHERE machine = {machine} AND id = {id} AND created >= {oldest}"
    )
}

/// [`Hub::trim_read`]'s `DELETE` of `machine`'s oldest read messages past `cap` (SQL of each).
fn trim_read_sql(machine: &str, cap: &str) -> String {
    trim_read_sql_counting(machine, cap, "0")
}

/// [`trim_read_sql`], counting `adding` more read messages than `read_kept` says.
fn trim_read_sql_counting(machine: &str, cap: &str, adding: &str) -> String {
    // COALESCE: PostgreSQL reads `LIMIT NULL` as no limit at all.
    format!(
        "DELETE FROM hub_messages WHERE machine = {machine} AND read_at IS NOT NULL AND id IN \
         (SELECT id FROM hub_messages WHERE machine = {machine} AND read_at IS NOT NULL \
          ORDER BY id LIMIT COALESCE((SELECT CASE WHEN read_kept + {adding} > {cap} \
          THEN read_kept + {adding} - {cap} ELSE 0 END FROM hub_machines \
          WHERE name = {machine}), 0))"
    )
}

/// A send's columns `sender, recipient, body, subject, importance, thread, reply_to`.
fn message_fields(send: &Outgoing<'_>, thread: i64) -> Vec<SqlValue> {
    let request = send.request;
    vec![
        request.from.as_str().into(),
        request.to.as_str().into(),
        request.body.as_str().into(),
        request.subject.as_deref().into(),
        request.importance.level().into(),
        thread.into(),
        send.reply_to(),
    ]
}

/// The `SELECT` of the machines a send may reach (column `name`), for a broadcast or a direct
/// send, with the parameters `$1`..`$4` ([`Outgoing::target_params`]); each engine keeps those
/// with room in their inbox (expired messages take no room, purged or not). PostgreSQL must be
/// able to type every parameter, so both forms name all four.
fn send_candidates(broadcast: bool) -> &'static str {
    if broadcast {
        "SELECT m.name AS name FROM hub_machines m \
         WHERE CAST($1 AS TEXT) IS NOT NULL AND m.name <> $2 AND m.last_seen >= $3"
    } else {
        "SELECT CAST($1 AS TEXT) AS name WHERE CAST($2 AS TEXT) IS NOT NULL \
         AND CAST($3 AS BIGINT) IS NOT NULL"
    }
}

/// The answer to a send that repeats `key`: the message the first send stored, when this send
/// asks for the same recipient and body.
fn same_request(
    request: &SendRequest,
    key: &IdempotencyKey,
    sent: Message,
) -> Result<Message, HubError> {
    if sent.to == request.to.as_str()
        && sent.body == request.body
        && sent.subject == request.subject
        && sent.importance == request.importance
        && sent.reply_to == request.reply_to
    {
        return Ok(sent);
    }
    Err(HubError::KeyReused(format!(
        "`Idempotency-Key` `{}` was already used by `{}` for message {} with another recipient, body, subject, importance or reply_to; use a new key for a new message",
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
    let subject = row.next().and_then(SqlValue::into_text);
    let importance = row.next().and_then(|v| v.as_int());
    let thread = row.next().and_then(|v| v.as_int());
    let reply_to = row.next().and_then(|v| v.as_int());
    let id_of = |n: i64| u64::try_from(n).map_err(|_| corrupt("a negative message id"));
    match (id, from, to, body, created) {
        (Some(id), Some(from), Some(to), Some(body), Some(created)) => Ok(Message {
            id: id_of(id)?,
            from,
            to,
            body,
            timestamp: iso_millis(created),
            subject,
            importance: importance
                .map_or(Some(Importance::Normal), Importance::from_level)
                .ok_or_else(|| corrupt("an importance level"))?,
            // A row written by an earlier release during an upgrade may lack its thread.
            thread: id_of(thread.unwrap_or(id))?,
            reply_to: reply_to.map(id_of).transpose()?,
        }),
        _ => Err(corrupt("a message row")),
    }
}
