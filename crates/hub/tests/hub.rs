//! The hub's storage logic on SQLite through the [`Sql`] trait: delivery, order, acknowledgement,
//! idempotency, limits, and concurrency over separate connections to one file.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use common::{ManualClock, SqliteDb, T0, TestDb};
use dochub_hub::{
    Clock, Hub, HubError, IdempotencyKey, Importance, Limits, MachineName, MailboxQuery, Message,
    SendRequest, Sql,
};

fn name(n: &str) -> MachineName {
    MachineName::parse(n, "machine").unwrap()
}

fn req(from: &str, to: &str, body: &str) -> SendRequest {
    let json = serde_json::json!({"from": from, "to": to, "body": body}).to_string();
    SendRequest::from_json(json.as_bytes()).unwrap()
}

fn key(k: &str) -> IdempotencyKey {
    IdempotencyKey::parse(k.as_bytes()).unwrap()
}

fn bodies<S: Sql, C: Clock>(hub: &Hub<S, C>, m: &str, limit: usize, ack: bool) -> Vec<String> {
    hub.inbox(&name(m), limit, ack, true)
        .unwrap()
        .messages
        .into_iter()
        .map(|m| m.message.body)
        .collect()
}

fn names<S: Sql, C: Clock>(hub: &Hub<S, C>) -> Vec<String> {
    hub.machines()
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect()
}

fn mailbox(limit: usize) -> MailboxQuery {
    MailboxQuery {
        limit,
        ..MailboxQuery::default()
    }
}

#[test]
fn the_schema_is_created_by_whatever_comes_first() {
    for first in 0..3 {
        let db = TestDb::new();
        let hub = db.hub();
        match first {
            0 => assert!(hub.machines().unwrap().is_empty()),
            1 => assert!(
                hub.inbox(&name("b"), 5, true, true)
                    .unwrap()
                    .messages
                    .is_empty()
            ),
            _ => assert_eq!(hub.acknowledge(&name("b"), 9).unwrap(), 0),
        }
        hub.send(&req("a", "b", "x"), None).unwrap();
        assert_eq!(bodies(&db.hub(), "b", 5, true), ["x"]);
    }
}

#[test]
fn a_message_sent_is_read_once_with_ack() {
    let db = TestDb::new();
    let hub = db.hub();
    let sent = hub
        .send(&req("laptop", "ci", "build 412 is green"), None)
        .unwrap();
    assert_eq!(sent.id, 1);
    assert_eq!((sent.from.as_str(), sent.to.as_str()), ("laptop", "ci"));
    let inbox = hub.inbox(&name("ci"), 10, true, true).unwrap();
    assert_eq!(inbox.machine, "ci");
    assert_eq!(inbox.messages.len(), 1);
    assert_eq!(inbox.messages[0].message, sent);
    assert!(inbox.messages[0].read);
    assert!(bodies(&hub, "ci", 10, true).is_empty());
    let kept = hub.mailbox(&name("ci"), &mailbox(50)).unwrap().messages;
    assert_eq!(kept.len(), 1, "acknowledged messages stay in the mailbox");
    assert_eq!((&kept[0].message, kept[0].read), (&sent, true));
}

#[test]
fn limit_returns_the_oldest_first_and_ack_moves_on() {
    let db = TestDb::new();
    let hub = db.hub();
    for i in 0..5 {
        hub.send(&req("a", "b", &format!("m{i}")), None).unwrap();
    }
    assert_eq!(bodies(&hub, "b", 2, false), ["m0", "m1"]);
    assert_eq!(
        bodies(&hub, "b", 2, false),
        ["m0", "m1"],
        "a peek changes nothing"
    );
    assert!(
        hub.inbox(&name("b"), 2, false, true)
            .unwrap()
            .messages
            .iter()
            .all(|m| !m.read)
    );
    assert_eq!(bodies(&hub, "b", 2, true), ["m0", "m1"]);
    assert_eq!(
        bodies(&hub, "b", 0, true),
        ["m2"],
        "limit 0 is clamped to 1"
    );
    assert_eq!(bodies(&hub, "b", 10_000, true), ["m3", "m4"]);
}

#[test]
fn ids_increase_across_inboxes_and_across_connections() {
    let db = TestDb::new();
    let ids: Vec<u64> = (0..6)
        .map(|i| {
            let to = if i % 2 == 0 { "b" } else { "c" };
            db.hub().send(&req("a", to, "x"), None).unwrap().id
        })
        .collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn broadcast_reaches_every_machine_registered_at_send_time_but_the_sender() {
    let db = TestDb::new();
    let hub = db.hub();
    for m in ["m1", "m2", "m3"] {
        hub.inbox(&name(m), 1, true, true).unwrap();
    }
    let sent = hub.send(&req("m1", "all", "to everyone"), None).unwrap();
    assert_eq!(sent.to, "all");
    hub.inbox(&name("late"), 1, true, true).unwrap();
    for m in ["m2", "m3"] {
        let got = hub.inbox(&name(m), 10, true, true).unwrap().messages;
        assert_eq!(got.len(), 1, "{m}");
        assert_eq!(got[0].message, sent);
    }
    assert!(bodies(&hub, "m1", 10, true).is_empty(), "not to the sender");
    assert!(
        bodies(&hub, "late", 10, true).is_empty(),
        "not to later machines"
    );
}

#[test]
fn only_registering_reads_and_sends_register() {
    let db = TestDb::new();
    let hub = db.hub();
    hub.send(&req("sender", "target", "x"), None).unwrap();
    hub.inbox(&name("peeker"), 10, false, false).unwrap();
    assert_eq!(
        names(&hub),
        ["sender"],
        "a recipient or an anonymous peek is not registered"
    );
    hub.inbox(&name("reader"), 10, false, true).unwrap();
    hub.acknowledge(&name("acker"), 0).unwrap();
    assert_eq!(names(&hub), ["acker", "reader", "sender"]);
}

#[test]
fn acknowledging_by_id_marks_those_and_no_other() {
    let db = TestDb::new();
    let hub = db.hub();
    let routine = hub.send(&req("a", "b", "routine"), None).unwrap();
    let urgent = SendRequest::from_json(
        br#"{"from": "a", "to": "b", "body": "fire", "importance": "urgent"}"#,
    )
    .unwrap();
    let fire = hub.send(&urgent, None).unwrap();
    let read = hub
        .inbox_at_least(&name("b"), Importance::Urgent, 10, false, true)
        .unwrap();
    assert_eq!(read.messages.len(), 1);
    assert_eq!(hub.acknowledge_ids(&name("b"), &[fire.id]).unwrap(), 1);
    assert_eq!(
        bodies(&hub, "b", 10, false),
        ["routine"],
        "passed over, kept"
    );
    assert_eq!(
        hub.acknowledge_ids(&name("b"), &[fire.id, 999_999])
            .unwrap(),
        0,
        "a repeat, and an id not in the inbox, mark nothing"
    );
    assert_eq!(
        hub.acknowledge_ids(&name("other"), &[routine.id]).unwrap(),
        0,
        "another machine's id is not in this inbox"
    );
    assert_eq!(hub.acknowledge_ids(&name("b"), &[routine.id]).unwrap(), 1);
    assert!(bodies(&hub, "b", 10, false).is_empty());
    assert_eq!(hub.acknowledge_ids(&name("fresh"), &[]).unwrap(), 0);
    let many: Vec<u64> = (1..=501).collect();
    assert!(matches!(
        hub.acknowledge_ids(&name("b"), &many),
        Err(HubError::Invalid(_))
    ));
    let machines: Vec<String> = hub
        .machines()
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert!(
        machines.contains(&"fresh".to_owned()),
        "acknowledging none registers"
    );
}

#[test]
fn two_step_acknowledgement_marks_through_an_id_and_is_idempotent() {
    let db = TestDb::new();
    let hub = db.hub();
    let sent: Vec<Message> = (0..5)
        .map(|i| hub.send(&req("a", "b", &format!("m{i}")), None).unwrap())
        .collect();
    hub.send(&req("a", "other", "not b's"), None).unwrap();
    // A client reads three, then dies before acknowledging: they come back.
    let first = hub.inbox(&name("b"), 3, false, true).unwrap().messages;
    assert_eq!(first.len(), 3);
    let again = db.hub().inbox(&name("b"), 3, false, true).unwrap().messages;
    assert_eq!(first, again);
    // Now it acknowledges through the last one it processed.
    let through = again[2].message.id;
    assert_eq!(hub.acknowledge(&name("b"), through).unwrap(), 3);
    assert_eq!(
        hub.acknowledge(&name("b"), through).unwrap(),
        0,
        "a repeat marks nothing"
    );
    assert_eq!(bodies(&hub, "b", 10, false), ["m3", "m4"]);
    assert_eq!(hub.acknowledge(&name("b"), sent[4].id).unwrap(), 2);
    assert!(bodies(&hub, "b", 10, false).is_empty());
    assert_eq!(
        bodies(&hub, "other", 10, false),
        ["not b's"],
        "other inboxes untouched"
    );
}

#[test]
fn a_retried_send_with_the_same_key_stores_nothing_new() {
    let clock = ManualClock::at(T0);
    let db = TestDb::new();
    let hub = db.hub_with(&clock, Limits::default());
    let first = hub.send(&req("a", "b", "once"), Some(&key("k-1"))).unwrap();
    clock.advance(1_000);
    // Same key, same sender, same request: the original comes back.
    let retry = db
        .hub_with(&clock, Limits::default())
        .send(&req("a", "b", "once"), Some(&key("k-1")))
        .unwrap();
    assert_eq!(retry, first);
    // The same key for another body or recipient is refused: answering the first message
    // would claim a send that never happened.
    for other in [
        req("a", "b", "changed"),
        req("a", "c", "once"),
        req("a", "all", "once"),
    ] {
        let err = hub.send(&other, Some(&key("k-1"))).unwrap_err();
        assert!(matches!(err, HubError::KeyReused(_)), "{err}");
        assert!(err.to_string().contains("`k-1`"), "{err}");
    }
    // Another sender's key space is its own; another key is another message.
    let other = hub.send(&req("c", "b", "once"), Some(&key("k-1"))).unwrap();
    assert_ne!(other.id, first.id);
    hub.send(&req("a", "b", "second"), Some(&key("k-2")))
        .unwrap();
    assert_eq!(bodies(&hub, "b", 10, false), ["once", "once", "second"]);
    // After 24 hours the key is forgotten (and its record purged).
    clock.advance(24 * 60 * 60 * 1000);
    let later = hub.send(&req("a", "b", "once"), Some(&key("k-1"))).unwrap();
    assert!(later.id > first.id);
    let keys: i64 = SqliteDb::open(&db.path())
        .conn()
        .query_row("SELECT COUNT(*) FROM hub_sends", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        keys, 3,
        "the first record of `k-1` expired and was replaced"
    );
}

#[test]
fn an_idempotent_broadcast_is_stored_once_per_machine() {
    let db = TestDb::new();
    let hub = db.hub();
    for m in ["b", "c"] {
        hub.inbox(&name(m), 1, true, true).unwrap();
    }
    let first = hub.send(&req("a", "all", "hi"), Some(&key("bc"))).unwrap();
    assert_eq!(
        hub.send(&req("a", "all", "hi"), Some(&key("bc"))).unwrap(),
        first
    );
    assert_eq!(bodies(&hub, "b", 10, true), ["hi"]);
    assert_eq!(bodies(&hub, "c", 10, true), ["hi"]);
}

#[test]
fn an_answer_is_bounded_in_bytes_and_an_acknowledging_read_deletes_only_what_it_answers() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    // A 100-character body counts 6 * 100 + 384 = 984 bytes: three fit before 2,500 is passed.
    let limits = Limits {
        answer_bytes: 2_500,
        ..Limits::default()
    };
    let hub = db.hub_with(&clock, limits);
    let bodies_sent: Vec<String> = (0..5).map(|i| format!("{i}").repeat(100)).collect();
    for body in &bodies_sent {
        hub.send(&req("a", "b", body), None).unwrap();
    }
    assert_eq!(bodies(&hub, "b", 10, false), bodies_sent[..3]);
    assert_eq!(bodies(&hub, "b", 10, true), bodies_sent[..3]);
    assert_eq!(bodies(&hub, "b", 10, true), bodies_sent[3..]);
    assert!(bodies(&hub, "b", 10, true).is_empty());

    // A message larger than the whole budget still comes, alone.
    let big = "x".repeat(1_000);
    hub.send(&req("a", "b", &big), None).unwrap();
    hub.send(&req("a", "b", "small"), None).unwrap();
    assert_eq!(bodies(&hub, "b", 10, true), [big]);
    assert_eq!(bodies(&hub, "b", 10, true), ["small"]);
}

#[test]
fn a_full_inbox_refuses_direct_sends_and_is_skipped_by_broadcasts() {
    let db = TestDb::new();
    let limits = Limits {
        max_unread: 3,
        ..Limits::default()
    };
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(&clock, limits);
    for m in ["full", "roomy"] {
        hub.inbox(&name(m), 1, true, true).unwrap();
    }
    for i in 0..3 {
        hub.send(&req("a", "full", &format!("m{i}")), None).unwrap();
    }
    let err = hub
        .send(&req("a", "full", "one too many"), None)
        .unwrap_err();
    assert!(matches!(err, HubError::InboxFull(_)), "{err:?}");
    assert!(
        err.to_string().contains("`full`") && err.to_string().contains("3"),
        "{err}"
    );
    let sent: Vec<String> = (hub.mailbox(&name("a"), &mailbox(50)).unwrap().messages)
        .into_iter()
        .map(|m| m.message.body)
        .collect();
    assert_eq!(sent, ["m2", "m1", "m0"], "a refused send leaves no copy");
    hub.send(&req("a", "all", "broadcast"), None).unwrap();
    assert_eq!(bodies(&hub, "roomy", 10, false), ["broadcast"]);
    assert_eq!(bodies(&hub, "full", 10, false), ["m0", "m1", "m2"]);
    // Reading makes room again.
    hub.acknowledge(&name("full"), u64::MAX).unwrap();
    hub.send(&req("a", "full", "fits again"), None).unwrap();
    assert_eq!(bodies(&hub, "full", 10, true), ["fits again"]);
}

#[test]
fn timestamps_never_go_back_in_id_order_even_when_the_clock_does() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0 + 10_000);
    let hub = db.hub_with(&clock, Limits::default());
    let first = hub.send(&req("a", "b", "first"), None).unwrap();
    clock.set(T0);
    let second = hub.send(&req("a", "b", "second"), None).unwrap();
    assert!(second.id > first.id);
    assert_eq!(
        second.timestamp, first.timestamp,
        "the hub's clock never steps back"
    );
    clock.set(T0 + 20_000);
    let third = hub.send(&req("a", "b", "third"), None).unwrap();
    assert_eq!(third.timestamp, "2026-01-01T00:00:20.000Z");
    let read = hub.inbox(&name("b"), 10, false, true).unwrap().messages;
    let stamps: Vec<_> = read.iter().map(|m| m.message.timestamp.clone()).collect();
    assert_eq!(
        stamps,
        [first.timestamp.clone(), first.timestamp, third.timestamp]
    );
}

/// The schema of the hub before the clock row existed, in SQLite's default journal mode.
fn old_database(db: &TestDb, ids: i64) {
    let conn = SqliteDb::open(&db.path());
    conn.conn()
        .execute_batch(&format!(
            "PRAGMA journal_mode=DELETE;
             CREATE TABLE hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL);
             CREATE TABLE hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL,
               sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
               created BIGINT NOT NULL, PRIMARY KEY (machine, id));
             CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
             INSERT INTO hub_counter VALUES ('ids', {ids});
             CREATE TABLE hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL,
               id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
               created BIGINT NOT NULL, PRIMARY KEY (sender, idem_key));"
        ))
        .unwrap();
}

fn journal_mode(db: &TestDb) -> String {
    SqliteDb::open(&db.path())
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn set_up_completes_an_older_database_and_turns_on_write_ahead_logging() {
    let db = TestDb::new();
    old_database(&db, 7);
    assert_eq!(journal_mode(&db), "delete");
    let sent = db
        .hub()
        .send(&req("a", "b", "after the upgrade"), None)
        .unwrap();
    assert_eq!(sent.id, 8, "ids go on from the old counter");
    assert_eq!(journal_mode(&db), "wal");
    assert_eq!(bodies(&db.hub(), "b", 5, true), ["after the upgrade"]);
}

#[test]
fn a_lost_counter_row_is_restored_after_the_largest_id_still_stored() {
    let db = TestDb::new();
    let hub = db.hub();
    for i in 0..3 {
        hub.send(
            &req("a", "b", &format!("m{i}")),
            Some(&key(&format!("k{i}"))),
        )
        .unwrap();
    }
    hub.inbox(&name("b"), 10, true, true).unwrap();
    // The messages are read and gone; the keys still hold their ids.
    let conn = SqliteDb::open(&db.path());
    conn.conn()
        .execute("DELETE FROM hub_counter WHERE name = 'ids'", [])
        .unwrap();
    let sent = hub.send(&req("a", "b", "after"), None).unwrap();
    assert_eq!(
        sent.id, 4,
        "the id after the largest stored, never one given before"
    );

    // A set-up that stopped after creating the counter table, before its rows.
    let fresh = TestDb::new();
    SqliteDb::open(&fresh.path())
        .conn()
        .execute_batch("CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL)")
        .unwrap();
    assert_eq!(fresh.hub().send(&req("a", "b", "x"), None).unwrap().id, 1);
}

#[test]
fn a_send_completes_a_set_up_that_stopped_between_the_view_and_its_trigger() {
    let db = TestDb::new();
    let hub = db.hub();
    hub.send(&req("a", "b", "first"), None).unwrap();
    // What a set-up of an earlier release left when it stopped after the view.
    SqliteDb::open(&db.path())
        .conn()
        .execute_batch("DROP TRIGGER hub_send_stores")
        .unwrap();
    let sent = db.hub().send(&req("a", "b", "second"), None).unwrap();
    assert_eq!(sent.id, 2);
    assert_eq!(bodies(&hub, "b", 10, true), ["first", "second"]);
}

/// A database of the first release: its messages gain what later ones added, each starting
/// its own thread, and replies join them.
#[test]
fn an_older_sqlite_schema_is_upgraded_in_place() {
    let db = TestDb::new();
    SqliteDb::open(&db.path())
        .conn()
        .execute_batch(&format!(
            "CREATE TABLE hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL); \
             CREATE TABLE hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL, \
               sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, \
               created BIGINT NOT NULL, PRIMARY KEY (machine, id)); \
             CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL); \
             CREATE TABLE hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL, \
               id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL, \
               created BIGINT NOT NULL, PRIMARY KEY (sender, idem_key)); \
             INSERT INTO hub_machines VALUES ('a', {T0}), ('b', {T0}); \
             INSERT INTO hub_counter VALUES ('ids', 2), ('clock', {T0}); \
             INSERT INTO hub_messages VALUES ('b', 1, 'a', 'b', 'old one', {T0}); \
             INSERT INTO hub_messages VALUES ('b', 2, 'a', 'b', 'old two', {T0}); \
             INSERT INTO hub_sends VALUES ('a', 'k-2', 2, 'b', 'old two', {T0});"
        ))
        .unwrap();
    let hub = db.hub_with(&ManualClock::at(T0), Limits::default());
    let old = hub.inbox(&name("b"), 10, false, true).unwrap().messages;
    let threads: Vec<_> = old
        .iter()
        .map(|m| (m.message.id, m.message.thread))
        .collect();
    assert_eq!(threads, [(1, 1), (2, 2)]);
    let reply = r#"{"from": "b", "to": "a", "body": "seen", "reply_to": 2}"#;
    let reply = hub
        .send(&SendRequest::from_json(reply.as_bytes()).unwrap(), None)
        .unwrap();
    assert_eq!((reply.id, reply.thread), (3, 2));
    let thread = MailboxQuery {
        limit: 10,
        thread: Some(2),
        ..MailboxQuery::default()
    };
    let in_thread = hub.mailbox(&name("b"), &thread).unwrap().messages;
    let in_thread: Vec<_> = in_thread.iter().map(|m| m.message.id).collect();
    assert_eq!(in_thread, [3, 2], "the old message is found by its thread");
    // The key kept from that release answers its message again, in its own thread.
    let again = hub
        .send(&req("a", "b", "old two"), Some(&key("k-2")))
        .unwrap();
    assert_eq!((again.id, again.thread), (2, 2));
}

#[test]
fn messages_of_a_release_before_full_text_search_are_found_once_set_up() {
    let db = TestDb::new();
    let hub = db.hub();
    hub.send(&req("a", "b", "alpha kept"), None).unwrap();
    hub.send(&req("a", "b", "beta kept"), None).unwrap();
    // That release had no index, nor the counters of how far it goes.
    SqliteDb::open(&db.path())
        .conn()
        .execute_batch(
            "DROP TABLE hub_search; \
             DELETE FROM hub_counter WHERE name IN ('indexed', 'indexed_at')",
        )
        .unwrap();
    let search = |word: &str| -> Vec<String> {
        let query = MailboxQuery {
            limit: 10,
            words: Some(dochub_hub::search_words(word).unwrap()),
            ..MailboxQuery::default()
        };
        let found = db.hub().mailbox(&name("b"), &query).unwrap().messages;
        found.into_iter().map(|m| m.message.body).collect()
    };
    assert_eq!(search("alpha"), ["alpha kept"]);
    hub.send(&req("a", "b", "alpha new"), None).unwrap();
    assert_eq!(search("alpha"), ["alpha new", "alpha kept"]);
    assert_eq!(search("beta"), ["beta kept"]);
}

#[test]
fn the_hub_takes_no_new_machine_beyond_hub_max_machines() {
    let db = TestDb::new();
    let limits = Limits {
        max_machines: 3,
        ..Limits::default()
    };
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(&clock, limits);
    hub.send(&req("a", "b", "hello"), None).unwrap();
    hub.inbox(&name("c"), 1, true, true).unwrap();
    let full =
        |e: HubError| matches!(&e, HubError::MachinesFull(m) if m.contains("hub_max_machines"));
    assert!(full(
        hub.send(&req("d", "b", "new sender"), None).unwrap_err()
    ));
    assert!(full(
        hub.send(&req("a", "e", "new recipient"), None).unwrap_err()
    ));
    assert!(full(hub.inbox(&name("f"), 1, true, true).unwrap_err()));
    // Known machines go on as before; an anonymous peek registers nothing.
    hub.send(&req("c", "b", "again"), None).unwrap();
    hub.send(&req("a", "all", "everyone"), None).unwrap();
    assert!(
        hub.inbox(&name("g"), 1, false, false)
            .unwrap()
            .messages
            .is_empty()
    );
    // `b` was named as a recipient but never seen: it gets no broadcasts until it reads.
    assert_eq!(bodies(&hub, "b", 10, true), ["hello", "again"]);
    assert_eq!(bodies(&hub, "c", 10, true), ["everyone"]);
    // A machine without messages, unseen for the retention period, is forgotten.
    clock.advance(Limits::default().retention_ms + 1);
    hub.send(&req("a", "e", "room again"), None).unwrap();
    assert_eq!(bodies(&hub, "e", 10, true), ["room again"]);
}

#[test]
fn unread_messages_and_silent_machines_expire_after_the_retention_period() {
    let db = TestDb::new();
    let day = 24 * 60 * 60 * 1000;
    let limits = Limits::from_variables(|name| {
        if name == "hub_retention_days" {
            "2".to_owned()
        } else {
            String::new()
        }
    })
    .unwrap();
    assert_eq!(limits.retention_ms, 2 * day);
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(&clock, limits);
    hub.inbox(&name("gone"), 1, true, true).unwrap();
    hub.send(&req("a", "b", "old"), None).unwrap();
    clock.advance(day);
    hub.inbox(&name("alive"), 1, true, true).unwrap();
    hub.send(&req("a", "b", "newer"), None).unwrap();
    clock.advance(day + 1);
    // "old" is past two days: never returned, even before a send purges it.
    assert_eq!(bodies(&hub, "b", 10, false), ["newer"]);
    assert_eq!(
        names(&hub),
        ["a", "alive", "b"],
        "`gone`, unseen for two days, is dropped"
    );
    hub.send(&req("a", "all", "who is there"), None).unwrap();
    assert_eq!(bodies(&hub, "alive", 10, true), ["who is there"]);
    assert!(
        bodies(&hub, "gone", 10, true).is_empty(),
        "dropped out of broadcasts"
    );
    let old: i64 = SqliteDb::open(&db.path())
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM hub_messages WHERE body = 'old'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old, 0, "the expired message was purged by the send");
}

/// An expired message has left the inbox before a purge deletes it: acknowledging through its
/// id marks and counts only what the inbox still holds.
#[test]
fn acknowledging_counts_only_messages_still_in_the_inbox() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(&clock, Limits::default());
    let old = hub.send(&req("a", "b", "old"), None).unwrap();
    clock.advance(Limits::default().retention_ms);
    let kept = hub.send(&req("a", "b", "kept"), None).unwrap();
    clock.advance(1);
    assert!(old.id < kept.id);
    assert_eq!(hub.acknowledge(&name("b"), kept.id).unwrap(), 1);
    assert_eq!(hub.acknowledge(&name("b"), kept.id).unwrap(), 0);
    let read: i64 = SqliteDb::open(&db.path())
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM hub_messages WHERE machine = 'b' AND read_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(read, 1, "the expired one stays unread until the purge");
}

/// Rows of `machine`'s inbox still on disk (expired or not) holding one of `bodies`.
fn stored(db: &TestDb, machine: &str, bodies: &[&str]) -> i64 {
    let list = bodies
        .iter()
        .map(|b| format!("'{b}'"))
        .collect::<Vec<_>>()
        .join(", ");
    SqliteDb::open(&db.path())
        .conn()
        .query_row(
            &format!("SELECT COUNT(*) FROM hub_messages WHERE machine = ?1 AND body IN ({list})"),
            [machine],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn expired_rows_wait_for_a_purge_a_minute_apart_and_take_no_room_meanwhile() {
    let db = TestDb::new();
    let day = 24 * 60 * 60 * 1000;
    let limits = Limits::from_variables(|name| match name {
        "hub_retention_days" => "1".to_owned(),
        "hub_max_unread" => "2".to_owned(),
        "hub_max_machines" => "3".to_owned(),
        _ => String::new(),
    })
    .unwrap();
    let clock = ManualClock::at(T0);
    let hub = db.hub_with(&clock, limits);
    hub.inbox(&name("silent"), 1, false, true).unwrap();
    let one = hub.send(&req("a", "b", "one"), Some(&key("k"))).unwrap();
    hub.send(&req("a", "b", "two"), None).unwrap();
    assert!(matches!(
        hub.send(&req("a", "b", "full"), None),
        Err(HubError::InboxFull(_))
    ));
    // A send just before they expire purges (the last purge is a day old) and finds nothing.
    clock.advance(day - 1_000);
    hub.send(&req("a", "a", "note to self"), None).unwrap();
    clock.advance(2_000);
    // Now "one" and "two" have expired, and the next purge is a minute away.
    hub.send(&req("a", "b", "three"), None)
        .expect("expired messages take no room in the inbox");
    assert_eq!(
        stored(&db, "b", &["one", "two"]),
        2,
        "no purge within a minute of the last"
    );
    assert_eq!(bodies(&hub, "b", 10, false), ["three"]);
    let mut reply = req("a", "b", "re: one");
    reply.reply_to = Some(one.id);
    assert!(matches!(hub.send(&reply, None), Err(HubError::NotFound(_))));
    // The key's record is more than a day old: the key is free again.
    let again = hub.send(&req("a", "b", "four"), Some(&key("k"))).unwrap();
    assert!(again.id > one.id);
    assert_eq!(bodies(&hub, "b", 10, false), ["three", "four"]);
    // Three machines are known, and `silent` has expired: a new name purges and takes its place.
    hub.inbox(&name("new"), 1, false, true)
        .expect("an expired machine's place is free");
    assert_eq!(names(&hub), ["a", "b", "new"]);
    assert_eq!(stored(&db, "b", &["one", "two"]), 0, "purged to make room");
}

/// A reused instance reads `Limits::VARIABLES` ahead and answers `from_variables` from them:
/// a variable read that the list lacks would be answered as unset, its default.
#[test]
fn limits_read_exactly_the_variables_they_list() {
    let read = std::cell::RefCell::new(Vec::new());
    Limits::from_variables(|name| {
        read.borrow_mut().push(name.to_owned());
        String::new()
    })
    .unwrap();
    let mut read = read.into_inner();
    read.sort();
    let mut listed = Limits::VARIABLES.map(str::to_owned).to_vec();
    listed.sort();
    assert_eq!(read, listed);
}

#[test]
fn limits_come_from_variables_with_documented_defaults() {
    let parse = |vars: &[(&str, &str)]| {
        Limits::from_variables(|name| {
            let value = vars.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            value.unwrap_or_default().to_owned()
        })
    };
    assert_eq!(parse(&[]).unwrap(), Limits::default());
    assert_eq!(Limits::default().max_unread, 10_000);
    assert_eq!(Limits::default().max_machines, 10_000);
    assert_eq!(Limits::default().retention_ms, 30 * 24 * 60 * 60 * 1000);
    assert_eq!(parse(&[("hub_max_unread", " 20 ")]).unwrap().max_unread, 20);
    assert_eq!(parse(&[("hub_max_machines", "3")]).unwrap().max_machines, 3);
    for bad in [
        ("hub_max_unread", "0"),
        ("hub_max_unread", "x"),
        ("hub_max_machines", "0"),
        ("hub_retention_days", "0"),
        ("hub_retention_days", "-1"),
        ("hub_retention_days", "36501"),
    ] {
        let err = parse(&[bad]).unwrap_err();
        assert!(
            matches!(&err, HubError::Config(m) if m.contains(bad.0)),
            "{bad:?}: {err}"
        );
    }
}

#[test]
fn everything_survives_a_new_connection() {
    let db = TestDb::new();
    {
        let hub = db.hub();
        for i in 0..4 {
            hub.send(&req("a", "b", &format!("m{i}")), None).unwrap();
        }
        assert_eq!(bodies(&hub, "b", 2, true), ["m0", "m1"]);
    }
    let hub = db.hub();
    assert_eq!(bodies(&hub, "b", 10, true), ["m2", "m3"]);
    assert_eq!(hub.send(&req("a", "b", "after"), None).unwrap().id, 5);
    assert_eq!(names(&hub), ["a", "b"]);
}

/// 8 senders × 250 messages to one inbox, each on its own connection: all 2,000 delivered once,
/// each sender's in its order, ids increasing in the inbox.
#[test]
fn concurrent_senders_lose_nothing_and_keep_their_order() {
    let db = Arc::new(TestDb::new());
    db.hub().machines().unwrap();
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|s| {
            let (db, barrier) = (db.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..250 {
                    let hub = db.hub();
                    hub.send(&req(&format!("s{s}"), "target", &format!("s{s}:{n}")), None)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let got = db.hub().inbox(&name("target"), 500, false, true).unwrap();
    assert_eq!(got.messages.len(), 500);
    let mut all = Vec::new();
    loop {
        let batch = db
            .hub()
            .inbox(&name("target"), 500, true, true)
            .unwrap()
            .messages;
        if batch.is_empty() {
            break;
        }
        all.extend(batch.into_iter().map(|m| m.message));
    }
    assert_eq!(all.len(), 2000);
    assert!(
        all.windows(2).all(|w| w[0].id < w[1].id),
        "ids increase in the inbox"
    );
    let mut next: BTreeMap<String, usize> = BTreeMap::new();
    for m in &all {
        let (from, n) = m.body.rsplit_once(':').unwrap();
        let expected = next.entry(from.to_owned()).or_default();
        assert_eq!(
            n.parse::<usize>().unwrap(),
            *expected,
            "{from} out of order"
        );
        *expected += 1;
    }
}

/// Fresh machines, each read by 4 concurrent acknowledging readers on their own connections,
/// first reads included: no message is returned twice, none is lost.
#[test]
fn concurrent_first_acknowledging_readers_never_share_a_message() {
    let db = Arc::new(TestDb::new());
    let hub = db.hub();
    let machines: Vec<String> = (0..20).map(|i| format!("fresh-{i}")).collect();
    for m in &machines {
        for n in 0..6 {
            hub.send(&req("filler", m, &format!("{m}/{n}")), None)
                .unwrap();
        }
    }
    let barrier = Arc::new(Barrier::new(4));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (db, barrier, machines) = (db.clone(), barrier.clone(), machines.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut got = Vec::new();
                for m in &machines {
                    loop {
                        let batch = db.hub().inbox(&name(m), 2, true, true).unwrap().messages;
                        if batch.is_empty() {
                            break;
                        }
                        got.extend(batch.into_iter().map(|m| m.message.body));
                    }
                }
                got
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for r in readers {
        for body in r.join().unwrap() {
            assert!(seen.insert(body.clone()), "{body} delivered twice");
        }
    }
    assert_eq!(seen.len(), machines.len() * 6);
}

/// Machines register while broadcasts go out: none is lost from the list, none gets a broadcast
/// twice, and each gets every broadcast whose send started after its registration returned.
#[test]
fn registration_racing_broadcasts_loses_no_machine_and_duplicates_nothing() {
    let db = Arc::new(TestDb::new());
    db.hub().inbox(&name("caster"), 1, true, true).unwrap();
    let registrars: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut registered = Vec::new();
                for i in 0..15 {
                    let m = format!("r{t}-{i}");
                    db.hub().inbox(&name(&m), 1, true, true).unwrap();
                    registered.push((m, Instant::now()));
                }
                registered
            })
        })
        .collect();
    let caster = {
        let db = db.clone();
        std::thread::spawn(move || {
            (0..30)
                .map(|i| {
                    let started = Instant::now();
                    let sent = db.hub().send(&req("caster", "all", &format!("b{i}")), None);
                    (sent.unwrap().id, started)
                })
                .collect::<Vec<_>>()
        })
    };
    let broadcasts = caster.join().unwrap();
    let registered: Vec<(String, Instant)> = registrars
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let listed: HashSet<String> = names(&db.hub()).into_iter().collect();
    for (m, at) in &registered {
        assert!(listed.contains(m), "{m} lost from /machines");
        let got: Vec<u64> = db
            .hub()
            .inbox(&name(m), 500, true, true)
            .unwrap()
            .messages
            .into_iter()
            .map(|x| x.message.id)
            .collect();
        let unique: HashSet<u64> = got.iter().copied().collect();
        assert_eq!(unique.len(), got.len(), "{m} got a broadcast twice");
        for (id, _) in broadcasts.iter().filter(|(_, started)| started > at) {
            assert!(
                unique.contains(id),
                "{m} missed broadcast {id} sent after it registered"
            );
        }
    }
}

#[test]
fn forty_first_senders_on_a_fresh_database_all_get_an_answer() {
    for _ in 0..5 {
        let db = TestDb::new();
        let limits = Limits {
            max_unread: 5,
            ..Limits::default()
        };
        let barrier = Arc::new(Barrier::new(40));
        let results: Vec<_> = (0..40)
            .map(|i| {
                let (path, barrier) = (db.path(), barrier.clone());
                std::thread::spawn(move || {
                    let hub =
                        Hub::with_clock(SqliteDb::open(&path), dochub_hub::SystemClock, limits);
                    barrier.wait();
                    hub.send(&req(&format!("s{i}"), "capped", "m"), None)
                })
            })
            .collect();
        let mut stored = 0;
        for r in results {
            match r.join().unwrap() {
                Ok(_) => stored += 1,
                Err(HubError::InboxFull(_)) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
        assert_eq!(stored, 5);
    }
}

/// Spin opens a new connection for every request, so each statement is compiled at every use;
/// SQLite compiles one again at its first step when the plan depends on a bound value (a bare
/// `LIMIT $n` did), which doubled that cost for sends and inbox reads.
#[test]
fn no_statement_of_a_send_or_a_read_is_compiled_twice() {
    let db = TestDb::new();
    db.hub().send(&req("ana", "bob", "first"), None).unwrap();
    // One connection per request, as under Spin; what each compiled again.
    let recompiles = |request: &dyn Fn(&Hub<SqliteDb>)| {
        let hub = db.hub();
        request(&hub);
        hub.db().recompiles()
    };
    let search = MailboxQuery {
        limit: 10,
        words: Some(dochub_hub::search_words("second").unwrap()),
        ..MailboxQuery::default()
    };
    type Request<'a> = (&'a str, &'a dyn Fn(&Hub<SqliteDb>));
    let requests: [Request; 7] = [
        ("a send", &|hub| {
            hub.send(&req("ana", "bob", "second"), None).unwrap();
        }),
        ("a send with a key", &|hub| {
            hub.send(&req("ana", "bob", "third"), Some(&key("k-1")))
                .unwrap();
        }),
        ("a broadcast", &|hub| {
            hub.send(&req("bob", "all", "to all"), None).unwrap();
        }),
        ("an inbox read", &|hub| {
            assert_eq!(bodies(hub, "bob", 10, false), ["first", "second", "third"]);
        }),
        ("an acknowledging read", &|hub| {
            assert_eq!(bodies(hub, "bob", 1, true), ["first"]);
        }),
        ("a mailbox", &|hub| {
            assert_eq!(
                hub.mailbox(&name("ana"), &mailbox(10))
                    .unwrap()
                    .messages
                    .len(),
                4
            );
        }),
        ("a mailbox search", &|hub| {
            assert_eq!(
                hub.mailbox(&name("bob"), &search).unwrap().messages.len(),
                1
            );
        }),
    ];
    for (what, request) in requests {
        assert_eq!(recompiles(request), 0, "{what}");
    }
}

/// Statements a send on a new connection runs (each one a call into the host under Spin),
/// after the connection's own set-up.
fn statements_of(hub: &Hub<SqliteDb, ManualClock>, request: &SendRequest, k: Option<&str>) -> u64 {
    hub.db().answer_busy_at_once().unwrap();
    let before = hub.db().statements();
    let key = k.map(key);
    hub.send(request, key.as_ref()).unwrap();
    hub.db().statements() - before
}

/// A send that needs nothing written but its message is one statement: the sender and the
/// recipient are known, no purge is due, its key is new, the message it replies to is there.
/// One that needs more takes the steps, and both store and answer alike.
#[test]
fn a_send_that_needs_only_its_message_is_one_statement() {
    let db = TestDb::new();
    let clock = ManualClock::at(T0);
    let hub = || db.hub_with(&clock, Limits::default());
    let root = hub().send(&req("ana", "bob", "root"), None).unwrap();
    hub().send(&req("bob", "ana", "hello"), None).unwrap();
    clock.advance(5);
    let mut reply = req("bob", "ana", "a reply");
    reply.reply_to = Some(root.id);
    let mut subject = req("ana", "bob", "with a subject");
    subject.subject = Some("build 412".to_owned());
    for (what, request, k) in [
        ("a send", req("ana", "bob", "plain"), None),
        (
            "a send with a new key",
            req("ana", "bob", "keyed"),
            Some("k-1"),
        ),
        ("a broadcast", req("bob", "all", "to all"), None),
        ("a reply", reply, None),
        ("a send to itself", req("ana", "ana", "a note"), None),
        ("a subject", subject, None),
    ] {
        assert_eq!(statements_of(&hub(), &request, k), 1, "{what}");
    }
    // A sender at its cap of read messages is trimmed in the same statement.
    let capped = Limits {
        max_read: 2,
        ..Limits::default()
    };
    let ben = Hub::with_clock(SqliteDb::open(&db.path()), clock.clone(), capped);
    for body in ["b1", "b2", "b3"] {
        assert_eq!(
            statements_of(&ben, &req("bob", "ana", body), None),
            1,
            "{body}"
        );
    }
    let kept: Vec<String> = ben
        .mailbox(&name("bob"), &mailbox(50))
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.read)
        .map(|m| m.message.body)
        .collect();
    assert_eq!(kept, ["b3", "b2"], "bob keeps its two newest read messages");
    // Steps: a new recipient, a key used before, a purge due.
    for (what, request, k) in [
        ("a new recipient", req("ana", "cyd", "welcome"), None),
        ("a retry", req("ana", "bob", "keyed"), Some("k-1")),
    ] {
        assert!(statements_of(&hub(), &request, k) > 1, "{what}");
    }
    clock.advance(61_000);
    assert!(
        statements_of(&hub(), &req("ana", "bob", "later"), None) > 1,
        "a purge due"
    );

    let bob = hub().inbox(&name("bob"), 50, false, true).unwrap();
    let got: Vec<(&str, u64, Option<&str>)> = bob
        .messages
        .iter()
        .map(|m| {
            (
                m.message.body.as_str(),
                m.message.thread,
                m.message.subject.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("root", 1, None),
            ("plain", 3, None),
            ("keyed", 4, None),
            ("with a subject", 8, Some("build 412")),
            ("later", 13, None),
        ],
        "one copy each, the retry none, in id order, each its own thread"
    );
    let ana = hub().inbox(&name("ana"), 50, false, true).unwrap();
    let replied = ana.messages.iter().find(|m| m.message.body == "a reply");
    assert_eq!(
        replied.map(|m| (m.message.thread, m.message.reply_to)),
        Some((root.id, Some(root.id))),
        "a reply joins the thread of the message it answers"
    );
    assert!(ana.messages.iter().any(|m| m.message.body == "to all"));
    assert!(ana.messages.iter().any(|m| m.message.body == "a note"));
    let sent = hub()
        .mailbox(&name("ana"), &mailbox(50))
        .unwrap()
        .messages
        .into_iter()
        .filter(|m| m.message.from == "ana" && m.message.to != "ana")
        .count();
    assert_eq!(
        sent, 6,
        "the sender keeps a read copy of each message to others"
    );
    let timestamps: Vec<String> = (bob.messages.iter().chain(&ana.messages))
        .map(|m| m.message.timestamp.clone())
        .collect();
    assert!(timestamps.iter().all(|t| t.starts_with("2026-01-01T00:")));
}
