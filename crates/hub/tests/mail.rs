//! The hub as mail, on SQLite: subjects, importance, replies and threads, a mailbox that keeps
//! what was read (bounded), full-text search, and a database of the first release upgraded in
//! place.

mod common;

use common::{ManualClock, SqliteDb, T0, TestDb};
use dochub_hub::{
    Hub, HubError, IdempotencyKey, Importance, Inbox, Limits, MachineName, MailboxQuery, Message,
    SendRequest, Sql, search_words,
};
use serde_json::{Value, json};

fn name(n: &str) -> MachineName {
    MachineName::parse(n, "machine").unwrap()
}

fn send<S: Sql, C: dochub_hub::Clock>(hub: &Hub<S, C>, message: Value) -> Message {
    let request = SendRequest::from_json(message.to_string().as_bytes()).unwrap();
    hub.send(&request, None).unwrap()
}

fn try_send<S: Sql, C: dochub_hub::Clock>(hub: &Hub<S, C>, message: Value) -> HubError {
    let request = SendRequest::from_json(message.to_string().as_bytes()).unwrap();
    hub.send(&request, None).unwrap_err()
}

fn query(limit: usize) -> MailboxQuery {
    MailboxQuery {
        limit,
        ..MailboxQuery::default()
    }
}

fn ids(inbox: &Inbox) -> Vec<u64> {
    inbox.messages.iter().map(|m| m.message.id).collect()
}

fn search<S: Sql, C: dochub_hub::Clock>(hub: &Hub<S, C>, machine: &str, q: &str) -> Vec<u64> {
    let query = MailboxQuery {
        limit: 50,
        words: Some(search_words(q).unwrap()),
        ..MailboxQuery::default()
    };
    ids(&hub.mailbox(&name(machine), &query).unwrap())
}

#[test]
fn replies_join_their_thread_and_the_mailbox_keeps_what_was_read() {
    let db = TestDb::new();
    let hub = db.hub();
    let ask = send(
        &hub,
        json!({"from": "lead", "to": "worker", "body": "deploy 412?", "subject": "Deploy",
               "importance": "high"}),
    );
    assert_eq!((ask.thread, ask.reply_to), (ask.id, None));
    assert_eq!(ask.importance, Importance::High);
    assert_eq!(ask.subject.as_deref(), Some("Deploy"));
    let read = hub.inbox(&name("worker"), 10, true, true).unwrap();
    assert_eq!(read.messages[0].message, ask, "read as it was sent");
    let answer = send(
        &hub,
        json!({"from": "worker", "to": "lead", "body": "done", "reply_to": ask.id}),
    );
    assert_eq!((answer.thread, answer.reply_to), (ask.id, Some(ask.id)));
    let thanks = send(
        &hub,
        json!({"from": "lead", "to": "worker", "body": "thanks", "reply_to": answer.id}),
    );
    assert_eq!(
        thanks.thread, ask.id,
        "a reply to a reply stays in the thread"
    );
    send(
        &hub,
        json!({"from": "lead", "to": "other", "body": "unrelated"}),
    );

    let lead = hub.mailbox(&name("lead"), &query(50)).unwrap();
    assert_eq!(ids(&lead), [4, 3, 2, 1], "sent and received, newest first");
    let read_states: Vec<bool> = lead.messages.iter().map(|m| m.read).collect();
    assert_eq!(
        read_states,
        [true, true, false, true],
        "what it sent is read; the answer waits"
    );
    let thread = MailboxQuery {
        thread: Some(ask.id),
        ..query(50)
    };
    assert_eq!(
        ids(&hub.mailbox(&name("lead"), &thread).unwrap()),
        [3, 2, 1]
    );
    assert_eq!(
        ids(&hub.mailbox(&name("worker"), &thread).unwrap()),
        [3, 2, 1]
    );
    let page = MailboxQuery {
        before: Some(3),
        ..query(1)
    };
    assert_eq!(ids(&hub.mailbox(&name("lead"), &page).unwrap()), [2]);
    // Reading the mailbox acknowledges nothing.
    assert_eq!(
        ids(&hub.inbox(&name("lead"), 10, false, true).unwrap()),
        [2]
    );
}

#[test]
fn a_reply_to_a_message_outside_the_senders_mailbox_is_not_found_alike() {
    let db = TestDb::new();
    let hub = db.hub();
    let private = send(&hub, json!({"from": "a", "to": "b", "body": "between us"}));
    let outsider = try_send(
        &hub,
        json!({"from": "c", "to": "b", "body": "x", "reply_to": private.id}),
    );
    let missing = try_send(
        &hub,
        json!({"from": "c", "to": "b", "body": "x", "reply_to": 999}),
    );
    assert!(matches!(outsider, HubError::NotFound(_)), "{outsider}");
    // The same answer, but for the id: nothing tells whether message 1 exists.
    assert_eq!(
        outsider.to_string().replace(" 1:", " N:"),
        missing.to_string().replace(" 999:", " N:")
    );
    assert!(
        ids(&hub.mailbox(&name("c"), &query(50)).unwrap()).is_empty(),
        "nothing stored"
    );
}

#[test]
fn the_inbox_can_keep_to_important_messages() {
    let db = TestDb::new();
    let hub = db.hub();
    for importance in ["low", "normal", "high", "urgent"] {
        send(
            &hub,
            json!({"from": "a", "to": "b", "body": importance, "importance": importance}),
        );
    }
    let b = name("b");
    let urgent = hub
        .inbox_at_least(&b, Importance::High, 10, true, true)
        .unwrap();
    let bodies: Vec<&str> = urgent
        .messages
        .iter()
        .map(|m| m.message.body.as_str())
        .collect();
    assert_eq!(bodies, ["high", "urgent"]);
    assert!(
        !hub.has_unread_at_least(&b, 0, Importance::High).unwrap(),
        "acknowledged"
    );
    assert_eq!(
        ids(&hub.inbox(&b, 10, false, true).unwrap()),
        [1, 2],
        "the rest wait"
    );
}

#[test]
fn search_finds_every_word_in_any_order_and_case_in_one_mailbox_only() {
    let db = TestDb::new();
    let hub = db.hub();
    send(
        &hub,
        json!({"from": "a", "to": "b", "body": "The Release is blocked", "subject": "Pipeline"}),
    );
    send(
        &hub,
        json!({"from": "a", "to": "b", "body": "release notes ready"}),
    );
    send(
        &hub,
        json!({"from": "c", "to": "d", "body": "release blocked elsewhere"}),
    );
    assert_eq!(search(&hub, "b", "blocked RELEASE"), [1]);
    assert_eq!(search(&hub, "b", "release"), [2, 1]);
    assert_eq!(
        search(&hub, "b", "pipeline release"),
        [1],
        "the subject counts"
    );
    assert_eq!(
        search(&hub, "a", "release"),
        [2, 1],
        "the sender finds what it sent"
    );
    assert_eq!(search(&hub, "d", "release"), [3]);
    assert!(
        search(&hub, "e", "release").is_empty(),
        "a third machine sees nothing"
    );
    // Full-text syntax is only words here.
    for q in [
        r#""release"#,
        "release*",
        "release NEAR blocked",
        "release OR nothing",
        "-release",
    ] {
        let found = search(&hub, "b", q);
        assert!(found.len() <= 2, "{q}: {found:?}");
    }
    assert!(
        search(&hub, "b", "release OR nothing").is_empty(),
        "OR is a word"
    );
    assert!(search_words("*** \" -").is_err());
    assert!(search_words(&"word ".repeat(5_000)).is_err());
}

#[test]
fn a_broadcast_is_once_in_its_senders_mailbox_and_once_in_each_inbox() {
    let db = TestDb::new();
    let hub = db.hub();
    for m in ["x", "y", "z"] {
        hub.inbox(&name(m), 1, false, true).unwrap();
    }
    let all = send(&hub, json!({"from": "x", "to": "all", "body": "hello all"}));
    assert_eq!(ids(&hub.mailbox(&name("x"), &query(50)).unwrap()), [all.id]);
    assert_eq!(ids(&hub.mailbox(&name("y"), &query(50)).unwrap()), [all.id]);
    assert_eq!(search(&hub, "z", "hello"), [all.id]);
    assert!(
        hub.inbox(&name("x"), 10, false, true)
            .unwrap()
            .messages
            .is_empty()
    );
}

#[test]
fn read_messages_are_kept_up_to_the_cap_and_unread_ones_always() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(
        &clock,
        Limits {
            max_read: 3,
            ..Limits::default()
        },
    );
    for i in 1..=5 {
        send(
            &hub,
            json!({"from": "a", "to": "b", "body": format!("m{i}")}),
        );
        assert_eq!(
            hub.mailbox(&name("a"), &query(50)).unwrap().messages.len(),
            i.min(3),
            "after send {i}: never more than the cap"
        );
    }
    assert_eq!(
        ids(&hub.mailbox(&name("a"), &query(50)).unwrap()),
        [5, 4, 3],
        "the sender keeps its newest sent"
    );
    assert_eq!(
        ids(&hub.mailbox(&name("b"), &query(50)).unwrap()),
        [5, 4, 3, 2, 1],
        "unread: all kept"
    );
    assert_eq!(hub.acknowledge(&name("b"), 5).unwrap(), 5);
    assert_eq!(
        ids(&hub.mailbox(&name("b"), &query(50)).unwrap()),
        [5, 4, 3]
    );
    assert_eq!(search(&hub, "b", "m1").len(), 0, "gone from search too");
    // Retention applies to what was read as well.
    clock.advance(Limits::default().retention_ms + 1);
    send(&hub, json!({"from": "c", "to": "d", "body": "later"}));
    assert!(ids(&hub.mailbox(&name("b"), &query(50)).unwrap()).is_empty());
}

/// Each machine's `(name, read_kept, unread_kept)`, once each count is checked against the
/// rows on disk.
fn counts(db: &TestDb) -> Vec<(String, i64, i64)> {
    let conn = SqliteDb::open(&db.path());
    let mut statement = conn
        .conn()
        .prepare(
            "SELECT name, read_kept, unread_kept, \
             (SELECT COUNT(*) FROM hub_messages WHERE machine = name AND read_at IS NOT NULL), \
             (SELECT COUNT(*) FROM hub_messages WHERE machine = name AND read_at IS NULL) \
             FROM hub_machines ORDER BY name",
        )
        .unwrap();
    let rows: Vec<(String, i64, i64, i64, i64)> = statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows.into_iter()
        .map(|(name, read, unread, read_rows, unread_rows)| {
            assert_eq!(
                (read, unread),
                (read_rows, unread_rows),
                "the counts of {name}"
            );
            (name, read, unread)
        })
        .collect()
}

#[test]
fn the_counts_of_messages_follow_every_way_a_message_is_sent_read_or_goes() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    let limits = Limits {
        max_read: 4,
        ..Limits::default()
    };
    let hub = db.hub_with(&clock, limits);
    for machine in ["a", "b", "c"] {
        hub.seen(&name(machine)).unwrap();
    }
    for i in 0..6 {
        send(
            &hub,
            json!({"from": "a", "to": "b", "body": format!("to b {i}")}),
        );
        send(
            &hub,
            json!({"from": "b", "to": "all", "body": format!("to all {i}")}),
        );
        send(
            &hub,
            json!({"from": "c", "to": "c", "body": "a note to itself"}),
        );
    }
    assert_eq!(
        hub.inbox(&name("b"), 2, true, true).unwrap().messages.len(),
        2
    );
    assert_eq!(hub.acknowledge(&name("a"), 9).unwrap(), 3);
    assert_eq!(
        hub.inbox(&name("c"), 50, true, false)
            .unwrap()
            .messages
            .len(),
        12
    );
    let kept: Vec<(String, i64, i64)> = [("a", 4, 3), ("b", 4, 4), ("c", 4, 0)]
        .iter()
        .map(|(m, read, unread)| ((*m).to_owned(), *read, *unread))
        .collect();
    assert_eq!(counts(&db), kept, "each at the read cap, counted right");
    // Retention deletes read messages too, and the count follows.
    clock.advance(limits.retention_ms + 1);
    send(&hub, json!({"from": "d", "to": "a", "body": "later"}));
    assert_eq!(
        counts(&db),
        [("a".to_owned(), 0, 1), ("d".to_owned(), 1, 0)],
        "b and c, unseen and without messages, are forgotten"
    );
}

/// A connection whose trims of read messages always fail, as SQLite answers a write it has no
/// time for.
struct TrimFails(SqliteDb);

impl Sql for TrimFails {
    fn dialect(&self) -> dochub_hub::Dialect {
        self.0.dialect()
    }
    fn query(
        &self,
        sql: &str,
        params: &[dochub_hub::SqlValue],
    ) -> Result<Vec<Vec<dochub_hub::SqlValue>>, dochub_hub::SqlError> {
        self.0.query(sql, params)
    }
    fn execute(
        &self,
        sql: &str,
        params: &[dochub_hub::SqlValue],
    ) -> Result<u64, dochub_hub::SqlError> {
        if sql.starts_with("DELETE FROM hub_messages WHERE machine") {
            return Err(dochub_hub::SqlError("database is locked".to_owned()));
        }
        self.0.execute(sql, params)
    }
    fn answer_busy_at_once(&self) -> Result<(), dochub_hub::SqlError> {
        self.0.answer_busy_at_once()
    }
}

/// Acknowledging reads whose trim fails ([`TrimFails`]): each still answers what it marked
/// read, and takes nothing more.
#[test]
fn a_failed_trim_after_an_acknowledging_read_loses_no_message() {
    let db = TestDb::new();
    let hub = db.hub();
    for i in 1..=4 {
        send(
            &hub,
            json!({"from": "a", "to": "b", "body": format!("m{i}")}),
        );
    }
    let failing = Hub::new(TrimFails(SqliteDb::open(&db.path())));
    let taken = failing.inbox(&name("b"), 1, true, true).unwrap();
    assert_eq!(ids(&taken), [1]);
    assert_eq!(failing.acknowledge(&name("b"), 2).unwrap(), 1);
    let left = hub.inbox(&name("b"), 50, false, true).unwrap();
    assert_eq!(ids(&left), [3, 4], "only what was answered left the inbox");
}

/// A send trims its sender's read messages only when they would pass the cap: one left over
/// the cap by a failed trim is brought back to it by the machine's next send.
#[test]
fn a_send_brings_read_messages_left_over_the_cap_back_to_it() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    let limits = Limits {
        max_read: 3,
        ..Limits::default()
    };
    let hub = db.hub_with(&clock, limits);
    for i in 1..=5 {
        send(
            &hub,
            json!({"from": "b", "to": "a", "body": format!("m{i}")}),
        );
    }
    let failing = Hub::with_clock(TrimFails(SqliteDb::open(&db.path())), clock.clone(), limits);
    assert_eq!(failing.acknowledge(&name("a"), 5).unwrap(), 5);
    assert_eq!(
        counts(&db),
        [("a".to_owned(), 5, 0), ("b".to_owned(), 3, 0)],
        "the failed trim left a over the cap"
    );
    let sent = send(&hub, json!({"from": "a", "to": "b", "body": "back"}));
    assert_eq!(
        ids(&hub.mailbox(&name("a"), &query(50)).unwrap()),
        [sent.id, 5, 4]
    );
    assert_eq!(
        counts(&db),
        [("a".to_owned(), 3, 0), ("b".to_owned(), 3, 1)]
    );
}

#[test]
fn a_retried_reply_is_stored_once_and_a_changed_one_refused() {
    let db = TestDb::new();
    let hub = db.hub();
    let first = send(&hub, json!({"from": "a", "to": "b", "body": "q"}));
    let reply = json!({"from": "b", "to": "a", "body": "r", "reply_to": first.id,
                       "subject": "Re", "importance": "urgent"});
    let key = IdempotencyKey::parse(b"reply-1").unwrap();
    let request = SendRequest::from_json(reply.to_string().as_bytes()).unwrap();
    let stored = hub.send(&request, Some(&key)).unwrap();
    assert_eq!(hub.send(&request, Some(&key)).unwrap(), stored);
    assert_eq!(ids(&hub.mailbox(&name("a"), &query(50)).unwrap()), [2, 1]);
    let mut changed = reply.clone();
    changed["importance"] = json!("low");
    let changed = SendRequest::from_json(changed.to_string().as_bytes()).unwrap();
    assert!(matches!(
        hub.send(&changed, Some(&key)),
        Err(HubError::KeyReused(_))
    ));
}

/// The schema of the first release, as it created it.
const FIRST_RELEASE: &[&str] = &[
    "PRAGMA journal_mode=WAL",
    "CREATE TABLE hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL)",
    "CREATE TABLE hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL, sender TEXT NOT NULL, \
     recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     PRIMARY KEY (machine, id))",
    "CREATE INDEX hub_messages_created ON hub_messages (created)",
    "CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    "CREATE TABLE hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL, id BIGINT NOT NULL, \
     recipient TEXT NOT NULL, body TEXT NOT NULL, created BIGINT NOT NULL, \
     PRIMARY KEY (sender, idem_key))",
    "CREATE INDEX hub_sends_created ON hub_sends (created)",
];

#[test]
fn a_database_of_the_first_release_is_upgraded_in_place_losing_nothing() {
    let db = TestDb::new();
    let now = dochub_hub::SystemClock;
    let ms = dochub_hub::Clock::now_ms(&now);
    {
        let old = SqliteDb::open(&db.path());
        let conn = old.conn();
        for statement in FIRST_RELEASE {
            conn.execute_batch(statement).unwrap();
        }
        conn.execute_batch(&format!(
            "INSERT INTO hub_machines VALUES ('a', {ms}), ('b', {ms});
             INSERT INTO hub_counter VALUES ('ids', 2), ('clock', {ms});
             INSERT INTO hub_messages VALUES ('b', 1, 'a', 'b', 'kept from before', {ms});
             INSERT INTO hub_messages VALUES ('b', 2, 'a', 'b', 'second old one', {ms});
             INSERT INTO hub_sends VALUES ('a', 'k1', 2, 'b', 'second old one', {ms});"
        ))
        .unwrap();
    }
    let hub = db.hub();
    let inbox = hub.inbox(&name("b"), 10, false, true).unwrap();
    assert_eq!(ids(&inbox), [1, 2], "every unread message survives");
    let old = &inbox.messages[0].message;
    assert_eq!(
        (old.thread, old.importance, &old.subject),
        (1, Importance::Normal, &None)
    );
    // The old idempotency record still answers its retry.
    let retry =
        SendRequest::from_json(br#"{"from":"a","to":"b","body":"second old one"}"#).unwrap();
    let key = IdempotencyKey::parse(b"k1").unwrap();
    assert_eq!(hub.send(&retry, Some(&key)).unwrap().id, 2);
    assert_eq!(
        search(&hub, "b", "kept before"),
        [1],
        "old messages are searchable"
    );
    let reply = send(
        &hub,
        json!({"from": "b", "to": "a", "body": "ok", "reply_to": 1}),
    );
    assert_eq!((reply.id, reply.thread), (3, 1));
    assert_eq!(hub.acknowledge(&name("b"), 2).unwrap(), 2);
    assert_eq!(
        ids(&hub.mailbox(&name("b"), &query(50)).unwrap()),
        [3, 2, 1]
    );
}
