//! The message hub: machines send text messages to each other (or to all of them) and read their
//! inboxes, over any key-value store with an atomic increment and a compare-and-swap
//! ([`KeyValue`]). No Spin dependency: the `hub` component implements [`KeyValue`] over
//! `wasi:keyvalue`, the tests over [`MemoryStore`].
//!
//! ```
//! use dochub_hub::{Hub, MachineName, MemoryStore, SendRequest};
//!
//! let hub = Hub::new(MemoryStore::new());
//! let send = SendRequest::from_json(br#"{"from":"laptop","to":"ci-runner","body":"build 412 is green"}"#)?;
//! let sent = hub.send(&send)?;
//!
//! let ci = MachineName::parse("ci-runner", "machine")?;
//! let inbox = hub.inbox(&ci, 10, true)?;
//! assert_eq!(inbox.messages[0].message, sent);
//! assert!(inbox.messages[0].read);
//! assert!(hub.inbox(&ci, 10, true)?.messages.is_empty());
//! # Ok::<(), dochub_hub::HubError>(())
//! ```
//!
//! # Guarantees
//!
//! A message the hub answered 201 for is delivered exactly once to each recipient, in the order of
//! the recipient's sequence numbers (so each sender's messages in the order it sent them), even
//! with many concurrent senders and readers, across host restarts, and across hosts sharing the
//! store — provided the store's increment and compare-and-swap are atomic (Spin's SQLite store,
//! Redis, and any `wasi:keyvalue` store with atomics).
//!
//! # How it works
//!
//! Keys (all under `hub:`; see the `keys` module in `hub.rs`):
//!
//! | Key | Holds |
//! |---|---|
//! | `hub:machines` | JSON array of registered names; grows by compare-and-swap |
//! | `hub:seen:<m>` | when `m` last sent or read, ms (written at most once a second) |
//! | `hub:ids` | the message id counter |
//! | `hub:head:<m>` | the last sequence number allocated in `m`'s inbox (a counter) |
//! | `hub:read:<m>` | the read cursor: the last sequence number consumed by an acknowledging read |
//! | `hub:gc:<m>` | slots up to here are deleted (best effort; repairs after crashes) |
//! | `hub:msg:<m>:<seq>` | one message, or the tombstone `~` for a number given up |
//!
//! **Send.** Register the sender, take an id (`increment hub:ids`), then for each recipient
//! allocate a sequence number (`increment hub:head:<m>`) and write the message into its slot with a
//! compare-and-swap that succeeds only if the slot is still empty. A broadcast (`to: "all"`) writes
//! one copy per machine registered at that moment except the sender: copies rather than a shared
//! log with per-machine cursors, because a shared log could only be deleted once the slowest
//! machine read it, while a copy is deleted as soon as its recipient reads it, so the key count
//! stays bounded by the unread backlog.
//!
//! **Read.** Read the cursor `c` (with `ack`, through a compare-and-swap handle) and the head `h`,
//! then fetch slots `c+1 ..` in batches — O(limit) work however many messages are stored. With
//! `ack`, swap the cursor from `c` to the last slot consumed: of two readers that read the same
//! `c`, exactly one swap succeeds; the other starts over from the new cursor, so no message is ever
//! returned to two acknowledging readers. The winner then deletes the slots it consumed. Without
//! `ack` nothing is written and the same messages come back next time.
//!
//! **A number allocated, its message not written yet.** A reader that meets an empty slot below
//! the head cannot tell a sender still writing it from one that crashed. It stops there (later
//! messages wait: order is kept) unless it has evidence that the number is old: a later message
//! whose slot was allocated (after this one) more than [`GAP_GRACE_MS`] (30 s) ago. Then it gives
//! the number up by writing a tombstone with the same empty-slot compare-and-swap; if the sender's
//! write landed first, the reader gets the message instead. Conversely, a sender writes only within
//! [`SEND_DEADLINE_MS`] (5 s) of allocating its number; later, it tombstones the number itself and
//! allocates another. So a reader never skips a message that arrives, never waits forever on one
//! that never will, and a tombstone never hides a message that was acknowledged to its sender —
//! as long as clocks of hosts sharing a store agree within the 25 s margin between the two limits.
//!
//! **Bounded keys.** Slots are deleted once consumed; a reader that died between claiming and
//! deleting leaves slots below the cursor, which the next acknowledging reader deletes (tracked by
//! `hub:gc:<m>`; anything at or below the cursor is safe to delete). A tombstone written just after
//! a claimer consumed and deleted that slot is deleted again by its writer; should that writer die
//! in between, [`Hub::compact`] (maintenance, O(all keys)) removes the strays. Keys therefore number
//! the unread backlog plus four per machine plus two: inside Fermyon Cloud's 1,024 keys for
//! ~200 machines with a small backlog. Values are at most a 64 KiB message plus metadata; the
//! registry holds about 15,000 names within a 1 MB value.

#![deny(missing_docs)]

pub mod api;
pub mod auth;
mod hub;
mod kv;
mod model;

pub use hub::{
    Clock, DEFAULT_LIMIT, GAP_GRACE_MS, Hub, MAX_LIMIT, SEEN_EVERY_MS, SEND_DEADLINE_MS,
    SystemClock,
};
pub use kv::{KeyValue, MemoryCas, MemoryStore, StoreError, decode_counter};
pub use model::{
    BROADCAST, Inbox, InboxMessage, MAX_NAME_LEN, MachineEntry, MachineName, Message, Recipient,
    SendRequest, iso_millis,
};

/// Why a hub operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// The request is invalid (400); the message says how.
    #[error("{0}")]
    Invalid(String),
    /// The store kept refusing compare-and-swaps under contention (503): retry.
    #[error("the hub is busy; retry")]
    Busy,
    /// The store failed (500).
    #[error(transparent)]
    Store(#[from] StoreError),
}
