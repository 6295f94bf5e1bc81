//! The request deadline (`--request-timeout`, 30 s by default): what stops a component that is
//! stuck, without stopping one that is waiting or streaming on purpose.
//!
//! - Until the component sets its response, the deadline is wall-clock: a request without an
//!   answer after the timeout gets `504`, whatever the component is doing.
//! - Once the response is set, the component may go on writing its body (a long-poll waiting
//!   for a message, an event stream) for as long as it keeps the body moving. It is stopped when
//!   the timeout passes without a byte of body going out (stuck in a host call, or a client that
//!   reads nothing), or when it has run guest code for the timeout in all (a loop).
//! - A body cut short by the deadline ends with an error (the connection is aborted, not
//!   finished), so that a client never takes the part it got for the whole answer.
//!
//! Running time is measured with epoch interruption: the engine's epoch advances every
//! [`EPOCH_TICK`], and guest code that is running when it does calls back here.
//! Callbacks a tick apart mean the guest ran in between; a longer gap means it was blocked in
//! the host (sleeping on a clock, reading a socket), which does not count.
//!
//! Spin v4.0.2 stops nothing (see [`crate::limits`]); edge hosts stop a request after a wall-clock
//! limit (Akamai Functions: 30 s), which is why the hub's waits and streams end by themselves
//! before `hub_max_wait` (25 s by default) and so pass under a wall-clock 30 s too.

use std::pin::Pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Instant;
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode as BodyError;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::state::State;

/// How often the engine's epoch advances: the granularity of the request deadline (Spin's
/// `DEFAULT_EPOCH_TICK_INTERVAL`).
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Advances `engine`'s epoch every [`EPOCH_TICK`] until the engine is dropped.
pub(crate) fn spawn_epoch_ticker(engine: &wasmtime::Engine) -> anyhow::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("epoch-ticker".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .context("cannot start the epoch ticker thread")?;
    Ok(())
}

/// One request's deadline, shared by the guest's task, its epoch callback and its response body.
#[derive(Debug)]
pub(crate) struct Deadline {
    limit: Duration,
    start: Instant,
    answered: AtomicBool,
    /// The deadline stopped the guest.
    stopped: AtomicBool,
    /// When the body last sent something (or the response was set).
    last_write: Mutex<Instant>,
}

impl Deadline {
    pub(crate) fn new(limit: Duration) -> Self {
        let start = Instant::now();
        Self {
            limit,
            start,
            answered: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            last_write: Mutex::new(start),
        }
    }

    /// When the request runs out of time unless something happens first.
    pub(crate) fn expiry(&self) -> Instant {
        if self.answered.load(Ordering::Acquire) {
            *self.last_write.lock().unwrap_or_else(|e| e.into_inner()) + self.limit
        } else {
            self.start + self.limit
        }
    }

    /// The wall-clock end of the wait for a response.
    pub(crate) fn answer_by(&self) -> Instant {
        self.start + self.limit
    }

    fn expired(&self, now: Instant) -> bool {
        now >= self.expiry()
    }

    /// The component set its response: from now on, the body must keep moving.
    pub(crate) fn answered(&self) {
        self.wrote();
        self.answered.store(true, Ordering::Release);
    }

    fn wrote(&self) {
        *self.last_write.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Runs the guest's `work` until it ends or the deadline passes (`None`).
    pub(crate) async fn guard<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return Some(done),
                _ = tokio::time::sleep_until(self.expiry()) => {
                    if self.expired(Instant::now()) {
                        self.stopped.store(true, Ordering::Release);
                        return None;
                    }
                }
            }
        }
    }

    /// Every epoch tick, running guest code yields to the runtime (so a loop cannot hold a
    /// worker thread) and traps once the deadline has passed or it has run for the limit.
    pub(crate) fn arm(self: &std::sync::Arc<Self>, store: &mut Store<State>) {
        let deadline = self.clone();
        let mut last_tick: Option<Instant> = None;
        let mut ran = Duration::ZERO;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            let now = Instant::now();
            if let Some(previous) = last_tick
                && now - previous <= 2 * EPOCH_TICK
            {
                ran += now - previous;
            }
            last_tick = Some(now);
            if deadline.expired(now) || ran >= deadline.limit {
                deadline.stopped.store(true, Ordering::Release);
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(tokio::task::yield_now()),
            ))
        });
    }

    /// `body`, noting each frame it sends.
    pub(crate) fn watch(self: std::sync::Arc<Self>, body: HyperOutgoingBody) -> HyperOutgoingBody {
        http_body_util::BodyExt::boxed_unsync(Watched {
            inner: body,
            deadline: self,
        })
    }
}

/// A response body that tells its [`Deadline`] when it sends something.
struct Watched {
    inner: HyperOutgoingBody,
    deadline: std::sync::Arc<Deadline>,
}

impl Body for Watched {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(_))) => self.deadline.wrote(),
            // The guest was stopped mid-body: its dropped body reads as finished.
            Poll::Ready(None) if self.deadline.stopped.load(Ordering::Acquire) => {
                return Poll::Ready(Some(Err(BodyError::ConnectionTerminated)));
            }
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
