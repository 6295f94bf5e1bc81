//! SQLite's side of the hub's store (Spin's `spin:sqlite`, libSQL): writers are serialized by
//! one write lock, which a send takes for all its steps (`BEGIN IMMEDIATE`); a send that needs
//! nothing but its message written is one `INSERT` into the view `hub_send`, whose `INSTEAD OF`
//! trigger allocates the id and the timestamp, records the sender as seen, and stores the
//! copies and the key. A statement that writes takes the write lock before it reads anything
//! (SQLite opens its write transaction first), so the id, the checks and the writes are one
//! atomic unit, serialized with every other writer, as a `BEGIN IMMEDIATE` transaction is.
//! Ids follow creation times across the whole hub. The full-text index is FTS5, brought up to
//! date by the next search rather than by each send.

use super::*;

/// The hub's store on SQLite.
pub(super) struct SqliteEngine;

/// SQLite's counts of each machine's messages ([`COUNT_MESSAGES`]): triggers.
const COUNT_MESSAGES_BY_TRIGGERS: &[&str] = &[
    "ALTER TABLE hub_machines ADD COLUMN unread_kept BIGINT NOT NULL DEFAULT 0",
    "DROP TRIGGER IF EXISTS hub_read_added",
    "DROP TRIGGER IF EXISTS hub_read_marked",
    "DROP TRIGGER IF EXISTS hub_read_removed",
    "CREATE TRIGGER hub_message_added AFTER INSERT ON hub_messages BEGIN \
     INSERT INTO hub_machines (name, last_seen, read_kept, unread_kept) \
     VALUES (NEW.machine, 0, NEW.read_at IS NOT NULL, NEW.read_at IS NULL) \
     ON CONFLICT (name) DO UPDATE SET read_kept = read_kept + excluded.read_kept, \
     unread_kept = unread_kept + excluded.unread_kept; END",
    "CREATE TRIGGER hub_message_marked AFTER UPDATE OF read_at ON hub_messages \
     WHEN OLD.read_at IS NULL AND NEW.read_at IS NOT NULL BEGIN \
     UPDATE hub_machines SET read_kept = read_kept + 1, unread_kept = unread_kept - 1 \
     WHERE name = NEW.machine; END",
    "CREATE TRIGGER hub_message_removed AFTER DELETE ON hub_messages BEGIN \
     UPDATE hub_machines SET read_kept = read_kept - (OLD.read_at IS NOT NULL), \
     unread_kept = unread_kept - (OLD.read_at IS NULL) WHERE name = OLD.machine; END",
    MACHINES_OF_MESSAGES,
    COUNT_MESSAGES,
];

/// SQLite's full-text index of subjects and bodies: one row per message (its id as rowid), not
/// per copy. FTS5 is compiled into the SQLite of Spin v4.0.2 (rusqlite's bundled build).
const SEARCH_INDEX: &str = "CREATE VIRTUAL TABLE hub_search USING fts5(subject, body)";

/// [`has_room_where`] with `oldest` the oldest creation time not expired. Ids follow creation
/// times across the whole hub, so the walk finds the unexpired rows by id alone
/// ([`first_unexpired`]).
fn has_room(name: &str, oldest: &str, cap: &str) -> String {
    has_room_where(name, cap, &format!("u.id >= {}", first_unexpired(oldest)))
}

/// SQL for the first id of a message created at `oldest` or later (`oldest`: the SQL of that
/// time, a statement's `$3` or the function's parameter), or the largest id when there is
/// none. Ids follow creation times, so the messages not yet expired are those from it on,
/// which an inbox's index finds without reading a row.
fn first_unexpired(oldest: &str) -> String {
    format!(
        "COALESCE((SELECT MIN(id) FROM hub_messages WHERE created = \
         (SELECT MIN(created) FROM hub_messages WHERE created >= {oldest})), \
         9223372036854775807)"
    )
}

/// The first column of the first row, as lowercase text.
fn first_text(rows: &[Vec<SqlValue>]) -> Option<String> {
    match rows.first()?.first()? {
        SqlValue::Text(text) => Some(text.to_ascii_lowercase()),
        _ => None,
    }
}

/// The view a send is inserted into on SQLite, and its trigger; created by set-up. Every
/// value the trigger needs is a column of the row, so that no setting is frozen into the
/// stored trigger. The trigger trims the sender's read messages to their cap last, in the
/// same statement, as a send's steps trim inside their transaction: a failure stores nothing.
fn send_schema() -> [String; 2] {
    let copy = "NEW.id, NEW.created, NEW.sender, NEW.recipient, NEW.body, NEW.subject, \
                NEW.importance, NEW.thread, NEW.reply_to";
    [
        "CREATE VIEW IF NOT EXISTS hub_send AS SELECT 0 AS id, 0 AS created, 0 AS now, \
         0 AS seen_before, 0 AS oldest, 0 AS cap, 0 AS max_read, '' AS sender, \
         '' AS recipient, '' AS body, NULL AS subject, 0 AS importance, 0 AS thread, \
         NULL AS reply_to, NULL AS idem_key WHERE false"
            .to_owned(),
        format!(
            "CREATE TRIGGER IF NOT EXISTS hub_send_stores INSTEAD OF INSERT ON hub_send BEGIN \
             UPDATE hub_counter SET value = CASE name WHEN 'ids' THEN NEW.id ELSE NEW.created \
             END WHERE name IN ('ids', 'clock'); \
             UPDATE hub_machines SET last_seen = NEW.now \
             WHERE name = NEW.sender AND last_seen <= NEW.seen_before; \
             INSERT INTO hub_messages (machine, id, created, sender, recipient, body, subject, \
             importance, thread, reply_to, read_at) \
             SELECT NEW.recipient, {copy}, NULL WHERE NEW.recipient <> '{BROADCAST}' \
             UNION ALL SELECT m.name, {copy}, NULL FROM hub_machines m \
             WHERE NEW.recipient = '{BROADCAST}' AND m.name <> NEW.sender \
             AND m.last_seen >= NEW.oldest AND {room} \
             UNION ALL SELECT NEW.sender, {copy}, NEW.created WHERE NEW.sender <> NEW.recipient; \
             INSERT INTO hub_sends (id, created, sender, recipient, body, subject, importance, \
             thread, reply_to, idem_key) SELECT {copy}, NEW.idem_key \
             WHERE NEW.idem_key IS NOT NULL; \
             {trim} AND NEW.sender <> NEW.recipient; \
             END",
            room = has_room("m.name", "NEW.oldest", "NEW.cap"),
            trim = trim_read_sql("NEW.sender", "NEW.max_read"),
        ),
    ]
}

/// The insert into `hub_send` ([`send_schema`]) that stores a send when every check
/// holds, and nothing otherwise. Parameters: `$1` now, `$2` the oldest creation time kept,
/// `$3` [`Limits::max_unread`], `$4` sender, `$5` recipient, `$6` body, `$7` subject, `$8`
/// importance, `$9` reply_to, `$10` the key, `$11` [`Limits::max_read`], `$12`
/// [`PURGE_EVERY_MS`], `$13` [`SEEN_EVERY_MS`]. Answers the id, timestamp and thread stored.
/// A sender at its cap of read messages is no check: the trigger trims.
fn send_sql(to: &Recipient) -> String {
    let recipient = match to {
        Recipient::Machine(_) => format!(
            "EXISTS (SELECT 1 FROM hub_machines WHERE name = $5) AND {}",
            has_room("$5", "$2", "CAST($3 AS BIGINT)")
        ),
        Recipient::All => "$5 IS NOT NULL".to_owned(),
    };
    let replied = replied_thread_sql("$4", "CAST($9 AS BIGINT)", "$2");
    format!(
        "INSERT INTO hub_send (id, created, now, seen_before, oldest, cap, max_read, sender, \
         recipient, body, subject, importance, thread, reply_to, idem_key) \
         SELECT i.value + 1, MAX(c.value, $1), $1, $1 - $13, $2, $3, $11, $4, $5, $6, $7, $8, \
         CASE WHEN $9 IS NULL THEN i.value + 1 ELSE ({replied}) END, $9, $10 \
         FROM hub_counter i, hub_counter c WHERE i.name = 'ids' AND c.name = 'clock' \
         AND EXISTS (SELECT 1 FROM hub_counter WHERE name = 'indexed') \
         AND EXISTS (SELECT 1 FROM hub_counter WHERE name = 'purged' \
           AND value > $1 - $12 AND value <= $1) \
         AND EXISTS (SELECT 1 FROM hub_machines WHERE name = $4) \
         AND ($9 IS NULL OR EXISTS ({replied})) \
         AND ($10 IS NULL OR NOT EXISTS \
           (SELECT 1 FROM hub_sends WHERE sender = $4 AND idem_key = $10)) \
         AND {recipient} \
         RETURNING id, created, thread"
    )
}

impl Engine for SqliteEngine {
    fn busy(&self) -> Busy {
        Busy::LockHeld
    }

    /// One IMMEDIATE transaction makes the steps one: writers are serialized.
    fn atomically(
        &self,
        conn: &Conn<'_>,
        op: &mut dyn FnMut() -> Result<(), HubError>,
    ) -> Result<(), HubError> {
        transaction(conn, op)
    }

    /// An insert into `hub_send` ([`send_schema`]), which stores nothing unless every check
    /// holds. A sender at its cap of read messages is no check: the trigger trims. A send that
    /// fails a check goes on to its steps, which tell why (a full inbox, a key used before).
    fn send_at_once(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
    ) -> Result<(Stored, Option<i64>), HubError> {
        let request = send.request;
        let params = [
            send.now.into(),
            send.oldest().into(),
            send.max_unread().into(),
            request.from.as_str().into(),
            request.to.as_str().into(),
            request.body.as_str().into(),
            request.subject.as_deref().into(),
            request.importance.level().into(),
            send.reply_to(),
            send.key.map(IdempotencyKey::as_str).into(),
            send.max_read().into(),
            PURGE_EVERY_MS.into(),
            SEEN_EVERY_MS.into(),
        ];
        conn.sql.answer_busy_at_once().map_err(store_error)?;
        let sql = send_sql(&request.to);
        let rows = while_busy(Pacing::Even, || conn.query(&sql, &params))?;
        let Some(row) = rows.into_iter().next() else {
            return Ok((Stored::NotAtOnce, None));
        };
        let value = |i: usize| row.get(i).and_then(SqlValue::as_int);
        match (value(0), value(1), value(2)) {
            (Some(id), Some(created), Some(thread)) => Ok((
                Stored::Message {
                    id,
                    created,
                    trim: false,
                },
                Some(thread),
            )),
            _ => Err(corrupt("a send's stored row")),
        }
    }

    /// The caller holds the write lock ([`SqliteEngine::atomically`]), and rolls everything
    /// back unless this returns [`Stored::Message`].
    fn insert(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
        thread: Option<i64>,
    ) -> Result<Stored, HubError> {
        // Both counters in one statement: the next id, and the clock moved up to `now`; and,
        // read under the same lock, how many read messages the sender keeps.
        let counters = conn.query(
            "UPDATE hub_counter SET value = CASE name WHEN 'ids' THEN value + 1 \
             ELSE MAX(value, $1) END WHERE name IN ('ids', 'clock') \
             RETURNING name, value, (SELECT read_kept FROM hub_machines WHERE name = $2)",
            &[send.now.into(), send.request.from.as_str().into()],
        )?;
        let counter = |wanted: &str| {
            counters.iter().find_map(|row| match row.as_slice() {
                [SqlValue::Text(name), value, _] if name == wanted => value.as_int(),
                _ => None,
            })
        };
        // The sender's read copy of this message is its one more: the trim, a statement
        // compiled and run inside the lock, has nothing to delete while that stays within
        // the cap. No row yet: none kept.
        let read_kept = counters
            .first()
            .and_then(|row| row.get(2))
            .and_then(SqlValue::as_int)
            .unwrap_or(0);
        let trim = read_kept >= send.max_read();
        let (Some(id), Some(created)) = (counter("ids"), counter("clock")) else {
            return Err(unprepared());
        };
        let targets = targets(matches!(send.request.to, Recipient::All));
        let mut params = send.target_params();
        let fields = message_fields(send, thread.unwrap_or(id));
        params.extend([id.into(), created.into()]);
        params.extend(fields.iter().cloned());
        // The recipients' copies, unread, and in the same statement the sender's, read ($7 is
        // the sender, $8 the recipient): a message to itself is in its inbox already.
        let own = u64::from(send.request.to.as_str() != send.request.from.as_str());
        let stored = conn.execute(
            &format!(
                "INSERT INTO hub_messages (machine, id, created, sender, recipient, body, \
                 subject, importance, thread, reply_to, read_at) \
                 SELECT t.name, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL FROM ({targets}) t \
                 UNION ALL SELECT $7, $5, $6, $7, $8, $9, $10, $11, $12, $13, $6 WHERE $7 <> $8"
            ),
            &params,
        )?;
        if stored == own && matches!(send.request.to, Recipient::Machine(_)) {
            return Ok(Stored::InboxFull);
        }
        // The full-text index is brought up to date by the next search ([`SqliteEngine::catch_up_search`]).
        let mut row = vec![SqlValue::from(id), created.into()];
        row.extend(fields);
        if let Some(key) = send.key {
            row.push(key.as_str().into());
            conn.execute(
                "INSERT INTO hub_sends (id, created, sender, recipient, body, subject, \
                 importance, thread, reply_to, idem_key) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &row,
            )?;
        }
        Ok(Stored::Message { id, created, trim })
    }

    fn search_rows(
        &self,
        words: &[String],
        columns: &str,
        filter: &str,
        params: &mut Vec<SqlValue>,
    ) -> String {
        // Each word quoted: FTS5's operators (`OR`, `NEAR`, `*`, `-`) stay words.
        let expression = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" ");
        params.push(expression.as_str().into());
        // CROSS JOIN keeps the index's newest matches as the outer loop, so the search stops
        // at `limit`; left to itself SQLite walks the whole mailbox and runs the match once
        // per message (20,000 messages: 70 ms, not 0.05).
        format!(
            "SELECT {columns} FROM hub_search s \
             CROSS JOIN hub_messages m ON m.machine = $1 AND m.id = s.rowid \
             WHERE hub_search MATCH ${} AND s.rowid < $3 AND m.created >= $2{filter} \
             ORDER BY s.rowid DESC LIMIT CAST($4 AS BIGINT)",
            params.len()
        )
    }

    /// Adds to SQLite's full-text index the messages sent since it was last brought up to
    /// date: sends leave that to the next search. An FTS5 insert was an eighth of a send's
    /// time, apparently a cost of each new connection, which every request's is (by trigger,
    /// or into a contentless table, it cost as much), and mailbox searches are far rarer than
    /// sends. The look is one read; the catch-up is one transaction, so the index and
    /// `indexed` move together, and a search waits for it, so it finds every message committed
    /// before it began.
    fn catch_up_search(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        let behind = || -> Result<Option<[i64; 4]>, HubError> {
            let rows = conn.query(
                "SELECT (SELECT value FROM hub_counter WHERE name = 'indexed'), \
                 (SELECT value FROM hub_counter WHERE name = 'indexed_at'), \
                 (SELECT value FROM hub_counter WHERE name = 'ids'), \
                 (SELECT value FROM hub_counter WHERE name = 'clock')",
                &[],
            )?;
            let row = rows.into_iter().next().unwrap_or_default();
            let value = |i: usize| row.get(i).and_then(SqlValue::as_int).ok_or_else(unprepared);
            let counters = [value(0)?, value(1)?, value(2)?, value(3)?];
            Ok((counters[0] < counters[2]).then_some(counters))
        };
        if behind()?.is_none() {
            return Ok(());
        }
        transaction(conn, || {
            let Some([indexed, indexed_at, ids, clock]) = behind()? else {
                return Ok(());
            };
            // Ids follow creation times: every message after `indexed` was created at
            // `indexed_at` or later, so the index on `created` finds them. Copies share the text.
            // `OR REPLACE`: the set-up that made the index filled it from every message there,
            // which may include the first sends after `indexed` was set.
            conn.execute(
                "INSERT OR REPLACE INTO hub_search (rowid, subject, body) \
                 SELECT id, MIN(subject), MIN(body) FROM hub_messages \
                 WHERE created >= $1 AND id > $2 AND id <= $3 GROUP BY id",
                &[indexed_at.into(), indexed.into(), ids.into()],
            )?;
            conn.execute(
                "UPDATE hub_counter SET value = CASE name WHEN 'indexed' THEN $1 ELSE $2 END \
                 WHERE name IN ('indexed', 'indexed_at')",
                &[ids.into(), clock.into()],
            )?;
            Ok(())
        })
    }

    fn purge_expired(&self, conn: &Conn<'_>, oldest: i64) -> Result<(), HubError> {
        let expired = conn.execute(
            "DELETE FROM hub_messages WHERE created < $1",
            &[oldest.into()],
        )?;
        // Ids follow creation times, so every indexed message below the oldest one kept is gone.
        if expired > 0 {
            conn.execute(
                "DELETE FROM hub_search WHERE rowid < COALESCE((SELECT MIN(id) FROM hub_messages \
                 WHERE created = (SELECT MIN(created) FROM hub_messages)), \
                 (SELECT value + 1 FROM hub_counter WHERE name = 'ids'))",
                &[],
            )?;
        }
        conn.execute(
            &format!(
                "DELETE FROM hub_machines WHERE {}",
                forgotten_machines("$1")
            ),
            &[oldest.into()],
        )?;
        Ok(())
    }

    /// Write-ahead logging: readers no longer block the writer, and a commit costs one sync
    /// instead of two. The setting stays with the file. A pass goes no further until it is
    /// set, so the counter rows exist only in a database that logs ahead (or cannot: one in
    /// memory keeps its journal, slower but as safe).
    fn prepare(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        let mode = conn.query("PRAGMA journal_mode", &[])?;
        if !matches!(first_text(&mode).as_deref(), Some("wal" | "memory")) {
            let mode = conn.query("PRAGMA journal_mode=WAL", &[])?;
            let mode = first_text(&mode).unwrap_or_default();
            if !matches!(mode.as_str(), "wal" | "memory") {
                return Err(HubError::Unprepared(format!(
                    "SQLite did not turn on write-ahead logging (journal mode `{mode}`)"
                )));
            }
        }
        Ok(())
    }

    /// One transaction: SQLite has no `ADD COLUMN IF NOT EXISTS`, so each column is looked
    /// for first.
    fn upgrade(&self, conn: &Conn<'_>, upgrade: &Upgrade) -> Result<(), HubError> {
        let Upgrade {
            table,
            columns,
            after,
        } = upgrade;
        transaction(conn, || {
            for (column, definition) in *columns {
                if !has_column(conn, table, column)? {
                    conn.execute(
                        &format!("ALTER TABLE {table} ADD COLUMN {column} {definition}"),
                        &[],
                    )?;
                }
            }
            for statement in *after {
                conn.execute(statement, &[])?;
            }
            Ok(())
        })
    }

    fn count_messages(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        transaction(conn, || {
            if has_column(conn, "hub_machines", "unread_kept")? {
                return Ok(());
            }
            if !has_column(conn, "hub_machines", "read_kept")? {
                conn.execute(
                    "ALTER TABLE hub_machines ADD COLUMN read_kept BIGINT NOT NULL DEFAULT 0",
                    &[],
                )?;
            }
            for statement in COUNT_MESSAGES_BY_TRIGGERS {
                conn.execute(statement, &[])?;
            }
            Ok(())
        })
    }

    /// The view a send is inserted into and its trigger, and the full-text index, in one
    /// transaction, so each appears whole: a send meeting the view without its trigger would
    /// fail, a search meeting the index unfilled would miss messages, and a set-up stopped
    /// half-way would leave an index the next takes for filled.
    fn make_objects(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        transaction(conn, || {
            for statement in send_schema() {
                conn.execute(&statement, &[])?;
            }
            if conn
                .query("SELECT 1 FROM sqlite_master WHERE name = 'hub_search'", &[])?
                .is_empty()
            {
                conn.execute(SEARCH_INDEX, &[])?;
                // Messages kept from an earlier release become searchable too.
                conn.execute(
                    "INSERT INTO hub_search (rowid, subject, body) \
                     SELECT id, MIN(subject), MIN(body) FROM hub_messages GROUP BY id",
                    &[],
                )?;
            }
            Ok(())
        })
    }

    fn objects(&self) -> usize {
        1
    }
}

/// Whether `table` has `column`.
fn has_column(conn: &Conn<'_>, table: &str, column: &str) -> Result<bool, HubError> {
    let rows = conn.query(
        &format!("SELECT 1 FROM pragma_table_info('{table}') WHERE name = $1"),
        &[column.into()],
    )?;
    Ok(!rows.is_empty())
}

/// Runs `op` in an IMMEDIATE transaction: committed if it succeeds, rolled back otherwise.
fn transaction<T>(
    conn: &Conn<'_>,
    op: impl FnOnce() -> Result<T, HubError>,
) -> Result<T, HubError> {
    lock_for_writing(conn)?;
    match op() {
        Ok(value) => {
            if let Err(e) = conn.execute("COMMIT", &[]) {
                let _ = conn.sql.execute("ROLLBACK", &[]);
                return Err(e);
            }
            Ok(value)
        }
        Err(e) => {
            // Dropping the connection would roll back too; this keeps it usable.
            let _ = conn.sql.execute("ROLLBACK", &[]);
            Err(e)
        }
    }
}

/// `BEGIN IMMEDIATE`, waiting for SQLite's write lock at an even pace. SQLite's own busy
/// handler polls at growing intervals (1, 2, 5 … 100 ms), so a writer that has waited long
/// polls rarely, and newcomers take the lock before it: with eight concurrent senders, one
/// send in a hundred waited a third of a second. Here every waiter polls every millisecond or
/// so, whatever it has waited, so the lock goes to any of them alike.
fn lock_for_writing(conn: &Conn<'_>) -> Result<(), HubError> {
    conn.sql.answer_busy_at_once().map_err(store_error)?;
    while_busy(Pacing::Even, || conn.execute("BEGIN IMMEDIATE", &[])).map(drop)
}

/// The `SELECT` of a send's recipients with room in their inbox ([`send_candidates`]).
fn targets(broadcast: bool) -> String {
    format!(
        "SELECT x.name AS name FROM ({}) x WHERE {}",
        send_candidates(broadcast),
        has_room("x.name", "$3", "CAST($4 AS BIGINT)")
    )
}
