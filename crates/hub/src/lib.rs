//! The message hub: machines send text messages to each other (or to all of them) and read their
//! inboxes, over a SQL database ([`Sql`]: SQLite or PostgreSQL). No Spin dependency: the `hub`
//! component implements [`Sql`] over `spin:sqlite` and `spin:postgres`, the tests over rusqlite.
//!
//! ```no_run
//! use dochub_hub::{Hub, MachineName, SendRequest, Sql};
//!
//! fn demo(db: impl Sql) -> Result<(), dochub_hub::HubError> {
//!     let hub = Hub::new(db);
//!     let send = SendRequest::from_json(br#"{"from":"laptop","to":"ci-runner","body":"green"}"#)?;
//!     let sent = hub.send(&send, None)?;
//!     let ci = MachineName::parse("ci-runner", "machine")?;
//!     // Read, process, then acknowledge: a client that dies in between gets them again.
//!     let inbox = hub.inbox(&ci, 50, false, true)?;
//!     assert_eq!(inbox.messages[0].message, sent);
//!     assert_eq!(hub.acknowledge(&ci, sent.id)?, 1);
//!     assert!(hub.inbox(&ci, 50, false, true)?.messages.is_empty());
//!     Ok(())
//! }
//! ```
//!
//! # Guarantees, and why they hold
//!
//! Tables (created on first use, and completed whenever a send finds a piece missing):
//! `hub_machines(name, last_seen, read_kept, unread_kept)` (how many read and unread messages the
//! machine keeps, counted by triggers on `hub_messages`), `hub_messages(machine, id, sender,
//! recipient, body, created, subject, importance, thread, reply_to, read_at)` with one row per
//! recipient (unread while `read_at` is NULL: the inbox) and one, read, for the sender of a message
//! to others, so a machine's rows are its mailbox; `hub_counter` (the rows `ids`, the last message
//! id, and `clock`, the last timestamp given; `purged`, the last purge; `indexed` and `indexed_at`,
//! how far SQLite's full-text index goes), `hub_sends` (idempotency keys); the full-text index
//! (SQLite: the FTS5 table `hub_search`, one row per message, filled by the first search after a
//! send; PostgreSQL: the generated column `search` with a GIN index); on PostgreSQL also the
//! sequence `hub_message_ids` (message ids) and the functions `hub_inbox_has_room_3`,
//! `hub_mailbox_clock_3`, `hub_trim_read_4`, `hub_count_messages` (the triggers'),
//! `hub_ids_from_sequence` (a trigger that gives an earlier release's counter update a sequence
//! id) and `hub_send_5` (a send in one statement); on SQLite also the view `hub_send`, always
//! empty, whose `INSTEAD OF INSERT` trigger stores a send (both made in one transaction, so no
//! send meets the view without its trigger). A database of an earlier release gains the
//! columns and objects it lacks on first use, and one whose set-up stopped half-way is
//! completed. Delivery, order and acknowledgement rest on the atomicity of
//! one statement or of one SQLite transaction, which both engines give, never on key-value
//! compare-and-swap. Clocks decide only what expires (retention, keys after 24 h), how often
//! `last_seen` is written, and the timestamps, which (6) keeps in id order.
//!
//! 1. **A message answered 201 is stored once in the inbox of each of its recipients.** The
//!    copies are written by one `INSERT … SELECT` in the same atomic unit as the id allocation:
//!    all or none. The recipients of a direct send: the machine named (refused with 507 when its
//!    inbox is full, nothing stored). Of a broadcast: the machines registered when that
//!    statement runs (its snapshot) and seen within the retention period, except the sender,
//!    and except those whose inbox is full: they miss that broadcast, and its 201 does not say
//!    so. Registration is one upsert, so concurrent first registrations all land.
//!
//!    A send is one statement when nothing but its message needs writing (`Hub::send_at_once`
//!    in `store.rs`, and each engine's form in `store/`): the statement checks that no purge is due, that the sender and the
//!    recipient are known, and that the key is new and the message replied to is there; it
//!    then stores the copies, records the sender as seen and trims its read messages to their
//!    cap, and otherwise writes nothing. On SQLite it is an insert into the
//!    view `hub_send`, and a statement that writes takes SQLite's write lock before it reads
//!    anything, so the checks and the writes are as atomic as a transaction. When a check
//!    fails, the send takes its steps: it reads, in one statement, when the last purge ran,
//!    when its sender was last seen and whether its recipient is known, and registers only
//!    what that read finds missing (after a purge, both): on SQLite inside its transaction; on
//!    PostgreSQL a purge racing that read (or the checks) may forget a recipient it found, as
//!    one may between the look and the insert of registering.
//! 2. **Ids are committed in increasing order within each mailbox.** On SQLite the id comes
//!    from `UPDATE hub_counter SET value = value + 1 … RETURNING value`, inside one `BEGIN
//!    IMMEDIATE` transaction or one statement that writes, and writers are serialized: ids are
//!    committed in increasing order across the hub. On PostgreSQL a send first locks the
//!    `hub_machines` rows of every machine whose mailbox it writes (its sender and its
//!    recipients, in name order), then draws the id from the sequence `hub_message_ids`, and
//!    inserts the copies in that same statement (one `WITH` statement); the rows stay locked
//!    until it commits. A later send to any of those machines waits for the lock, so it draws a
//!    larger id and commits after: no smaller id can commit in a mailbox after a larger one is
//!    visible there. Sends to other machines commit side by side. Hence: once a reader sees id
//!    `n` in an inbox, every message of that inbox with an id below `n` is already visible,
//!    which is what lets an event stream resume after the last id it sent. (While an instance
//!    of the release before, which drew ids from the counter row, still sends to the same
//!    database, its ids come from the sequence too, through a trigger, and are never given
//!    twice; this order holds between its sends and this release's only once it is gone.)
//! 3. **An acknowledging read (`ack=true`) returns each message to one reader only, and marks
//!    read only what it returns.** It is at most once: the mark commits before the answer is
//!    delivered, so an answer lost on the way takes its messages out of the inbox (they stay in
//!    the mailbox); the two-step acknowledgement (read, then `POST …/ack`) is at least once. It
//!    is one `UPDATE … SET read_at … WHERE read_at IS NULL AND id IN (the oldest `limit`, cut
//!    where their JSON would pass `Limits::answer_bytes`) RETURNING …`: a row is marked by
//!    exactly one statement (PostgreSQL re-checks `read_at IS NULL` on a row another statement
//!    just marked, and skips it), and the answer never grows past what one instance can build.
//!    A reader whose chosen rows were all taken by a concurrent reader looks again. A long-poll
//!    (`?wait=`) marks nothing while it waits, and before each look checks that its client is
//!    still there ([`wait`]); what remains is the window every acknowledging read has, between
//!    the `UPDATE` and the client receiving the answer. The two-step acknowledgement has none.
//! 4. **The two-step acknowledgement loses nothing.** A plain read changes nothing; `POST
//!    /api/inbox/<m>/ack {"through": n}` marks that inbox's unread messages with `id <= n` read.
//!    By (2), those are exactly messages the reader could have seen: none arrives later below
//!    `n`. A client that dies before acknowledging gets the same messages again; a repeat marks 0.
//! 5. **Order.** An inbox is read by `ORDER BY id`, that is in commit order (2). A sender that
//!    waits for each 201 before its next send finds its messages in the order it sent them;
//!    sends in flight at the same time (one sender's or several) are ordered as they commit.
//! 6. **Timestamps never go back in id order**, on SQLite across the hub and on PostgreSQL
//!    within each mailbox, the order in which a machine reads. On SQLite a send sets the
//!    `clock` row to the greater of its value and the sender's clock, in the transaction that
//!    takes its id, and stamps the message with the result. On PostgreSQL the stamp is the
//!    greater of the sender's clock and the newest message in each mailbox it writes, read
//!    under the same locks as its id (`hub_mailbox_clock_3`, with fresh snapshots). A clock
//!    that steps back repeats the last timestamp; one that runs ahead carries the timestamps of
//!    the mailboxes it writes ahead with it until the others catch up.
//! 7. **Idempotent send.** With an `Idempotency-Key`, the send first looks the key up; on
//!    PostgreSQL the key row is claimed in the same statement as the copies (`ON CONFLICT DO
//!    NOTHING`, and the copies are written only if the claim succeeded), on SQLite in the same
//!    transaction or statement (which stores nothing when it finds the key taken). So two
//!    racing retries store one message, and both answer its 201 body. A key belongs to its
//!    sender; the same key with another recipient or body is refused (422), never answered
//!    with the first message.
//! 8. **Bounded.** An inbox holds at most `hub_max_unread` messages: the count is taken under
//!    the id lock (SQLite: inside the transaction; PostgreSQL: under the recipient's row lock,
//!    by `hub_inbox_has_room_3`, a `VOLATILE` function whose fresh snapshot sees every send
//!    committed before the lock was taken). It is `unread_kept`, which counts expired
//!    messages until the purge deletes them, so it is never below the truth; only when it
//!    reaches the cap are the inbox's messages not yet expired counted one by one, so the cap
//!    is exact. The hub knows at most `hub_max_machines` machines (senders, registering
//!    readers and every recipient named), so the store holds at most that many inboxes of
//!    `hub_max_unread` messages of 64 KiB (on PostgreSQL, new names that race may pass the
//!    machine cap by as many as race). At most once a minute, the first send after the
//!    minute purges messages older than `hub_retention_days`, read or not, machines unseen for
//!    as long that hold no messages, and keys older than 24 h. In between, expired rows are
//!    only left out: reads never return them, acknowledging marks none of them, the unread cap does
//!    not count them, a reply cannot join them, an expired key is free (its record is deleted when
//!    met), and a machine cap that finds no room purges at once before it refuses. Read messages
//!    beyond `hub_max_read` per machine go, oldest first, whenever that machine acknowledges or
//!    sends: as many as `read_kept` says are over, so a trim costs what it deletes. Both counts
//!    move with every insert, mark and delete of a row, in the same statement (a trigger), so they
//!    are exact; the purge forgets a machine only while both are 0, which PostgreSQL checks again
//!    on a row a concurrent send has just counted a message on, and a message to a machine a purge
//!    has forgotten makes it known again (a sender it forgot while the send waited, as seen
//!    now). On PostgreSQL the purge locks the rows of the machines whose expired messages it
//!    deletes in name order first, and in a statement of its own the rows of the machines it
//!    forgets, as a send locks its machines, so the two never deadlock (`pg_purge_messages`,
//!    `pg_forget_machines`).
//!    A send trims in its own statement (on SQLite, transaction), so a failed trim stores
//!    nothing; on PostgreSQL under the sender's row lock, with a fresh snapshot
//!    (`hub_trim_read_4`). A trim that fails after an acknowledging read has committed is left
//!    to the next one: the answer is given, never retried into a second change.
//! 9. **Set-up is idempotent and checked.** Every set-up statement can run any number of times
//!    (`IF NOT EXISTS`, `ON CONFLICT DO NOTHING`), set-ups racing each other are retried pass by
//!    pass, SQLite's write-ahead logging must be on before the counter rows are written, and the
//!    counter rows must exist at the end. A lost `ids` row restarts after the largest id still
//!    stored (messages or keys), never at 0. Objects that work only together are made in one
//!    atomic unit (SQLite's view `hub_send` and its trigger, its full-text index and its fill,
//!    the columns of a later release and what fills them), so that no request meets one half,
//!    and a set-up stopped in between leaves nothing a later one takes for complete.
//!
//! Spin specifics (v4.0.2): each `spin:sqlite` connection is a fresh rusqlite connection, closed
//! (so rolled back) with the request; `spin:postgres` connections are pooled and an unfinished
//! transaction would pass to the next request, so on PostgreSQL the hub uses single statements
//! only.

#![deny(missing_docs)]

pub mod api;
pub mod auth;
mod model;
mod sql;
mod store;
pub mod wait;

pub use model::{
    BROADCAST, IdempotencyKey, Importance, Inbox, InboxMessage, MAX_BODY, MAX_KEY_LEN,
    MAX_NAME_LEN, MAX_SUBJECT_CHARS, MachineEntry, MachineName, Message, Outgoing, Recipient,
    SendRequest, iso_millis,
};
pub use sql::{Dialect, Sql, SqlError, SqlValue, StoreFailure, first_row};
pub use store::{
    Clock, DEFAULT_LIMIT, DEFAULT_MAX_MACHINES, DEFAULT_MAX_READ, DEFAULT_MAX_UNREAD,
    DEFAULT_MAX_WAIT, DEFAULT_RETENTION_DAYS, Hub, IDEMPOTENCY_MS, Limits, MAX_LIMIT,
    MAX_MAILBOX_LIMIT, MAX_SEARCH_BYTES, MAX_SEARCH_WORDS, MailboxQuery, SEEN_EVERY_MS,
    SystemClock, search_words,
};

/// Why a hub operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// The request is invalid (400); the message says how.
    #[error("{0}")]
    Invalid(String),
    /// The message body is over 64 KiB (413).
    #[error("{0}")]
    TooLarge(String),
    /// What the request names is not there, or not the requester's to see (404).
    #[error("{0}")]
    NotFound(String),
    /// The recipient's inbox is at its unread cap (507).
    #[error("{0}")]
    InboxFull(String),
    /// The hub knows `hub_max_machines` machines and would have to register one more (507).
    #[error("{0}")]
    MachinesFull(String),
    /// An `Idempotency-Key` the sender already used for a different recipient or body (422).
    #[error("{0}")]
    KeyReused(String),
    /// The hub's tables are not (completely) set up; set-up runs and the operation is tried
    /// again, so this reaches a client (500) only when set-up could not complete.
    #[error("{0}")]
    Unprepared(String),
    /// A setting has a value the hub cannot use (500).
    #[error("{0}")]
    Config(String),
    /// The database cannot be reached now (503): retry.
    #[error("{0}")]
    Unavailable(String),
    /// The store fails every request alike (503), with the message saying why
    /// ([`StoreFailure::message`]).
    #[error("{1}")]
    StoreFailed(StoreFailure, String),
    /// The database is too busy to take the write now (503): retry.
    #[error("the hub is busy; retry")]
    Busy,
    /// The database failed (500).
    #[error(transparent)]
    Store(#[from] SqlError),
}
