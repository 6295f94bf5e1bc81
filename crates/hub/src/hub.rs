//! The hub's store logic: registration, send, inbox with acknowledgement, machine list.

use serde::{Deserialize, Serialize};

use crate::HubError;
use crate::kv::{KeyValue, StoreError, decode_counter};
use crate::model::{
    Inbox, InboxMessage, MachineEntry, MachineName, Message, Recipient, SendRequest, iso_millis,
};

/// Inbox reads return at most this many messages.
pub const MAX_LIMIT: usize = 500;
/// Inbox reads return this many messages when the request does not say.
pub const DEFAULT_LIMIT: usize = 50;

/// How old the evidence must be before a reader gives up on a sequence number whose message never
/// landed (see the crate docs). Far above [`SEND_DEADLINE_MS`], so that a live sender always wins.
pub const GAP_GRACE_MS: i64 = 30_000;
/// A sender writes its message at most this long after allocating the sequence number; later, it
/// gives the number up and allocates a new one.
pub const SEND_DEADLINE_MS: i64 = 5_000;
/// `last_seen` is written at most once per this many milliseconds per machine.
pub const SEEN_EVERY_MS: i64 = 1_000;

/// Slots fetched per store round trip.
const CHUNK: u64 = 64;
/// Keys deleted per store round trip.
const DELETE_CHUNK: usize = 256;
/// Leftover slots (from a reader that died between claiming and deleting) removed per read.
const MAX_LEFTOVERS: u64 = 1024;
const SEND_ATTEMPTS: usize = 8;
const CAS_ATTEMPTS: usize = 200;
/// The value of a slot whose message will never come.
const TOMBSTONE: &[u8] = b"~";

/// The store's key layout. Every key starts with `hub:`; machine names are at most 64 bytes, so
/// every key stays far below Spin's 256-byte limit.
mod keys {
    /// JSON array of the registered machine names, sorted.
    pub const REGISTRY: &str = "hub:machines";
    /// Message id counter.
    pub const IDS: &str = "hub:ids";
    /// When the machine was last seen, milliseconds since the epoch, decimal.
    pub fn seen(m: &str) -> String {
        format!("hub:seen:{m}")
    }
    /// The last sequence number allocated in the machine's inbox (a counter).
    pub fn head(m: &str) -> String {
        format!("hub:head:{m}")
    }
    /// The last sequence number consumed (read with ack) from the machine's inbox, decimal.
    pub fn cursor(m: &str) -> String {
        format!("hub:read:{m}")
    }
    /// Slots at or below this sequence number have been deleted, decimal (best effort).
    pub fn gc(m: &str) -> String {
        format!("hub:gc:{m}")
    }
    /// One message (or tombstone) of the machine's inbox.
    pub fn slot(m: &str, seq: u64) -> String {
        format!("{}{seq}", slot_prefix(m))
    }
    /// What every slot key of the machine's inbox starts with.
    pub fn slot_prefix(m: &str) -> String {
        format!("hub:msg:{m}:")
    }
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

/// A message as stored in a slot: the message and when its slot was allocated (after the fact,
/// so never earlier than the allocation).
#[derive(Serialize, Deserialize)]
struct Stored {
    #[serde(flatten)]
    message: Message,
    at: i64,
}

enum Slot {
    Message(Stored),
    /// A tombstone, or a value no reader can use: either way, skipped.
    Skip,
    Missing,
}

impl Slot {
    fn decode(value: Option<Vec<u8>>) -> Self {
        match value {
            None => Slot::Missing,
            Some(v) if v == TOMBSTONE => Slot::Skip,
            Some(v) => serde_json::from_slice(&v).map_or(Slot::Skip, Slot::Message),
        }
    }
}

/// What a reader decided about a missing slot.
enum Gap {
    /// The message landed meanwhile.
    Landed(Stored),
    /// This reader gave the slot up (tombstoned it): skip it.
    GaveUp,
    /// Someone else gave it up, or it holds nothing readable: skip it.
    Skip,
    /// The sender may still write it: stop before it.
    Wait,
    /// The cursor moved past it: start over.
    Restart,
}

/// The result of scanning an inbox from a cursor.
#[derive(Default)]
struct Scan {
    messages: Vec<Message>,
    /// The last sequence number this scan consumed (the new cursor if it is claimed).
    end: u64,
    /// Tombstones this scan wrote.
    tombstoned: Vec<u64>,
    restart: bool,
}

/// The message hub over a key-value store.
#[derive(Debug, Clone)]
pub struct Hub<S, C = SystemClock> {
    store: S,
    clock: C,
}

impl<S: KeyValue> Hub<S> {
    /// A hub on `store`, with the system clock.
    pub fn new(store: S) -> Self {
        Self::with_clock(store, SystemClock)
    }
}

impl<S: KeyValue, C: Clock> Hub<S, C> {
    /// A hub on `store` that reads the time from `clock`.
    pub fn with_clock(store: S, clock: C) -> Self {
        Self { store, clock }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Sends a message: registers the sender, delivers one copy to the recipient (or to every
    /// machine registered now but the sender) and returns the message as stored.
    pub fn send(&self, request: &SendRequest) -> Result<Message, HubError> {
        let now = self.clock.now_ms();
        let registry = self.touch(&request.from, now)?;
        let id = self.store.increment(keys::IDS, 1)?;
        let message = Message {
            id: u64::try_from(id).map_err(|_| store_error("the message id counter is negative"))?,
            from: request.from.to_string(),
            to: request.to.as_str().to_owned(),
            body: request.body.clone(),
            timestamp: iso_millis(now),
        };
        match &request.to {
            Recipient::Machine(to) => self.deliver(to.as_str(), &message)?,
            Recipient::All => {
                for to in registry.iter().filter(|m| **m != message.from) {
                    self.deliver(to, &message)?;
                }
            }
        }
        Ok(message)
    }

    /// Reads up to `limit` unread messages of `machine`'s inbox, oldest first, and registers the
    /// machine. With `ack`, the messages are claimed: no other reader ever gets them, and they are
    /// deleted from the store. Without, the same messages come back next time.
    pub fn inbox(&self, machine: &MachineName, limit: usize, ack: bool) -> Result<Inbox, HubError> {
        let limit = limit.clamp(1, MAX_LIMIT);
        let m = machine.as_str();
        self.touch(machine, self.clock.now_ms())?;
        for _ in 0..CAS_ATTEMPTS {
            let (cas, cursor) = if ack {
                let (cas, value) = self.store.cas_begin(&keys::cursor(m))?;
                (Some(cas), parse_seq(value.as_deref())?)
            } else {
                (None, self.cursor(m)?)
            };
            let head = self.head(m)?;
            let scan = self.scan(m, cursor, head, limit)?;
            if scan.restart {
                self.drop_late_tombstones(m, &scan.tombstoned)?;
                continue;
            }
            let read = match cas {
                Some(cas) if scan.end > cursor => {
                    if !self.store.cas_swap(cas, scan.end.to_string().as_bytes())? {
                        // Another reader claimed first: its messages are its own. Look again.
                        self.drop_late_tombstones(m, &scan.tombstoned)?;
                        continue;
                    }
                    self.delete_consumed(m, cursor, scan.end)?;
                    true
                }
                _ => {
                    self.drop_late_tombstones(m, &scan.tombstoned)?;
                    false
                }
            };
            let messages = scan
                .messages
                .into_iter()
                .map(|message| InboxMessage { message, read })
                .collect();
            return Ok(Inbox {
                machine: m.to_owned(),
                messages,
            });
        }
        Err(HubError::Busy)
    }

    /// Every registered machine with when it was last seen, by name.
    pub fn machines(&self) -> Result<Vec<MachineEntry>, HubError> {
        let names = decode_registry(self.store.get(keys::REGISTRY)?.as_deref())?;
        let seen_keys: Vec<String> = names.iter().map(|n| keys::seen(n)).collect();
        let mut entries = Vec::with_capacity(names.len());
        for (chunk_names, chunk_keys) in names
            .chunks(CHUNK as usize)
            .zip(seen_keys.chunks(CHUNK as usize))
        {
            let seen = self.store.get_many(chunk_keys)?;
            for (name, seen) in chunk_names.iter().zip(seen) {
                let ms = seen.as_deref().and_then(decode_counter).unwrap_or(0);
                entries.push(MachineEntry {
                    name: name.clone(),
                    last_seen: iso_millis(ms),
                });
            }
        }
        Ok(entries)
    }

    /// Deletes every slot of `machine`'s inbox at or below its read cursor and returns how many:
    /// anything a crash left behind that the per-read cleanup did not reach. Maintenance, not
    /// called on the request path: it lists keys, which costs O(all keys) on most stores.
    pub fn compact(&self, machine: &MachineName) -> Result<usize, HubError> {
        let m = machine.as_str();
        let cursor = self.cursor(m)?;
        let prefix = keys::slot_prefix(m);
        let stale: Vec<String> = self
            .store
            .list_keys(&prefix)?
            .into_iter()
            .filter(|k| {
                k[prefix.len()..]
                    .parse::<u64>()
                    .is_ok_and(|seq| seq <= cursor)
            })
            .collect();
        for chunk in stale.chunks(DELETE_CHUNK) {
            self.store.delete_many(chunk)?;
        }
        Ok(stale.len())
    }

    /// Registers `machine` and records it as seen at `now`; returns the registry.
    fn touch(&self, machine: &MachineName, now: i64) -> Result<Vec<String>, HubError> {
        let m = machine.as_str();
        let seen_key = keys::seen(m);
        let [registry, seen]: [Option<Vec<u8>>; 2] = self
            .store
            .get_many(&[keys::REGISTRY.to_owned(), seen_key.clone()])?
            .try_into()
            .map_err(|_| store_error("get_many returned the wrong number of values"))?;
        let last = seen.as_deref().and_then(decode_counter);
        if last.is_none_or(|last| now - last >= SEEN_EVERY_MS) {
            // Written before the name joins the registry, so a listed machine always has it.
            self.store.set(&seen_key, now.to_string().as_bytes())?;
        }
        let mut names = decode_registry(registry.as_deref())?;
        if names.binary_search_by(|n| n.as_str().cmp(m)).is_ok() {
            return Ok(names);
        }
        for _ in 0..CAS_ATTEMPTS {
            let (cas, current) = self.store.cas_begin(keys::REGISTRY)?;
            names = decode_registry(current.as_deref())?;
            match names.binary_search_by(|n| n.as_str().cmp(m)) {
                Ok(_) => return Ok(names),
                Err(at) => names.insert(at, m.to_owned()),
            }
            let value = serde_json::to_vec(&names).map_err(|e| store_error(&e.to_string()))?;
            if self.store.cas_swap(cas, &value)? {
                return Ok(names);
            }
        }
        Err(HubError::Busy)
    }

    /// Puts one copy of `message` in `to`'s inbox.
    fn deliver(&self, to: &str, message: &Message) -> Result<(), HubError> {
        for _ in 0..SEND_ATTEMPTS {
            let started = self.clock.now_ms();
            let seq = self.next_seq(to)?;
            let stored = Stored {
                message: message.clone(),
                at: self.clock.now_ms(),
            };
            let value = serde_json::to_vec(&stored).map_err(|e| store_error(&e.to_string()))?;
            let (cas, current) = self.store.cas_begin(&keys::slot(to, seq))?;
            if current.is_some() {
                // A reader gave this number up already: take another.
                continue;
            }
            if self.clock.now_ms() - started > SEND_DEADLINE_MS {
                // Too slow: a reader may give the number up any time now. Give it up first, so
                // readers need not wait, and take another.
                if self.store.cas_swap(cas, TOMBSTONE)? {
                    self.drop_late_tombstones(to, &[seq])?;
                }
                continue;
            }
            if self.store.cas_swap(cas, &value)? {
                return Ok(());
            }
        }
        Err(HubError::Busy)
    }

    fn next_seq(&self, m: &str) -> Result<u64, HubError> {
        let seq = self.store.increment(&keys::head(m), 1)?;
        u64::try_from(seq).map_err(|_| store_error("an inbox head counter is negative"))
    }

    fn head(&self, m: &str) -> Result<u64, HubError> {
        let head = self.store.counter(&keys::head(m))?;
        u64::try_from(head).map_err(|_| store_error("an inbox head counter is negative"))
    }

    fn cursor(&self, m: &str) -> Result<u64, HubError> {
        parse_seq(self.store.get(&keys::cursor(m))?.as_deref())
    }

    /// Collects up to `limit` messages after `cursor`, stopping before a slot whose sender may
    /// still be writing it.
    fn scan(&self, m: &str, cursor: u64, head: u64, limit: usize) -> Result<Scan, HubError> {
        let mut scan = Scan {
            end: cursor,
            ..Scan::default()
        };
        let mut next = cursor + 1;
        while next <= head && scan.messages.len() < limit {
            let want = (limit - scan.messages.len()) as u64;
            let last = head.min(next + want.min(CHUNK) - 1);
            let seqs: Vec<u64> = (next..=last).collect();
            let values = self.fetch(m, &seqs)?;
            for (&seq, value) in seqs.iter().zip(values) {
                let stored = match Slot::decode(value) {
                    Slot::Message(stored) => Some(stored),
                    Slot::Skip => None,
                    Slot::Missing => match self.resolve_gap(m, seq, head)? {
                        Gap::Landed(stored) => Some(stored),
                        Gap::Skip => None,
                        Gap::GaveUp => {
                            scan.tombstoned.push(seq);
                            None
                        }
                        Gap::Wait => return Ok(scan),
                        Gap::Restart => {
                            scan.restart = true;
                            return Ok(scan);
                        }
                    },
                };
                scan.end = seq;
                if let Some(stored) = stored {
                    scan.messages.push(stored.message);
                    if scan.messages.len() == limit {
                        return Ok(scan);
                    }
                }
            }
            next = last + 1;
        }
        Ok(scan)
    }

    /// Decides about the missing slot `seq`.
    fn resolve_gap(&self, m: &str, seq: u64, head: u64) -> Result<Gap, HubError> {
        // Consumed and deleted by an acknowledging reader since our cursor was read?
        if self.cursor(m)? >= seq {
            return Ok(Gap::Restart);
        }
        // Give the number up only on evidence that it was allocated long ago: a later message
        // whose slot was allocated (after ours) more than the grace period ago.
        let mut evidence = None;
        let mut next = seq + 1;
        while evidence.is_none() && next <= head {
            let last = head.min(next + CHUNK - 1);
            let seqs: Vec<u64> = (next..=last).collect();
            evidence = self
                .fetch(m, &seqs)?
                .into_iter()
                .find_map(|v| match Slot::decode(v) {
                    Slot::Message(s) => Some(s.at),
                    _ => None,
                });
            next = last + 1;
        }
        match evidence {
            Some(at) if self.clock.now_ms() - at >= GAP_GRACE_MS => {}
            _ => return Ok(Gap::Wait),
        }
        let key = keys::slot(m, seq);
        let (cas, current) = self.store.cas_begin(&key)?;
        if let Some(value) = current {
            return Ok(landed(value));
        }
        if self.store.cas_swap(cas, TOMBSTONE)? {
            return Ok(Gap::GaveUp);
        }
        Ok(match self.store.get(&key)? {
            Some(value) => landed(value),
            None => Gap::Restart,
        })
    }

    fn fetch(&self, m: &str, seqs: &[u64]) -> Result<Vec<Option<Vec<u8>>>, HubError> {
        let keys: Vec<String> = seqs.iter().map(|&s| keys::slot(m, s)).collect();
        let values = self.store.get_many(&keys)?;
        if values.len() != keys.len() {
            return Err(store_error("get_many returned the wrong number of values"));
        }
        Ok(values)
    }

    /// Deletes the slots just claimed (`cursor+1..=end`) and leftovers below them from readers
    /// that died between claiming and deleting. Every slot at or below the cursor is safe to
    /// delete: its claimer read it before moving the cursor.
    fn delete_consumed(&self, m: &str, cursor: u64, end: u64) -> Result<(), HubError> {
        let gc_key = keys::gc(m);
        let gc = parse_seq(self.store.get(&gc_key)?.as_deref())?;
        let mut seqs: Vec<u64> = Vec::new();
        let new_gc = if gc < cursor {
            let leftovers_end = cursor.min(gc + MAX_LEFTOVERS);
            seqs.extend(gc + 1..=leftovers_end);
            if leftovers_end == cursor {
                end
            } else {
                leftovers_end
            }
        } else {
            end
        };
        seqs.extend(cursor + 1..=end);
        let keys: Vec<String> = seqs.iter().map(|&s| keys::slot(m, s)).collect();
        for chunk in keys.chunks(DELETE_CHUNK) {
            self.store.delete_many(chunk)?;
        }
        if new_gc > gc {
            self.store.set(&gc_key, new_gc.to_string().as_bytes())?;
        }
        Ok(())
    }

    /// Deletes the tombstones this request wrote that a claimer has passed meanwhile: a claimer
    /// may have consumed and deleted the message just before the tombstone went in.
    fn drop_late_tombstones(&self, m: &str, tombstoned: &[u64]) -> Result<(), HubError> {
        if tombstoned.is_empty() {
            return Ok(());
        }
        let cursor = self.cursor(m)?;
        let late: Vec<String> = tombstoned
            .iter()
            .filter(|&&s| s <= cursor)
            .map(|&s| keys::slot(m, s))
            .collect();
        if !late.is_empty() {
            self.store.delete_many(&late)?;
        }
        Ok(())
    }
}

fn landed(value: Vec<u8>) -> Gap {
    match Slot::decode(Some(value)) {
        Slot::Message(stored) => Gap::Landed(stored),
        _ => Gap::Skip,
    }
}

fn parse_seq(value: Option<&[u8]>) -> Result<u64, HubError> {
    match value {
        None => Ok(0),
        Some(v) => decode_counter(v)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| store_error("an inbox cursor is not a number")),
    }
}

fn decode_registry(value: Option<&[u8]>) -> Result<Vec<String>, HubError> {
    match value {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_slice(v)
            .map_err(|e| store_error(&format!("the machine registry is unreadable: {e}"))),
    }
}

fn store_error(message: &str) -> HubError {
    HubError::Store(StoreError(message.to_owned()))
}
