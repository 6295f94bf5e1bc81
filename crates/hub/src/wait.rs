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
//! A long-poll's steady looks keep one beat (the multiples of [`LOOK_EVERY`] on the monotonic
//! clock), so the long-polls of one WASIp3 instance fall due together, and its [`Gathering`]
//! answers them with one statement on one connection. Spin v4.0.2 gives a WASIp3 instance up
//! to 16 requests at once (see `dochub-host`'s `p3` module), so that is up to 16 looks for
//! the price of one; a WASIp2 instance, which serves one request, looks alone ([`EachLook`]).
//! An instance takes another request only while its event loop is idle, so the WASIp3 hub
//! yields first in a request that may wait ([`crate::api::may_wait`]): waiters arriving in
//! the same moment then share instances instead of each starting one.
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

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::HubError;
use crate::model::{Importance, Inbox, InboxMessage, MachineName};
use crate::sql::Sql;
use crate::store::{Clock, Hub};

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
/// How long a [`Gathering`] waits for the other long-polls of its instance whose look falls
/// due at the same moment.
pub const GATHER: Duration = Duration::from_millis(5);

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

/// How a long-poll learns whether its inbox has news.
pub trait Lookout {
    /// Whether `machine` has unread messages of `importance` or above, on a connection from
    /// `connect`.
    fn has_unread<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        machine: &MachineName,
        importance: Importance,
    ) -> impl Future<Output = Result<bool, HubError>>;
}

/// A [`Lookout`] that asks the store itself, one statement per look.
#[derive(Debug, Clone, Copy, Default)]
pub struct EachLook;

impl Lookout for EachLook {
    fn has_unread<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        machine: &MachineName,
        importance: Importance,
    ) -> impl Future<Output = Result<bool, HubError>> {
        std::future::ready(
            connect().and_then(|hub| hub.has_unread_at_least(machine, 0, importance)),
        )
    }
}

/// A [`Lookout`] shared by the long-polls of one WASIp3 instance: those whose looks fall due
/// together (their steady looks keep one beat, see [`WaitingRead::run`]) are answered by one
/// statement ([`Hub::unread_importance`]) on one connection, taken by the first of them after
/// [`GATHER`].
pub struct Gathering<P> {
    pause: P,
    state: RefCell<Round>,
}

/// The long-polls a [`Gathering`] is about to look for, and the answers not yet taken.
#[derive(Default)]
struct Round {
    next_id: u64,
    waiting: Vec<(u64, MachineName)>,
    answers: HashMap<u64, Result<Option<Importance>, HubError>>,
    /// One of the waiting is gathering the others, or looking for them.
    leading: bool,
    wakers: Vec<Waker>,
}

impl<P: AsyncPause> Gathering<P> {
    /// A lookout whose first long-poll waits [`GATHER`] on `pause` for the others.
    pub fn new(pause: P) -> Self {
        Self {
            pause,
            state: RefCell::default(),
        }
    }
}

impl<P: AsyncPause> Lookout for Gathering<P> {
    async fn has_unread<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        machine: &MachineName,
        importance: Importance,
    ) -> Result<bool, HubError> {
        let id = {
            let mut round = self.state.borrow_mut();
            let id = round.next_id;
            round.next_id += 1;
            round.waiting.push((id, machine.clone()));
            id
        };
        // A long-poll that stops (its request ended) leaves no entry behind.
        let _entry = Entry {
            state: &self.state,
            id,
        };
        loop {
            if let Some(answer) = self.state.borrow_mut().answers.remove(&id) {
                return answer.map(|level| level.is_some_and(|level| level >= importance));
            }
            let lead = !std::mem::replace(&mut self.state.borrow_mut().leading, true);
            if !lead {
                Woken(false, &self.state).await;
                continue;
            }
            // Should this request end while it leads, the others are woken to lead in turn.
            let _lead = Lead(&self.state);
            self.pause.sleep(GATHER).await;
            let waiting = std::mem::take(&mut self.state.borrow_mut().waiting);
            let machines: Vec<&MachineName> = waiting.iter().map(|(_, m)| m).collect();
            // The look is synchronous: nobody joins the round until it has been answered.
            let levels = connect().and_then(|hub| hub.unread_importance(&machines));
            let mut round = self.state.borrow_mut();
            match levels {
                Ok(levels) => {
                    for ((id, _), level) in waiting.iter().zip(levels) {
                        round.answers.insert(*id, Ok(level));
                    }
                }
                Err(e) => {
                    for (id, _) in &waiting {
                        round.answers.insert(*id, Err(e.clone()));
                    }
                }
            }
        }
    }
}

/// One long-poll's place in a [`Gathering`]'s round.
struct Entry<'a> {
    state: &'a RefCell<Round>,
    id: u64,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        let mut round = self.state.borrow_mut();
        round.waiting.retain(|(id, _)| *id != self.id);
        round.answers.remove(&self.id);
    }
}

/// The lead of a [`Gathering`]'s round: given up when dropped, waking the others.
struct Lead<'a>(&'a RefCell<Round>);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        let mut round = self.0.borrow_mut();
        round.leading = false;
        for waker in round.wakers.drain(..) {
            waker.wake();
        }
    }
}

/// Waits for the next wake of a [`Gathering`]'s round (its lead's end).
struct Woken<'a>(bool, &'a RefCell<Round>);

impl Future for Woken<'_> {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        self.1.borrow_mut().wakers.push(cx.waker().clone());
        Poll::Pending
    }
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
    ///
    /// Its looks come at [`FIRST_LOOK`], then twice as long after each up to [`LOOK_EVERY`],
    /// and from there on at the beat of every long-poll on the same clock (its multiples of
    /// [`LOOK_EVERY`]), so that a [`Gathering`] answers the long-polls of an instance together.
    pub async fn run<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        pause: &impl AsyncPause,
        lookout: &impl Lookout,
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
            let next = match looks.next() {
                LOOK_EVERY => until_beat(now),
                rising => rising,
            };
            pause.sleep(next.min(end - now)).await;
            if pause.monotonic().saturating_sub(spoken) >= KEEP_ALIVE {
                write_flush(out, b" ").await?;
                spoken = pause.monotonic();
            }
            match self.look(connect, lookout, out).await {
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
        lookout: &impl Lookout,
        out: &mut impl BodyOut,
    ) -> Result<Option<Inbox>, WaitError> {
        if !lookout
            .has_unread(connect, &self.machine, self.importance)
            .await?
        {
            return Ok(None);
        }
        // No transaction is open across this write, which may yield to another request of
        // the instance on the same connection.
        write_flush(out, b" ").await?;
        let inbox = connect()?.inbox_at_least(
            &self.machine,
            self.importance,
            self.limit,
            self.ack,
            false,
        )?;
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

/// From `now` to the next multiple of [`LOOK_EVERY`] (a whole one when `now` is on it).
fn until_beat(now: Duration) -> Duration {
    let every = LOOK_EVERY.as_nanos();
    let past = now.as_nanos() % every;
    Duration::from_nanos(u64::try_from(every - past).unwrap_or(u64::MAX))
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
