//! Reads that wait for messages: the long-poll (`GET /api/inbox/<m>?wait=<s>`) and the event
//! stream (`GET /api/inbox/<m>/events`).
//!
//! Spin offers no notification between component instances, so a waiting request looks at
//! the store itself: first after [`FIRST_LOOK`], then twice as long each time up to
//! [`LOOK_EVERY`], with one cheap indexed query per look and no transaction or lock held in
//! between. A send through any instance sharing the database is seen at the next look.
//!
//! A waiting request asks its [`Connect`] for a connection at each look and lets it go before
//! it sleeps. The WASIp2 hub takes one from Spin's PostgreSQL pool per look: held for the
//! whole wait, 64 waiters would take every connection of the pool, and every other request
//! would queue behind them. On SQLite, which has no pool, it keeps its one connection. The
//! WASIp3 hub's looks share their instance's one connection with its other requests.
//!
//! A wait is written once, async ([`AsyncPause`], [`BodyOut`]), so that a WASIp3 instance
//! serves its other requests while one waits; [`crate::api::Later::run`] runs it on a
//! [`Pause`] and a [`Write`] that block instead (a WASIp2 instance, which serves one request,
//! and native code).
//!
//! A look that gets no connection in time, or finds the database busy, takes nothing and is
//! skipped: the next look tries again. Only when the wait ends on such a failure does the
//! request end with it, so an empty answer always means that nothing came.
//!
//! The answer's head (`200`) goes out when the wait starts; while waiting, a long-poll writes
//! a space (JSON may start with white space) every [`KEEP_ALIVE`] and before it takes the
//! messages it found, and a stream a comment line every [`KEEP_ALIVE`]. A write fails once the
//! client has gone, and the request stops there: an acknowledging long-poll whose client gave
//! up takes nothing.

use std::future::Future;
use std::io::Write;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::HubError;
use crate::hub::{Clock, Hub};
use crate::model::{Inbox, InboxMessage, MachineName};
use crate::sql::Sql;

/// Opens a connection to the hub's store for one look.
pub type Connect<'a, S, C> = &'a dyn Fn() -> Result<Hub<S, C>, HubError>;

/// The first look at the store after a wait starts.
pub const FIRST_LOOK: Duration = Duration::from_millis(50);
/// The longest pause between two looks: a message waits at most this long to be seen.
pub const LOOK_EVERY: Duration = Duration::from_millis(400);
/// An event stream writes a comment line at least this often, so that idle connections stay
/// open through proxies, a client that left is noticed within a few seconds, and a host that
/// stops silent responses (`dochub-host` after its request timeout) sees the stream moving.
pub const KEEP_ALIVE: Duration = Duration::from_secs(1);
/// What a stream tells its client to wait before reconnecting, in milliseconds.
pub const RETRY_MS: u64 = 1_000;
/// An event stream reads at most this many messages per look.
const STREAM_BATCH: usize = 100;

/// How a waiting request that has its thread to itself lets time pass: a WASIp2 instance
/// blocks on a WASI clock, native code sleeps its thread ([`ThreadPause`]).
pub trait Pause {
    /// Time on a clock that never goes back, from any fixed start.
    fn monotonic(&self) -> Duration;
    /// Blocks for `duration`.
    fn sleep(&self, duration: Duration);
}

/// How a waiting request that shares its instance lets time pass (a WASIp3 instance serves
/// several requests at once): its sleep yields to the others.
pub trait AsyncPause {
    /// Time on a clock that never goes back, from any fixed start.
    fn monotonic(&self) -> Duration;
    /// Waits for `duration`.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()>;
}

/// Where a waiting request writes its body.
pub trait BodyOut {
    /// Writes all of `bytes` and hands them on to the client; an error means the client is
    /// gone.
    fn write_flush(&mut self, bytes: &[u8]) -> impl Future<Output = std::io::Result<()>>;
}

/// A [`Pause`] as an [`AsyncPause`] whose sleep blocks.
pub(crate) struct Blocking<'a>(pub(crate) &'a dyn Pause);

impl AsyncPause for Blocking<'_> {
    fn monotonic(&self) -> Duration {
        self.0.monotonic()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        self.0.sleep(duration);
        std::future::ready(())
    }
}

/// A blocking writer as a [`BodyOut`].
pub(crate) struct BlockingOut<'a>(pub(crate) &'a mut dyn Write);

impl BodyOut for BlockingOut<'_> {
    fn write_flush(&mut self, bytes: &[u8]) -> impl Future<Output = std::io::Result<()>> {
        std::future::ready(self.0.write_all(bytes).and_then(|()| self.0.flush()))
    }
}

/// Runs `work` built from [`Blocking`] and [`BlockingOut`] only, which never wait for a wake:
/// the first poll finishes it.
pub(crate) fn finish_blocking<T>(work: impl Future<Output = T>) -> T {
    match pin!(work).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(done) => done,
        Poll::Pending => unreachable!("blocking pauses and writes never wait for a wake"),
    }
}

/// [`Pause`] on the thread's own clock and sleep.
#[derive(Debug, Clone, Copy)]
pub struct ThreadPause {
    start: Instant,
}

impl Default for ThreadPause {
    fn default() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl Pause for ThreadPause {
    fn monotonic(&self) -> Duration {
        self.start.elapsed()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Why a waiting request stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The client is gone (or its connection failed): nothing more was taken.
    #[error("the client left: {0}")]
    ClientLeft(std::io::Error),
    /// The store failed.
    #[error(transparent)]
    Hub(#[from] HubError),
}

/// A long-poll on an empty inbox, to run once its `200` head is sent.
#[derive(Debug, Clone)]
pub struct WaitingRead {
    pub(crate) machine: MachineName,
    pub(crate) limit: usize,
    pub(crate) ack: bool,
    pub(crate) wait: Duration,
    pub(crate) importance: crate::Importance,
}

impl WaitingRead {
    /// Waits until the inbox has messages or the wait ends, then writes the inbox JSON (empty at
    /// the end of the wait). Before it reads the messages it found it writes a space: if that
    /// fails, the client is gone and nothing is read, so an acknowledging read whose client
    /// gave up takes nothing.
    ///
    /// It yields while it waits and writes; no transaction stays open across a yield, so the
    /// other requests of a WASIp3 instance may use the connection meanwhile.
    pub async fn run<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        pause: &impl AsyncPause,
        out: &mut impl BodyOut,
    ) -> Result<(), WaitError> {
        let end = pause.monotonic() + self.wait;
        let mut looks = Looks::default();
        let mut failed = None;
        // When the last space went out: one at least every KEEP_ALIVE keeps the connection
        // moving and notices a client that left.
        let mut spoken = pause.monotonic();
        loop {
            let now = pause.monotonic();
            if now >= end {
                // "Nothing came" only when the last look saw the store.
                if let Some(e) = failed {
                    return Err(WaitError::Hub(e));
                }
                let empty = Inbox {
                    machine: self.machine.to_string(),
                    messages: Vec::new(),
                };
                return write_json(out, &empty).await;
            }
            pause.sleep(looks.next().min(end - now)).await;
            if pause.monotonic().saturating_sub(spoken) >= KEEP_ALIVE {
                write_flush(out, b" ").await?;
                spoken = pause.monotonic();
            }
            match self.look(connect, out).await {
                Ok(Some(inbox)) => return write_json(out, &inbox).await,
                Ok(None) => failed = None,
                Err(WaitError::Hub(e)) if passing(&e) => failed = Some(e),
                Err(e) => return Err(e),
            }
        }
    }

    /// One look at the inbox: its messages (acknowledged if the read says so), or `None`.
    /// Before it takes any, it writes a space: a client that left takes nothing.
    async fn look<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        out: &mut impl BodyOut,
    ) -> Result<Option<Inbox>, WaitError> {
        let hub = connect()?;
        if !hub.has_unread_at_least(&self.machine, 0, self.importance)? {
            return Ok(None);
        }
        // No transaction is open across this write, which may yield to another request of
        // the instance on the same connection.
        write_flush(out, b" ").await?;
        let inbox =
            hub.inbox_at_least(&self.machine, self.importance, self.limit, self.ack, false)?;
        // Empty when a concurrent acknowledging reader took them first: wait on.
        Ok((!inbox.messages.is_empty()).then_some(inbox))
    }
}

/// Whether a look that failed with `e` is tried again at the next one: no connection could be
/// had in time (a pool busy with other requests), or the database was too busy. Such a look
/// took nothing, and one failure should not end a wait that has seconds left.
fn passing(e: &HubError) -> bool {
    matches!(e, HubError::Unavailable(_) | HubError::Busy)
}

/// An event stream, to run once its `200` head is sent.
#[derive(Debug, Clone)]
pub struct EventStream {
    pub(crate) machine: MachineName,
    pub(crate) after: u64,
    pub(crate) lifetime: Duration,
}

impl EventStream {
    /// Writes one event per message of the inbox with an id above `after`, as they arrive,
    /// for the stream's lifetime; then a `retry:` hint and the end. Nothing is acknowledged.
    /// Ids are committed in increasing order, so resuming after the last id seen skips nothing.
    pub async fn run<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        pause: &impl AsyncPause,
        out: &mut impl BodyOut,
    ) -> Result<(), WaitError> {
        let start = pause.monotonic();
        let end = start + self.lifetime;
        let mut after = self.after;
        let mut looks = Looks::default();
        let mut quiet_since = start;
        write_flush(out, format!("retry: {RETRY_MS}\n\n").as_bytes()).await?;
        loop {
            // The connection goes back before the pause.
            let (messages, failed) = match connect()
                .and_then(|hub| hub.messages_after(&self.machine, after, STREAM_BATCH))
            {
                Ok(messages) => (messages, None),
                Err(e) if passing(&e) => (Vec::new(), Some(e)),
                Err(e) => return Err(WaitError::Hub(e)),
            };
            // A full batch: more may be waiting, so the next look comes at once.
            let more = messages.len() == STREAM_BATCH;
            let now = pause.monotonic();
            if !messages.is_empty() {
                let mut events = Vec::new();
                for message in messages {
                    after = message.id;
                    let data = serde_json::to_string(&InboxMessage {
                        message,
                        read: false,
                    })
                    .map_err(json_error)?;
                    events.extend_from_slice(format!("id: {after}\ndata: {data}\n\n").as_bytes());
                }
                write_flush(out, &events).await?;
                quiet_since = now;
                looks = Looks::default();
            } else if now.saturating_sub(quiet_since) >= KEEP_ALIVE {
                write_flush(out, b": keep-alive\n\n").await?;
                quiet_since = now;
            }
            if now >= end {
                // A stream whose last look failed ends unfinished: the client resumes.
                if let Some(e) = failed {
                    return Err(WaitError::Hub(e));
                }
                let bye = format!(
                    ": the stream ends after {} s; reconnect with Last-Event-ID: {after}\n\
                     retry: {RETRY_MS}\n\n",
                    self.lifetime.as_secs()
                );
                return write_flush(out, bye.as_bytes()).await;
            }
            if !more {
                pause.sleep(looks.next().min(end - now)).await;
            }
        }
    }
}

/// The pauses between looks: [`FIRST_LOOK`], then doubling up to [`LOOK_EVERY`].
#[derive(Debug, Clone, Copy)]
struct Looks(Duration);

impl Default for Looks {
    fn default() -> Self {
        Self(FIRST_LOOK)
    }
}

impl Looks {
    fn next(&mut self) -> Duration {
        let pause = self.0;
        self.0 = (self.0 * 2).min(LOOK_EVERY);
        pause
    }
}

async fn write_flush(out: &mut impl BodyOut, bytes: &[u8]) -> Result<(), WaitError> {
    out.write_flush(bytes).await.map_err(WaitError::ClientLeft)
}

async fn write_json(out: &mut impl BodyOut, inbox: &Inbox) -> Result<(), WaitError> {
    let body = serde_json::to_vec(inbox).map_err(json_error)?;
    write_flush(out, &body).await
}

fn json_error(e: serde_json::Error) -> HubError {
    HubError::Store(crate::SqlError(format!("cannot write JSON: {e}")))
}
