//! The WASIp2 form (spin-sdk 5): an instance per request, which opens the store for it.

use std::time::Duration;

use dochub_hub::wait::Pause;
use dochub_hub_spin::Connector;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::variables;
use wasi::clocks::monotonic_clock;

use super::*;

/// The body of a response that is written over time (a long-poll, an event stream).
type WriteBody = Box<dyn FnOnce(&mut dyn std::io::Write) -> Result<(), String>>;

/// A whole response, or a head and the writing of its body.
enum Reply {
    Now(Response),
    Later(Response, WriteBody),
}

pub(crate) async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Hub, &req, out, "hub_tokens") else {
        return;
    };
    let auth = hub_auth(&admitted.incoming, &admitted.settings);
    match answer(req, &admitted.incoming, &auth).await {
        Reply::Now(response) => admitted.respond(response),
        Reply::Later(head, write) => admitted.send(head, write),
    }
}

async fn answer(req: IncomingRequest, incoming: &Incoming, auth: &HubAuth) -> Reply {
    let request = match admitted_request(incoming, auth) {
        Ok(request) => request,
        Err(response) => return Reply::Now(response),
    };
    let body = match read_body(&request, || req.into_body_stream()).await {
        Ok(body) => body,
        Err(response) => return Reply::Now(*response),
    };
    let limits = match Limits::from_variables(variable) {
        Ok(limits) => limits,
        Err(e) => return Reply::Now(config_error(&e)),
    };
    match HubStore::configured().connector() {
        Ok(connect) => serve(connect, limits, auth, &request, body),
        Err(e) => Reply::Now(unavailable(&e)),
    }
}

/// Answers on a connection from `connect`; a long-poll or a stream opens one per look at the
/// store and lets it go in between, so waiting requests do not hold the pool's connections.
fn serve(
    connect: Connector,
    limits: Limits,
    auth: &HubAuth,
    request: &Request<'_>,
    body: Body,
) -> Reply {
    let db = match connect() {
        Ok(db) => db,
        Err(e) => return Reply::Now(unavailable(&e)),
    };
    let hub = Hub::with_clock(db, SystemClock, limits);
    match api::answer(&hub, auth, request, body) {
        Answer::Now(response) => Reply::Now(response),
        Answer::Later(later) => {
            drop(hub);
            let head = later.head.clone();
            Reply::Later(
                head,
                Box::new(move |out| {
                    let connect = || {
                        connect()
                            .map(|db| Hub::with_clock(db, SystemClock, limits))
                            .map_err(HubError::Unavailable)
                    };
                    later
                        .run(&connect, &WasiPause, out)
                        .map_err(|e| e.to_string())
                }),
            )
        }
    }
}

/// [`Pause`] on WASI's monotonic clock: the instance, which serves this request alone, blocks
/// on a clock pollable, which costs the host nothing while it waits.
struct WasiPause;

impl Pause for WasiPause {
    fn monotonic(&self) -> Duration {
        Duration::from_nanos(monotonic_clock::now())
    }

    fn sleep(&self, duration: Duration) {
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        monotonic_clock::subscribe_duration(nanos).block();
    }
}

/// A variable the settings did not read; unreadable reads as empty, which
/// [`Limits::from_variables`] treats as its default.
fn variable(name: &str) -> String {
    variables::get(name).unwrap_or_default()
}
