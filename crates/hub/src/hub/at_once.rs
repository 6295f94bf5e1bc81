//! A send in one statement: the common case, where nothing but the message itself is written.
//!
//! A send's steps ([`Hub::send_steps`]) are each a statement, and each statement a call into
//! the host, which Spin runs on its blocking pool and back. Most sends need only the last
//! step, the insert: no purge is due, the sender and the recipient are known, the key (if any)
//! is new, the replied message is there and the recipient has room. [`Hub::send_at_once`]
//! checks all of that and stores the message in one statement, which writes nothing when a
//! check fails; the caller then takes the steps one by one, as before. A sender at its cap of
//! read messages is trimmed inside the statement, as the steps trim it. Both forms give the
//! same guarantees (the crate docs):
//!
//! - SQLite: an `INSERT` into the view `hub_send`, whose `INSTEAD OF` trigger
//!   ([`sqlite_send_schema`]) allocates the id and the timestamp, records the sender as seen,
//!   and stores the copies and the key. A statement that writes takes the write lock before it
//!   reads anything (SQLite opens its write transaction first), so the id, the checks and the
//!   writes are one atomic unit, serialized with every other writer, as a `BEGIN IMMEDIATE`
//!   transaction is.
//! - PostgreSQL: [`Hub::insert_postgres`]'s statement with the checks in front
//!   ([`postgres_send_sql`]); the locks of the machines it writes order it as before. It runs
//!   inside the function `hub_send_5` ([`postgres_send_function`]), whose plan the connection
//!   keeps: Spin offers no prepared statements, and parsing and planning the statement took as
//!   long as running it. Inside a `VOLATILE` function the statement takes its snapshot when it
//!   starts, as a statement of its own does, so the reasoning of the crate docs holds.
//!
//! The view, its trigger and the function are stored in the database: a later release that
//! changes one gives it a new name, so that a database set up by this one is completed, not
//! misread. (`hub_send_4` made a sender that a purge forgot while the send waited for its
//! row again as never seen, `hub_send_3` left the trim to a statement after its commit,
//! `hub_send_2` drew ids from a counter row held to its commit, and `hub_send_1` called the
//! room check that planned its query at every call; all are unused.)

use super::*;

/// The view a send is inserted into on SQLite, and its trigger; created by set-up. Every
/// value the trigger needs is a column of the row, so that no setting is frozen into the
/// stored trigger. The trigger trims the sender's read messages to their cap last, in the
/// same statement, as a send's steps trim inside their transaction: a failure stores nothing.
pub(super) fn sqlite_send_schema() -> [String; 2] {
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

/// The insert into `hub_send` ([`sqlite_send_schema`]) that stores a send when every check
/// holds, and nothing otherwise. Parameters: `$1` now, `$2` the oldest creation time kept,
/// `$3` [`Limits::max_unread`], `$4` sender, `$5` recipient, `$6` body, `$7` subject, `$8`
/// importance, `$9` reply_to, `$10` the key, `$11` [`Limits::max_read`], `$12`
/// [`PURGE_EVERY_MS`], `$13` [`SEEN_EVERY_MS`]. Answers the id, timestamp and thread stored.
/// A sender at its cap of read messages is no check: the trigger trims.
fn sqlite_send_sql(to: &Recipient) -> String {
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

/// [`Hub::insert_postgres`]'s statement, for `targets` ([`Hub::targets`]), whose last parameter
/// is [`Limits::max_read`]: `$14`, or with `gate`, where the checks of [`Hub::send_at_once`]
/// come first and take `$14` [`PURGE_EVERY_MS`] and `$15` [`SEEN_EVERY_MS`], `$16`.
pub(super) fn postgres_send_sql(broadcast: bool, targets: &str, gate: bool) -> String {
    let max_read = if gate {
        "CAST($16 AS BIGINT)"
    } else {
        "CAST($14 AS BIGINT)"
    };
    let needs_room = if broadcast {
        ""
    } else {
        "WHERE EXISTS (SELECT 1 FROM t)"
    };
    // The machines whose mailboxes the send writes, each once: their rows are locked before
    // the id is drawn. A row a purge deleted while the send waited for it is made again, the
    // sender's as seen now: it is sending.
    let mailboxes = if broadcast {
        "SELECT CAST($6 AS TEXT) AS owner UNION SELECT m.name FROM hub_machines m \
         WHERE m.name <> $2 AND m.last_seen >= $3"
    } else {
        "SELECT DISTINCT v.owner FROM (VALUES (CAST($6 AS TEXT)), (CAST($7 AS TEXT))) v(owner)"
    };
    let (pre, open, seen, replied, answers) = if gate {
        let known_recipient = if broadcast {
            ""
        } else {
            "AND EXISTS (SELECT 1 FROM hub_machines WHERE name = CAST($7 AS TEXT))"
        };
        let replied = replied_thread_sql(
            "CAST($6 AS TEXT)",
            "CAST($13 AS BIGINT)",
            "CAST($3 AS BIGINT)",
        );
        (
            format!(
                "pre AS (SELECT \
                   EXISTS (SELECT 1 FROM hub_counter WHERE name = 'indexed') \
                   AND EXISTS (SELECT 1 FROM hub_counter WHERE name = 'purged' \
                     AND value > CAST($9 AS BIGINT) - CAST($14 AS BIGINT) \
                     AND value <= CAST($9 AS BIGINT)) \
                   AND EXISTS (SELECT 1 FROM hub_machines WHERE name = CAST($6 AS TEXT)) \
                   {known_recipient} \
                   AND (CAST($13 AS BIGINT) IS NULL OR EXISTS ({replied})) AS fast, \
                   ({replied}) AS replied), "
            ),
            "WHERE (SELECT fast FROM pre)",
            // In the update that locks the sender's row: a later update of a row by the same
            // statement would be skipped. It finds the row as the last send that committed
            // left it, so its count is fresh.
            "CASE WHEN hub_machines.name = CAST($6 AS TEXT) \
               AND hub_machines.last_seen <= CAST($9 AS BIGINT) - CAST($15 AS BIGINT) \
             THEN CAST($9 AS BIGINT) ELSE hub_machines.last_seen END",
            "COALESCE(CAST($12 AS BIGINT), (SELECT replied FROM pre))",
            ", CAST(CASE WHEN (SELECT fast FROM pre) THEN 1 ELSE 0 END AS BIGINT), \
             (SELECT replied FROM pre)",
        )
    } else {
        (
            String::new(),
            "",
            "hub_machines.last_seen",
            "CAST($12 AS BIGINT)",
            "",
        )
    };
    let columns = "machine, id, sender, recipient, body, created, subject, importance, thread, \
                   reply_to";
    let fields = format!(
        "CAST($6 AS TEXT), CAST($7 AS TEXT), CAST($8 AS TEXT), go.created, \
         CAST($10 AS TEXT), CAST($11 AS BIGINT), COALESCE({replied}, go.id), \
         CAST($13 AS BIGINT)"
    );
    format!(
        "WITH {pre}lk AS (INSERT INTO hub_machines (name, last_seen) \
           SELECT b.owner, CASE WHEN b.owner = CAST($6 AS TEXT) THEN CAST($9 AS BIGINT) \
             ELSE 0 END FROM ({mailboxes}) b {open} ORDER BY b.owner \
           ON CONFLICT (name) DO UPDATE SET last_seen = {seen} RETURNING name, read_kept), \
         c AS (SELECT nextval('hub_message_ids') AS value \
           FROM (SELECT COUNT(*) AS locked FROM lk) l WHERE l.locked > 0), \
         clock AS (SELECT hub_mailbox_clock_3(ARRAY(SELECT name FROM lk), \
           CAST($9 AS BIGINT), c.value) AS value FROM c), \
         t AS ({targets}), \
         ok AS (SELECT c.value AS id, clock.value AS created FROM c, clock {needs_room}), \
         k AS (INSERT INTO hub_sends (sender, idem_key, id, recipient, body, created, \
             subject, importance, thread, reply_to) \
           SELECT CAST($6 AS TEXT), CAST($5 AS TEXT), ok.id, CAST($7 AS TEXT), \
             CAST($8 AS TEXT), ok.created, CAST($10 AS TEXT), CAST($11 AS BIGINT), \
             COALESCE({replied}, ok.id), CAST($13 AS BIGINT) \
           FROM ok WHERE CAST($5 AS TEXT) IS NOT NULL \
           ON CONFLICT (sender, idem_key) DO NOTHING RETURNING id), \
         go AS (SELECT id, created FROM ok \
           WHERE CAST($5 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM k)), \
         ins AS (INSERT INTO hub_messages ({columns}) \
           SELECT t.name, go.id, {fields} FROM go CROSS JOIN t RETURNING 1), \
         own AS (INSERT INTO hub_messages ({columns}, read_at) \
           SELECT CAST($6 AS TEXT), go.id, {fields}, go.created \
           FROM go WHERE CAST($6 AS TEXT) <> CAST($7 AS TEXT) RETURNING 1), \
         tr AS (SELECT hub_trim_read_4(lk.name, {max_read}, 1, go.id) AS gone FROM go, lk \
           WHERE lk.name = CAST($6 AS TEXT) AND CAST($6 AS TEXT) <> CAST($7 AS TEXT) \
           AND lk.read_kept >= {max_read}) \
         SELECT (SELECT value FROM c), (SELECT value FROM clock), (SELECT id FROM ok), \
           (SELECT id FROM go), (SELECT created FROM go), (SELECT COUNT(*) FROM ins), \
           (SELECT COUNT(*) FROM own){answers}, \
           CAST(COALESCE((SELECT gone FROM tr), 0) AS BIGINT)"
    )
}

/// The call of [`postgres_send_function`], with the gated statement's sixteen parameters.
pub(super) const POSTGRES_SEND_CALL: &str = "SELECT * FROM hub_send_5($1, $2, $3, $4, $5, $6, \
     $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";

/// The function `hub_send_5`: the gated statement ([`postgres_send_sql`]) for a broadcast or
/// a direct send, whose parameters it takes in the same order (`$n` in a PL/pgSQL body is the
/// function's `n`th parameter). Its result columns are named apart from every column the
/// statement reads, which PL/pgSQL would otherwise take for its own variables.
pub(super) fn postgres_send_function() -> String {
    let form =
        |broadcast| postgres_send_sql(broadcast, &targets_sql(Dialect::Postgres, broadcast), true);
    format!(
        "CREATE OR REPLACE FUNCTION hub_send_5(TEXT, TEXT, BIGINT, BIGINT, TEXT, TEXT, TEXT, \
         TEXT, BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT) \
         RETURNS TABLE (send_id BIGINT, send_clock BIGINT, send_room BIGINT, send_stored BIGINT, \
         send_created BIGINT, send_copies BIGINT, send_own BIGINT, send_checked BIGINT, \
         send_replied BIGINT, send_trimmed BIGINT) \
         LANGUAGE plpgsql VOLATILE AS $f$ #variable_conflict use_column \
         BEGIN IF $7 = '{BROADCAST}' THEN RETURN QUERY {}; ELSE RETURN QUERY {}; END IF; END $f$",
        form(true),
        form(false),
    )
}

impl<S: Sql, C: Clock> Hub<S, C> {
    /// Stores the send in one statement when it needs nothing written but the message (see the
    /// module docs); `None`, having written nothing, when it needs more.
    pub(super) fn send_at_once(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        match self.db.dialect() {
            Dialect::Sqlite => self.send_at_once_sqlite(request, key, now),
            Dialect::Postgres => self.send_at_once_postgres(request, key, now),
        }
    }

    fn send_at_once_postgres(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        let (stored, replied) = self.insert_postgres(request, key, None, now, true)?;
        match stored {
            Stored::Message { id, created, .. } => {
                stored_message(request, id, created, replied).map(Some)
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

    fn send_at_once_sqlite(
        &self,
        request: &SendRequest,
        key: Option<&IdempotencyKey>,
        now: i64,
    ) -> Result<Option<Message>, HubError> {
        let params = [
            now.into(),
            (now - self.limits.retention_ms).into(),
            i64::try_from(self.limits.max_unread)
                .unwrap_or(i64::MAX)
                .into(),
            request.from.as_str().into(),
            request.to.as_str().into(),
            request.body.as_str().into(),
            request.subject.as_deref().into(),
            request.importance.level().into(),
            request.reply_to.map_or(SqlValue::Null, |r| {
                i64::try_from(r).unwrap_or(i64::MAX).into()
            }),
            key.map(IdempotencyKey::as_str).into(),
            i64::try_from(self.limits.max_read)
                .unwrap_or(i64::MAX)
                .into(),
            PURGE_EVERY_MS.into(),
            SEEN_EVERY_MS.into(),
        ];
        self.db.answer_busy_at_once().map_err(store_error)?;
        let sql = sqlite_send_sql(&request.to);
        let rows = while_busy(Pacing::Even, || self.query(&sql, &params))?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let value = |i: usize| row.get(i).and_then(SqlValue::as_int);
        match (value(0), value(1), value(2)) {
            (Some(id), Some(created), Some(thread)) => {
                stored_message(request, id, created, Some(thread)).map(Some)
            }
            _ => Err(corrupt("a send's stored row")),
        }
    }
}
