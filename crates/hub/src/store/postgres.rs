//! PostgreSQL's side of the hub's store (`spin:postgres`). No transaction spans statements:
//! Spin hands a pooled connection with an unfinished transaction to the next request. So each
//! step that must be atomic is one statement (a send: [`insert`]; set-up: `DO` blocks), and
//! concurrent sends are ordered by the row locks of the machines they write, not by one lock
//! for the whole hub: sends to different machines commit side by side. Ids follow creation
//! times within each mailbox. A send that needs nothing but its message written runs inside
//! the function `hub_send_5` ([`send_function`]), whose plan the connection keeps: Spin offers
//! no prepared statements, and parsing and planning the statement took as long as running it.
//! Inside a `VOLATILE` function the statement takes its snapshot when it starts, as a
//! statement of its own does, so the reasoning of the crate docs holds. The full-text index is
//! a generated `tsvector` column.
//!
//! The functions are stored in the database: a later release that changes one gives it a new
//! name, so that a database set up by this one is completed, not misread. (`hub_send_4` made a
//! sender that a purge forgot while the send waited for its row again as never seen,
//! `hub_send_3` left the trim to a statement after its commit, `hub_send_2` drew ids from a
//! counter row held to its commit, and `hub_send_1` called the room check that planned its
//! query at every call; all are unused.)

use super::*;

/// The hub's store on PostgreSQL.
pub(super) struct PostgresEngine;

impl Engine for PostgresEngine {
    fn busy(&self) -> Busy {
        Busy::Cancelled
    }

    /// The steps as they come: the one that must be atomic is one statement ([`insert`]).
    fn atomically(
        &self,
        _: &Conn<'_>,
        op: &mut dyn FnMut() -> Result<(), HubError>,
    ) -> Result<(), HubError> {
        op()
    }

    /// [`insert`]'s statement with the checks in front ([`send_sql`]), in `hub_send_5`; the
    /// locks of the machines it writes order it as the steps' do.
    fn send_at_once(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
    ) -> Result<(Stored, Option<i64>), HubError> {
        insert(conn, send, None, true)
    }

    fn insert(
        &self,
        conn: &Conn<'_>,
        send: &Outgoing<'_>,
        thread: Option<i64>,
    ) -> Result<Stored, HubError> {
        insert(conn, send, thread, false).map(|(stored, _)| stored)
    }

    fn search_rows(
        &self,
        words: &[String],
        columns: &str,
        filter: &str,
        params: &mut Vec<SqlValue>,
    ) -> String {
        params.push(words.join(" ").as_str().into());
        format!(
            "SELECT {columns} FROM hub_messages m WHERE m.machine = $1 \
             AND m.created >= $2 AND m.id < $3{filter} \
             AND m.search @@ plainto_tsquery('simple', CAST(${} AS TEXT)) \
             ORDER BY m.id DESC LIMIT CAST($4 AS BIGINT)",
            params.len()
        )
    }

    /// The index is a generated column: always up to date.
    fn catch_up_search(&self, _: &Conn<'_>) -> Result<(), HubError> {
        Ok(())
    }

    fn purge_expired(&self, conn: &Conn<'_>, oldest: i64) -> Result<(), HubError> {
        conn.execute(&purge_messages(oldest), &[])?;
        conn.execute(&forget_machines(oldest), &[])?;
        Ok(())
    }

    fn prepare(&self, _: &Conn<'_>) -> Result<(), HubError> {
        Ok(())
    }

    /// One `DO` block per table, which holds that table's lock alone (two tables' locks held
    /// at once could circle with the first sends of a fresh database).
    fn upgrade(&self, conn: &Conn<'_>, upgrade: &Upgrade) -> Result<(), HubError> {
        let table = upgrade.table;
        let mut block = String::from("DO $$ BEGIN ");
        for (column, definition) in upgrade.columns {
            block +=
                &format!("ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {definition}; ");
        }
        for statement in upgrade.after {
            block += &format!("{statement}; ");
        }
        block += "END $$";
        conn.execute(&block, &[]).map(drop)
    }

    fn count_messages(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        conn.execute(&count_messages(), &[]).map(drop)
    }

    /// The full-text index, the sequence of ids and the functions a send calls, in the order
    /// they are made: each may race the same statement of another set-up, as every object may.
    fn make_objects(&self, conn: &Conn<'_>) -> Result<(), HubError> {
        for statement in SEARCH_INDEX {
            conn.execute(statement, &[])?;
        }
        for statement in functions() {
            conn.execute(&statement, &[])?;
        }
        Ok(())
    }

    fn objects(&self) -> usize {
        SEARCH_INDEX.len() + FUNCTIONS
    }
}

/// How many statements [`functions`] makes.
const FUNCTIONS: usize = 5;

fn functions() -> [String; FUNCTIONS] {
    [
        MESSAGE_IDS.to_owned(),
        inbox_has_room(),
        mailbox_clock().to_owned(),
        trim_read(),
        send_function(),
    ]
}

/// The `SELECT` of a send's recipients with room in their inbox ([`send_candidates`]). It runs
/// inside [`insert`]'s statement, after the recipients' rows are locked and the id drawn
/// (`c`): `hub_inbox_has_room_3` gets `c.value` so that it cannot run earlier.
fn targets(broadcast: bool) -> String {
    format!(
        "SELECT x.name AS name FROM c, ({}) x \
         WHERE hub_inbox_has_room_3(x.name, CAST($4 AS BIGINT), CAST($3 AS BIGINT), c.value)",
        send_candidates(broadcast)
    )
}

/// One statement, in this order: lock the rows of the machines whose mailboxes it writes
/// (its sender and recipients, in name order, so two sends never wait for each other in a
/// circle; a row a purge has just deleted is made again, as a message's count would make
/// it), draw the id from `hub_message_ids` and take the timestamp from those mailboxes
/// (`hub_mailbox_clock_3`) under those locks, pick the recipients with room (decided by
/// `hub_inbox_has_room_3`, which takes a fresh snapshot: it sees every send that committed
/// before this one took the lock), claim the idempotency key, store the copies only if the
/// key was claimed and, for a direct send, the inbox had room, and trim the sender's read
/// messages to their cap when its count, read fresh in the update that locked its row, says
/// they pass it (`hub_trim_read_4`, with a fresh snapshot too). The locks are held until
/// the statement commits, so sends to one machine commit one at a time, in id order, and
/// sends to different machines side by side. Always answers one row: Spin v4.0.2 never
/// answers a query without rows.
///
/// With `gate` ([`Engine::send_at_once`]) the statement first checks that the send needs
/// nothing else written, and touches nothing when it does ([`Stored::NotAtOnce`]); it then
/// also records the sender as seen, in the same update that locks its row. Answers the
/// thread of the message replied to, when there is one.
fn insert(
    conn: &Conn<'_>,
    send: &Outgoing<'_>,
    thread: Option<i64>,
    gate: bool,
) -> Result<(Stored, Option<i64>), HubError> {
    let request = send.request;
    let mut params = send.target_params();
    params.extend([
        SqlValue::from(send.key.map(IdempotencyKey::as_str)),
        request.from.as_str().into(),
        request.to.as_str().into(),
        request.body.as_str().into(),
        send.now.into(),
        request.subject.as_deref().into(),
        request.importance.level().into(),
        thread.map_or(SqlValue::Null, SqlValue::from),
        send.reply_to(),
    ]);
    if gate {
        params.extend([PURGE_EVERY_MS.into(), SEEN_EVERY_MS.into()]);
    }
    params.push(send.max_read().into());
    let sql = if gate {
        SEND_CALL.to_owned()
    } else {
        let broadcast = matches!(request.to, Recipient::All);
        send_sql(broadcast, false)
    };
    let row = conn.query_row(&sql, &params)?;
    let value = |i: usize| row.get(i).and_then(SqlValue::as_int);
    let stored = match (value(0), value(1), value(2), value(3), value(4)) {
        // The gate closed: no row was locked, no id drawn.
        (None, _, _, _, _) if gate && row.get(7) == Some(&SqlValue::Int(0)) => Stored::NotAtOnce,
        (None, _, _, _, _) | (_, None, _, _, _) => return Err(unprepared()),
        // The statement trimmed the sender's read messages.
        (_, _, _, Some(id), Some(created)) => Stored::Message {
            id,
            created,
            trim: false,
        },
        (_, _, None, _, _) => Stored::InboxFull,
        (_, _, Some(_), _, _) => Stored::KeyTaken,
    };
    Ok((stored, if gate { value(8) } else { None }))
}

/// [`COUNT_MESSAGES`] on PostgreSQL: one `DO` block, the one way to make several
/// statements atomic there (Spin hands a pooled connection with an open transaction to the
/// next request). It locks both tables before it looks again, so of concurrent set-ups one
/// makes the counts and the others find them; messages first, the order in which sends lock
/// them, and at once in the mode that altering them takes, so no lock is ever upgraded.
fn count_messages() -> String {
    let column_missing = "NOT EXISTS (SELECT 1 FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = 'hub_machines' \
         AND column_name = 'unread_kept')";
    format!(
        "DO $$ BEGIN IF {column_missing} THEN \
    LOCK TABLE hub_messages, hub_machines IN ACCESS EXCLUSIVE MODE; \
    IF {column_missing} THEN \
    ALTER TABLE hub_machines ADD COLUMN IF NOT EXISTS read_kept BIGINT NOT NULL DEFAULT 0; \
    ALTER TABLE hub_machines ADD COLUMN unread_kept BIGINT NOT NULL DEFAULT 0; \
    DROP TRIGGER IF EXISTS hub_count_read ON hub_messages; \
    DROP FUNCTION IF EXISTS hub_count_read(); \
    CREATE FUNCTION hub_count_messages() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN \
      IF TG_OP = 'DELETE' THEN \
        UPDATE hub_machines SET \
          read_kept = read_kept - CASE WHEN OLD.read_at IS NULL THEN 0 ELSE 1 END, \
          unread_kept = unread_kept - CASE WHEN OLD.read_at IS NULL THEN 1 ELSE 0 END \
          WHERE name = OLD.machine; \
      ELSIF TG_OP = 'INSERT' THEN \
        INSERT INTO hub_machines (name, last_seen, read_kept, unread_kept) \
          VALUES (NEW.machine, 0, CASE WHEN NEW.read_at IS NULL THEN 0 ELSE 1 END, \
            CASE WHEN NEW.read_at IS NULL THEN 1 ELSE 0 END) \
          ON CONFLICT (name) DO UPDATE SET read_kept = hub_machines.read_kept + \
            excluded.read_kept, unread_kept = hub_machines.unread_kept + excluded.unread_kept; \
      ELSIF OLD.read_at IS NULL AND NEW.read_at IS NOT NULL THEN \
        UPDATE hub_machines SET read_kept = read_kept + 1, unread_kept = unread_kept - 1 \
          WHERE name = NEW.machine; \
      END IF; \
      RETURN NULL; \
    END $f$; \
    CREATE TRIGGER hub_count_messages AFTER INSERT OR DELETE OR UPDATE OF read_at \
      ON hub_messages FOR EACH ROW EXECUTE FUNCTION hub_count_messages(); \
    {MACHINES_OF_MESSAGES}; {COUNT_MESSAGES}; END IF; END IF; END $$"
    )
}

/// The function `hub_inbox_has_room_3` ([`has_room`]), which a send calls after it has locked
/// the recipient's row: a `VOLATILE` function takes a fresh snapshot for each query, where the
/// send statement has the snapshot of its start, taken before it waited for the lock; so the
/// count sees every send that committed meanwhile, and the unread cap is exact. `locked` is
/// the id the caller allocated under the lock: passing it makes the call depend on the lock
/// having been taken. PL/pgSQL, not SQL: PostgreSQL plans an SQL function's query anew at
/// every call (0.45 ms, a third of a send), and keeps a PL/pgSQL one's plan for the session.
/// Its walk tests each row's creation time: ids follow creation times within a mailbox only
/// ([`MESSAGE_IDS`]). (`hub_inbox_has_room_2`, `hub_inbox_has_room`,
/// `hub_inbox_unread_since` and `hub_unread` of earlier releases are unused.)
fn inbox_has_room() -> String {
    format!(
        "CREATE OR REPLACE FUNCTION hub_inbox_has_room_3(inbox TEXT, cap BIGINT, oldest BIGINT, \
         locked BIGINT) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $f$ \
         BEGIN RETURN {room}; END $f$",
        room = has_room_where("inbox", "cap", "u.created >= oldest"),
    )
}

/// PostgreSQL's message ids: the sequence `hub_message_ids`, which a send draws from only
/// once it holds the row of every machine whose mailbox it writes (its sender and its
/// recipients), so ids are committed in increasing order within each mailbox, and sends to
/// different machines commit side by side (a counter row held to each commit let one send
/// commit at a time). Made once, in one step, starting after every id given before; with it a
/// trigger that makes an earlier release's `UPDATE hub_counter SET value = value + 1 WHERE
/// name = 'ids'` take its id from the sequence too, so instances of both releases on one
/// database never give one id twice. The trigger waits for such a send in flight to commit,
/// and the start is read after it, so it counts that send's id.
const MESSAGE_IDS: &str = "DO $$ BEGIN IF to_regclass('hub_message_ids') IS NULL THEN \
     CREATE SEQUENCE hub_message_ids; \
     CREATE OR REPLACE FUNCTION hub_ids_from_sequence() RETURNS trigger LANGUAGE plpgsql AS $f$ \
       BEGIN NEW.value := nextval('hub_message_ids'); RETURN NEW; END $f$; \
     CREATE TRIGGER hub_ids_from_sequence BEFORE UPDATE ON hub_counter FOR EACH ROW \
       WHEN (NEW.name = 'ids') EXECUTE FUNCTION hub_ids_from_sequence(); \
     PERFORM setval('hub_message_ids', GREATEST(1, last.id), last.id >= 1) FROM \
       (SELECT GREATEST(0, (SELECT value FROM hub_counter WHERE name = 'ids'), \
         (SELECT MAX(id) FROM hub_messages), (SELECT MAX(id) FROM hub_sends)) AS id) last; \
     END IF; END $$";

/// The function `hub_mailbox_clock_3`: a send's timestamp, the later of `at` (the sender's
/// clock) and the newest message in each of the `mailboxes` it writes, whose rows it has
/// locked (`locked`, as in [`inbox_has_room`]). Fresh snapshots, so a send committed while
/// this one waited for the lock is seen. Timestamps therefore never go back in id order within
/// a mailbox, the order in which a machine reads them.
fn mailbox_clock() -> &'static str {
    "CREATE OR REPLACE FUNCTION hub_mailbox_clock_3(mailboxes TEXT[], at BIGINT, locked BIGINT) \
     RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $f$ BEGIN RETURN GREATEST(at, \
     (SELECT MAX(newest.created) FROM unnest(mailboxes) AS box(owner) CROSS JOIN LATERAL \
     (SELECT m.created FROM hub_messages m WHERE m.machine = box.owner \
     ORDER BY m.id DESC LIMIT 1) newest)); END $f$"
}

/// The function `hub_trim_read_4`: deletes `owner`'s oldest read messages past `cap`, counting
/// `adding` read copies the calling statement is storing (its triggers have not counted them
/// yet), and answers how many it deleted. A send calls it while it holds `owner`'s row
/// (`locked`, as in [`inbox_has_room`]), so the trim is part of the send: a busy sender's
/// separate trim after each commit queued behind its next sends for that row. Its fresh
/// snapshot sees what the trims of sends committed while this one waited have deleted; the
/// send's own would not, and would take those rows again and delete fewer.
fn trim_read() -> String {
    format!(
        "CREATE OR REPLACE FUNCTION hub_trim_read_4(owner TEXT, cap BIGINT, adding BIGINT, \
         locked BIGINT) RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $f$ \
         DECLARE gone BIGINT; BEGIN \
         {trim}; GET DIAGNOSTICS gone = ROW_COUNT; RETURN gone; END $f$",
        trim = trim_read_sql_counting("owner", "cap", "adding"),
    )
}

/// PostgreSQL's delete of the messages created before `oldest`, in one transaction that first
/// locks the rows of their machines in name order, the order in which a send locks the
/// machines it writes. The delete's trigger counts each message off its machine's row
/// ([`count_messages`]); left to take those rows in the order it meets the messages, it
/// held some that a broadcast, holding others, waited for, while it waited for the
/// broadcast's, and PostgreSQL failed one of the two. A send, its trim included, locks its
/// machines' rows before it writes messages, as this does; a read that takes or acknowledges
/// messages locks them before their machine's row, but only unexpired ones, which this does
/// not delete (unless the two requests' clocks straddle the moment a message expires: then
/// PostgreSQL fails one and the client retries). A `DO` block, which takes no parameters, so
/// no function need be made and kept in step by every release sharing the database; `oldest`
/// is a number.
fn purge_messages(oldest: i64) -> String {
    format!(
        "DO $$ BEGIN \
         PERFORM 1 FROM hub_machines WHERE name IN \
           (SELECT machine FROM hub_messages WHERE created < {oldest}) ORDER BY name FOR UPDATE; \
         DELETE FROM hub_messages WHERE created < {oldest}; END $$"
    )
}

/// PostgreSQL's delete of the machines a purge forgets, which locks their rows in name order
/// first, as [`purge_messages`] does and for the same reason: a direct send between two of
/// them locks both in name order, and a delete meeting them in the other order failed one of
/// the two. It deletes only the rows it locked.
fn forget_machines(oldest: i64) -> String {
    let forgotten = forgotten_machines(&oldest.to_string());
    format!(
        "DO $$ DECLARE locked TEXT[]; BEGIN \
         SELECT array_agg(name) INTO locked FROM (SELECT name FROM hub_machines \
           WHERE {forgotten} ORDER BY name FOR UPDATE) m; \
         DELETE FROM hub_machines WHERE name = ANY (locked) AND {forgotten}; END $$"
    )
}

/// PostgreSQL's: a generated `tsvector` of each row with a GIN index (the `simple`
/// configuration: case-folded words, no stemming, any language). Without `fastupdate`: its
/// pending list, which every search scans until a vacuum merges it, made a search of 20,000
/// messages 5 ms instead of 0.3.
const SEARCH_INDEX: &[&str] = &[
    "ALTER TABLE hub_messages ADD COLUMN IF NOT EXISTS search tsvector GENERATED ALWAYS AS \
     (to_tsvector('simple', COALESCE(subject, '') || ' ' || body)) STORED",
    "CREATE INDEX IF NOT EXISTS hub_messages_search ON hub_messages USING GIN (search) \
     WITH (fastupdate = off)",
];

/// [`insert`]'s statement, whose last parameter
/// is [`Limits::max_read`]: `$14`, or with `gate`, where the checks of [`Engine::send_at_once`]
/// come first and take `$14` [`PURGE_EVERY_MS`] and `$15` [`SEEN_EVERY_MS`], `$16`.
fn send_sql(broadcast: bool, gate: bool) -> String {
    let targets = targets(broadcast);
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

/// The call of [`send_function`], with the gated statement's sixteen parameters.
const SEND_CALL: &str = "SELECT * FROM hub_send_5($1, $2, $3, $4, $5, $6, \
     $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";

/// The function `hub_send_5`: the gated statement ([`send_sql`]) for a broadcast or
/// a direct send, whose parameters it takes in the same order (`$n` in a PL/pgSQL body is the
/// function's `n`th parameter). Its result columns are named apart from every column the
/// statement reads, which PL/pgSQL would otherwise take for its own variables.
fn send_function() -> String {
    let form = |broadcast| send_sql(broadcast, true);
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
