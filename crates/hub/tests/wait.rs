//! Long-polls that share an instance (WASIp3) and look at the store together through a
//! `Gathering`: one statement answers all whose looks fall due at once.

mod common;

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use common::{SqliteDb, TestDb};
use dochub_hub::wait::{AsyncPause, Gathering, Lookout};
use dochub_hub::{Hub, HubError, Importance, MachineName, SendRequest};
use futures::FutureExt;

/// A pause whose sleep lets every other ready future run once, then ends.
struct YieldOnce;

struct Yield(bool);

impl Future for Yield {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl AsyncPause for YieldOnce {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }

    fn sleep(&self, _: Duration) -> impl Future<Output = ()> {
        Yield(false)
    }
}

fn name(n: &str) -> MachineName {
    MachineName::parse(n, "machine").unwrap()
}

fn send(hub: &Hub<SqliteDb>, to: &str, importance: &str) {
    let json = format!(r#"{{"from":"a","to":"{to}","body":"hi","importance":"{importance}"}}"#);
    hub.send(&SendRequest::from_json(json.as_bytes()).unwrap(), None)
        .unwrap();
}

#[test]
fn long_polls_due_together_are_answered_by_one_look() {
    let db = TestDb::new();
    let hub = db.hub();
    send(&hub, "b", "normal");
    send(&hub, "c", "low");
    let lookout = Gathering::new(YieldOnce);
    let connections = Cell::new(0);
    let connect = || {
        connections.set(connections.get() + 1);
        Ok(db.hub())
    };
    let (mb, mc, md) = (name("b"), name("c"), name("d"));
    let (b, c, c_high, d, b_again) = futures::executor::block_on(async {
        futures::join!(
            lookout.has_unread(&connect, &mb, Importance::Normal),
            lookout.has_unread(&connect, &mc, Importance::Low),
            lookout.has_unread(&connect, &mc, Importance::High),
            lookout.has_unread(&connect, &md, Importance::Low),
            lookout.has_unread(&connect, &mb, Importance::Low),
        )
    });
    assert_eq!(
        (b.unwrap(), c.unwrap(), c_high.unwrap(), d.unwrap()),
        (true, true, false, false)
    );
    assert!(b_again.unwrap());
    assert_eq!(
        connections.get(),
        1,
        "one connection, one look, for all five"
    );
    // Nothing was taken: the messages are still unread.
    assert_eq!(
        hub.inbox(&name("b"), 10, false, false)
            .unwrap()
            .messages
            .len(),
        1
    );
}

#[test]
fn a_failed_look_is_every_long_polls_failure_and_the_next_look_tries_again() {
    let db = TestDb::new();
    send(&db.hub(), "b", "normal");
    let lookout = Gathering::new(YieldOnce);
    let failing = Cell::new(true);
    let connect = || {
        if failing.get() {
            Err(HubError::Unavailable("no free connection".into()))
        } else {
            Ok(db.hub())
        }
    };
    let (mb, mc) = (name("b"), name("c"));
    let (b, c) = futures::executor::block_on(async {
        futures::join!(
            lookout.has_unread(&connect, &mb, Importance::Low),
            lookout.has_unread(&connect, &mc, Importance::Low),
        )
    });
    assert!(matches!(b, Err(HubError::Unavailable(_))), "{b:?}");
    assert!(matches!(c, Err(HubError::Unavailable(_))), "{c:?}");
    failing.set(false);
    let b = futures::executor::block_on(lookout.has_unread(&connect, &mb, Importance::Low));
    assert!(b.unwrap());
}

/// A long-poll whose request ends while it gathers the others hands the look on: those left
/// are still answered, and it leaves nothing behind.
#[test]
fn the_others_are_answered_when_the_gathering_long_poll_ends() {
    let db = TestDb::new();
    send(&db.hub(), "c", "normal");
    let lookout = Gathering::new(YieldOnce);
    let connect = || Ok(db.hub());
    let (mb, mc) = (name("b"), name("c"));
    let mut leader = Box::pin(lookout.has_unread(&connect, &mb, Importance::Low));
    let mut follower = Box::pin(lookout.has_unread(&connect, &mc, Importance::Low));
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    assert!(leader.poll_unpin(&mut cx).is_pending(), "it gathers");
    assert!(
        follower.poll_unpin(&mut cx).is_pending(),
        "it waits for the look"
    );
    drop(leader);
    assert!(futures::executor::block_on(follower).unwrap());
    // The next round holds only its own long-poll.
    let connections = Cell::new(0);
    let counting = || {
        connections.set(connections.get() + 1);
        Ok(db.hub())
    };
    let b = futures::executor::block_on(lookout.has_unread(&counting, &mb, Importance::Low));
    assert!(!b.unwrap());
    assert_eq!(connections.get(), 1);
}
