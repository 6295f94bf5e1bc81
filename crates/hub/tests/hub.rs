//! The hub's store logic on the in-memory store: delivery, ack, broadcast, registration, bounded
//! keys, crash leftovers, and concurrent senders and readers.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use dochub_hub::{
    Clock, GAP_GRACE_MS, Hub, HubError, KeyValue, MachineName, MemoryStore, SEEN_EVERY_MS,
    SEND_DEADLINE_MS, SendRequest, StoreError,
};

const T0: i64 = 1_767_323_045_678; // 2026-01-02T03:04:05.678Z

#[derive(Debug)]
struct ManualClock(AtomicI64);

impl ManualClock {
    fn new() -> Arc<Self> {
        Arc::new(Self(AtomicI64::new(T0)))
    }
    fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn name(n: &str) -> MachineName {
    MachineName::parse(n, "machine").unwrap()
}

fn req(from: &str, to: &str, body: &str) -> SendRequest {
    let json = serde_json::json!({ "from": from, "to": to, "body": body });
    SendRequest::from_json(json.to_string().as_bytes()).unwrap()
}

fn bodies<S: KeyValue, C: Clock>(hub: &Hub<S, C>, m: &str, limit: usize, ack: bool) -> Vec<String> {
    hub.inbox(&name(m), limit, ack)
        .unwrap()
        .messages
        .into_iter()
        .map(|m| m.message.body)
        .collect()
}

fn message_keys(store: &MemoryStore) -> Vec<String> {
    store
        .keys()
        .into_iter()
        .filter(|k| k.starts_with("hub:msg:"))
        .collect()
}

#[test]
fn a_message_sent_is_read_once_with_ack() {
    let clock = ManualClock::new();
    let hub = Hub::with_clock(MemoryStore::new(), clock.clone());
    let sent = hub
        .send(&req("laptop", "ci-runner", "build 412 is green"))
        .unwrap();
    assert_eq!(sent.id, 1);
    assert_eq!(sent.from, "laptop");
    assert_eq!(sent.to, "ci-runner");
    assert_eq!(sent.timestamp, "2026-01-02T03:04:05.678Z");

    // Without ack the same unread messages come back, marked unread.
    for _ in 0..2 {
        let inbox = hub.inbox(&name("ci-runner"), 50, false).unwrap();
        assert_eq!(inbox.machine, "ci-runner");
        assert_eq!(inbox.messages.len(), 1);
        assert_eq!(inbox.messages[0].message, sent);
        assert!(!inbox.messages[0].read);
    }
    let inbox = hub.inbox(&name("ci-runner"), 50, true).unwrap();
    assert_eq!(inbox.messages.len(), 1);
    assert_eq!(inbox.messages[0].message, sent);
    assert!(inbox.messages[0].read);
    assert!(
        hub.inbox(&name("ci-runner"), 50, true)
            .unwrap()
            .messages
            .is_empty()
    );
    assert!(
        hub.inbox(&name("ci-runner"), 50, false)
            .unwrap()
            .messages
            .is_empty()
    );
    assert!(message_keys(hub.store()).is_empty());
}

#[test]
fn limit_returns_the_oldest_first_and_ack_moves_on() {
    let hub = Hub::new(MemoryStore::new());
    for i in 1..=5 {
        hub.send(&req("a", "b", &format!("m{i}"))).unwrap();
    }
    assert_eq!(bodies(&hub, "b", 2, false), ["m1", "m2"]);
    assert_eq!(bodies(&hub, "b", 2, true), ["m1", "m2"]);
    assert_eq!(bodies(&hub, "b", 2, false), ["m3", "m4"]);
    assert_eq!(bodies(&hub, "b", 10, true), ["m3", "m4", "m5"]);
    assert!(bodies(&hub, "b", 10, true).is_empty());
    hub.send(&req("a", "b", "m6")).unwrap();
    assert_eq!(bodies(&hub, "b", 1, true), ["m6"]);
}

#[test]
fn ids_increase_across_inboxes() {
    let hub = Hub::new(MemoryStore::new());
    let ids: Vec<u64> = ["x", "y", "x", "z"]
        .iter()
        .map(|to| hub.send(&req("a", to, "hi")).unwrap().id)
        .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
}

#[test]
fn broadcast_reaches_every_machine_registered_at_send_time_but_the_sender() {
    let hub = Hub::new(MemoryStore::new());
    for m in ["b", "c", "d"] {
        hub.inbox(&name(m), 50, false).unwrap();
    }
    let sent = hub.send(&req("a", "all", "to everyone")).unwrap();
    assert_eq!(sent.to, "all");
    hub.inbox(&name("late"), 50, false).unwrap();
    for m in ["b", "c", "d"] {
        let inbox = hub.inbox(&name(m), 50, true).unwrap();
        assert_eq!(inbox.messages.len(), 1, "{m}");
        assert_eq!(inbox.messages[0].message, sent);
    }
    assert!(bodies(&hub, "a", 50, true).is_empty());
    assert!(bodies(&hub, "late", 50, true).is_empty());
    // The sender registered itself: the next broadcast from b reaches a.
    hub.send(&req("b", "all", "second")).unwrap();
    for m in ["a", "c", "d", "late"] {
        assert_eq!(bodies(&hub, m, 50, true), ["second"], "{m}");
    }
    assert!(bodies(&hub, "b", 50, true).is_empty());
}

#[test]
fn machines_are_registered_by_sending_or_reading_not_by_being_sent_to() {
    let clock = ManualClock::new();
    let hub = Hub::with_clock(MemoryStore::new(), clock.clone());
    assert!(hub.machines().unwrap().is_empty());
    hub.send(&req("zeta", "nobody", "x")).unwrap();
    clock.advance(2_000);
    hub.inbox(&name("alpha"), 50, false).unwrap();
    let machines = hub.machines().unwrap();
    let listed: Vec<(&str, &str)> = machines
        .iter()
        .map(|m| (m.name.as_str(), m.last_seen.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("alpha", "2026-01-02T03:04:07.678Z"),
            ("zeta", "2026-01-02T03:04:05.678Z")
        ]
    );

    // last_seen moves when the machine shows up again, at most once per SEEN_EVERY_MS.
    clock.advance(SEEN_EVERY_MS - 1);
    hub.send(&req("alpha", "zeta", "x")).unwrap();
    assert_eq!(
        hub.machines().unwrap()[0].last_seen,
        "2026-01-02T03:04:07.678Z"
    );
    clock.advance(1);
    hub.inbox(&name("alpha"), 1, false).unwrap();
    assert_eq!(
        hub.machines().unwrap()[0].last_seen,
        "2026-01-02T03:04:08.678Z"
    );
}

#[test]
fn keys_stay_bounded_by_the_backlog_and_the_machines() {
    let hub = Hub::new(MemoryStore::new());
    for round in 0..5 {
        for i in 0..200 {
            hub.send(&req("a", "b", &format!("{round}-{i}"))).unwrap();
        }
        assert_eq!(message_keys(hub.store()).len(), 200);
        let mut got = 0;
        loop {
            let n = bodies(&hub, "b", 37, true).len();
            if n == 0 {
                break;
            }
            got += n;
        }
        assert_eq!(got, 200);
        assert!(message_keys(hub.store()).is_empty());
    }
    // registry, ids, seen:a, seen:b, head:b, read:b, gc:b
    assert_eq!(hub.store().len(), 7, "{:?}", hub.store().keys());
}

#[test]
fn a_sender_that_died_after_allocating_blocks_readers_only_for_the_grace_period() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryStore::new());
    let hub = Hub::with_clock(store.clone(), clock.clone());
    hub.send(&req("a", "b", "before")).unwrap();
    // A sender allocates number 2 and dies before writing it.
    assert_eq!(store.increment("hub:head:b", 1).unwrap(), 2);
    hub.send(&req("a", "b", "after")).unwrap();

    // Order is kept: nothing after the gap is returned while its sender may still write it.
    assert_eq!(bodies(&hub, "b", 50, true), ["before"]);
    assert!(bodies(&hub, "b", 50, true).is_empty());
    clock.advance(GAP_GRACE_MS - 1);
    assert!(bodies(&hub, "b", 50, false).is_empty());
    clock.advance(1);
    assert_eq!(bodies(&hub, "b", 50, false), ["after"]);
    assert_eq!(bodies(&hub, "b", 50, true), ["after"]);
    assert!(message_keys(&store).is_empty(), "{:?}", store.keys());
}

#[test]
fn a_slow_sender_is_waited_for_and_its_message_arrives_in_place() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryStore::new());
    let hub = Hub::with_clock(store.clone(), clock.clone());
    // A sender allocated 1 and is still writing; message 2 lands meanwhile.
    store.increment("hub:head:b", 1).unwrap();
    hub.send(&req("a", "b", "second")).unwrap();
    assert!(bodies(&hub, "b", 50, true).is_empty());
    // Its message lands (as the hub writes it), within the deadline.
    let late = serde_json::json!({"id": 99, "from": "a", "to": "b", "body": "first",
        "timestamp": "2026-01-02T03:04:05.678Z", "at": T0});
    store
        .set("hub:msg:b:1", late.to_string().as_bytes())
        .unwrap();
    assert_eq!(bodies(&hub, "b", 50, true), ["first", "second"]);
}

/// A store that runs `hook` once, at the first compare-and-swap on a message slot.
struct Hooked<F: Fn(&MemoryStore)> {
    inner: MemoryStore,
    hook: F,
    done: AtomicBool,
}

impl<F: Fn(&MemoryStore)> KeyValue for Hooked<F> {
    type Cas = <MemoryStore as KeyValue>::Cas;
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
    }
    fn delete(&self, key: &str) -> Result<(), StoreError> {
        self.inner.delete(key)
    }
    fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.inner.list_keys(prefix)
    }
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        self.inner.increment(key, delta)
    }
    fn cas_begin(&self, key: &str) -> Result<(Self::Cas, Option<Vec<u8>>), StoreError> {
        if key.starts_with("hub:msg:") && !self.done.swap(true, Ordering::SeqCst) {
            (self.hook)(&self.inner);
        }
        self.inner.cas_begin(key)
    }
    fn cas_swap(&self, cas: Self::Cas, value: &[u8]) -> Result<bool, StoreError> {
        self.inner.cas_swap(cas, value)
    }
}

#[test]
fn a_sender_past_its_deadline_gives_its_number_up_and_takes_another() {
    let clock = ManualClock::new();
    // The first write of a message slot comes after the send deadline.
    let store = Hooked {
        inner: MemoryStore::new(),
        hook: |_: &MemoryStore| clock.advance(SEND_DEADLINE_MS + 1),
        done: AtomicBool::new(false),
    };
    let hub = Hub::with_clock(&store, clock.clone());
    hub.send(&req("a", "b", "slow")).unwrap();
    assert_eq!(
        store.inner.get("hub:msg:b:1").unwrap().as_deref(),
        Some(&b"~"[..])
    );
    assert!(store.inner.get("hub:msg:b:2").unwrap().is_some());
    // Readers skip the given-up number at once, and delete it with the message.
    assert_eq!(bodies(&hub, "b", 50, true), ["slow"]);
    assert!(message_keys(&store.inner).is_empty());
}

#[test]
fn slots_left_by_a_reader_that_died_after_claiming_are_deleted_later() {
    let hub = Hub::new(MemoryStore::new());
    for i in 0..3 {
        hub.send(&req("a", "b", &format!("lost{i}"))).unwrap();
    }
    // A reader claims 1..=3 and dies before deleting them.
    hub.store().set("hub:read:b", b"3").unwrap();
    assert_eq!(message_keys(hub.store()).len(), 3);
    hub.send(&req("a", "b", "next")).unwrap();
    assert_eq!(bodies(&hub, "b", 50, true), ["next"]);
    assert!(
        message_keys(hub.store()).is_empty(),
        "{:?}",
        hub.store().keys()
    );
}

#[test]
fn counters_written_as_spin_sqlite_does_are_read() {
    let hub = Hub::new(MemoryStore::new());
    hub.send(&req("a", "b", "one")).unwrap();
    // Spin's SQLite store keeps counters as 8 little-endian bytes; a cursor written by anyone
    // else is decimal. Both decode.
    assert_eq!(
        hub.store().get("hub:head:b").unwrap().as_deref(),
        Some(&b"1"[..])
    );
    hub.store().set("hub:read:b", &0i64.to_le_bytes()).unwrap();
    assert_eq!(bodies(&hub, "b", 50, true), ["one"]);
}

#[test]
fn a_broken_registry_is_a_store_error_not_a_panic() {
    let hub = Hub::new(MemoryStore::new());
    hub.store().set("hub:machines", b"{not json").unwrap();
    assert!(matches!(hub.machines(), Err(HubError::Store(_))));
    assert!(matches!(
        hub.send(&req("a", "b", "x")),
        Err(HubError::Store(_))
    ));
}

/// 8 senders × 250 messages to one inbox, read by one reader afterwards: all delivered once, each
/// sender's in its order.
#[test]
fn concurrent_senders_lose_nothing_and_keep_their_order() {
    let hub = Hub::new(Arc::new(MemoryStore::new()));
    std::thread::scope(|s| {
        for sender in 0..8 {
            let hub = &hub;
            s.spawn(move || {
                for i in 0..250 {
                    hub.send(&req(
                        &format!("s{sender}"),
                        "inbox",
                        &format!("{sender}:{i}"),
                    ))
                    .unwrap();
                }
            });
        }
    });
    let mut next = [0usize; 8];
    let mut total = 0;
    loop {
        let batch = bodies(&hub, "inbox", 500, true);
        if batch.is_empty() {
            break;
        }
        for body in batch {
            let (sender, i) = body.split_once(':').unwrap();
            let (sender, i): (usize, usize) = (sender.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, next[sender], "sender {sender} out of order");
            next[sender] += 1;
            total += 1;
        }
    }
    assert_eq!(total, 2000);
    assert!(message_keys(hub.store()).is_empty());
}

/// 4 acknowledging readers drain one inbox while 4 senders fill it: every message is received by
/// exactly one reader, and each reader sees each sender's messages in order.
#[test]
fn concurrent_acknowledging_readers_never_share_a_message() {
    let hub = Hub::new(Arc::new(MemoryStore::new()));
    const SENDERS: usize = 4;
    const EACH: usize = 300;
    let done = AtomicBool::new(false);
    let received: Vec<Vec<String>> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (hub, done) = (&hub, &done);
                s.spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        // Read the flag before reading, so the last read happens after all sends.
                        let finished = done.load(Ordering::SeqCst);
                        let batch = bodies(hub, "inbox", 7, true);
                        if batch.is_empty() && finished {
                            return got;
                        }
                        // A reader without ack may run alongside: it must not disturb anything.
                        hub.inbox(&name("inbox"), 3, false).unwrap();
                        got.extend(batch);
                    }
                })
            })
            .collect();
        let senders: Vec<_> = (0..SENDERS)
            .map(|sender| {
                let hub = &hub;
                s.spawn(move || {
                    for i in 0..EACH {
                        hub.send(&req("w", "inbox", &format!("{sender}:{i}")))
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in senders {
            t.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
        readers.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut seen = HashSet::new();
    for got in &received {
        let mut last: BTreeMap<&str, usize> = BTreeMap::new();
        for body in got {
            assert!(seen.insert(body.clone()), "{body} received twice");
            let (sender, i) = body.split_once(':').unwrap();
            let i: usize = i.parse().unwrap();
            if let Some(prev) = last.insert(sender, i) {
                assert!(prev < i, "a reader saw {sender}'s messages out of order");
            }
        }
    }
    assert_eq!(seen.len(), SENDERS * EACH);
    assert!(
        message_keys(hub.store()).is_empty(),
        "{:?}",
        hub.store().keys().len()
    );
}

/// Broadcasts from several machines at once reach every other machine exactly once.
#[test]
fn concurrent_broadcasts_reach_everyone_once() {
    let hub = Hub::new(Arc::new(MemoryStore::new()));
    let machines: Vec<String> = (0..6).map(|i| format!("m{i}")).collect();
    for m in &machines {
        hub.inbox(&name(m), 1, false).unwrap();
    }
    std::thread::scope(|s| {
        for m in &machines {
            let hub = &hub;
            s.spawn(move || {
                for i in 0..20 {
                    hub.send(&req(m, "all", &format!("{m}:{i}"))).unwrap();
                }
            });
        }
    });
    for m in &machines {
        let got = bodies(&hub, m, 500, true);
        assert_eq!(got.len(), 5 * 20, "{m}");
        assert!(got.iter().all(|b| !b.starts_with(&format!("{m}:"))));
        assert_eq!(got.iter().collect::<HashSet<_>>().len(), got.len());
    }
}

#[test]
fn compact_deletes_only_slots_at_or_below_the_cursor() {
    let hub = Hub::new(MemoryStore::new());
    for i in 0..4 {
        hub.send(&req("a", "b", &format!("m{i}"))).unwrap();
    }
    hub.send(&req("a", "b1", "another inbox")).unwrap();
    assert_eq!(bodies(&hub, "b", 2, true), ["m0", "m1"]);
    // Leftovers a crash could leave: a late tombstone below the cursor.
    hub.store().set("hub:msg:b:1", b"~").unwrap();
    assert_eq!(hub.compact(&name("b")).unwrap(), 1);
    assert_eq!(hub.compact(&name("b")).unwrap(), 0);
    assert_eq!(
        message_keys(hub.store()),
        ["hub:msg:b1:1", "hub:msg:b:3", "hub:msg:b:4"]
    );
    assert_eq!(bodies(&hub, "b", 50, true), ["m2", "m3"]);
}

/// Senders, senders that die after taking a number, acknowledging and plain readers, all at once,
/// while time runs fast: every message that was acknowledged to its sender is received exactly
/// once, and once drained the store holds no message slot.
#[test]
fn dead_senders_and_racing_readers_lose_and_duplicate_nothing() {
    let clock = ManualClock::new();
    let store = Arc::new(MemoryStore::new());
    let hub = Hub::with_clock(store.clone(), clock.clone());
    let stop = AtomicBool::new(false);
    let (sent, mut received) = std::thread::scope(|s| {
        // Time runs at ~100x: the 30 s grace period passes in ~0.3 s.
        let ticker = s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                clock.advance(100);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        let dead = s.spawn(|| {
            for _ in 0..20 {
                store.increment("hub:head:inbox", 1).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        let senders: Vec<_> = (0..4)
            .map(|sender| {
                let hub = &hub;
                s.spawn(move || {
                    let mut ok = Vec::new();
                    for i in 0..150 {
                        let body = format!("{sender}:{i}");
                        match hub.send(&req("w", "inbox", &body)) {
                            Ok(_) => ok.push(body),
                            Err(HubError::Busy) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                    ok
                })
            })
            .collect();
        let readers: Vec<_> = (0..3)
            .map(|r| {
                let (hub, stop) = (&hub, &stop);
                s.spawn(move || {
                    let mut got = Vec::new();
                    while !stop.load(Ordering::SeqCst) {
                        if r == 0 {
                            hub.inbox(&name("inbox"), 5, false).unwrap();
                        }
                        got.extend(bodies(hub, "inbox", 5, true));
                    }
                    got
                })
            })
            .collect();
        let sent: Vec<String> = senders
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        dead.join().unwrap();
        stop.store(true, Ordering::SeqCst);
        ticker.join().unwrap();
        let received: Vec<String> = readers
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        (sent, received)
    });
    clock.advance(GAP_GRACE_MS);
    // One more message gives the reader evidence about any number given up at the tail.
    hub.send(&req("w", "inbox", "last")).unwrap();
    clock.advance(GAP_GRACE_MS);
    loop {
        let batch = bodies(&hub, "inbox", 500, true);
        if batch.is_empty() {
            break;
        }
        received.extend(batch);
    }
    assert_eq!(received.pop().as_deref(), Some("last"));
    let unique: HashSet<&String> = received.iter().collect();
    assert_eq!(unique.len(), received.len(), "a message was received twice");
    let sent: HashSet<&String> = sent.iter().collect();
    assert_eq!(unique, sent, "received and acknowledged sends differ");
    assert!(sent.len() > 500, "too few sends succeeded: {}", sent.len());
    assert!(
        message_keys(&store).is_empty(),
        "{:?}",
        message_keys(&store)
    );
}

/// The worst case: a sender stalls so long after taking its number that a reader gives the number
/// up, claims past it and deletes it. The sender must notice, not write into the dead slot (which
/// no reader would ever look at again), and deliver under a new number.
#[test]
fn a_sender_stalled_past_the_grace_period_still_delivers() {
    let clock = ManualClock::new();
    let store = Hooked {
        inner: MemoryStore::new(),
        hook: |inner: &MemoryStore| {
            let other = Hub::with_clock(inner, clock.clone());
            other.send(&req("x", "b", "later")).unwrap();
            clock.advance(GAP_GRACE_MS + 1);
            assert_eq!(bodies(&other, "b", 50, true), ["later"]);
            assert!(inner.get("hub:msg:b:1").unwrap().is_none());
        },
        done: AtomicBool::new(false),
    };
    let hub = Hub::with_clock(&store, clock.clone());
    hub.send(&req("a", "b", "slow")).unwrap();
    assert_eq!(bodies(&hub, "b", 50, true), ["slow"]);
    assert!(
        message_keys(&store.inner).is_empty(),
        "{:?}",
        store.inner.keys()
    );
}
