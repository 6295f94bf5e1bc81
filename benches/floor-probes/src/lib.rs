//! What `/api/health` costs before any work of ours: the host calls it makes at every request,
//! through the same interfaces, and nothing else. The variables the `health` component reads,
//! the key-value store's open and read (its probe), and the SQLite probe itself
//! (`dochub_hub_spin::OpenStore::probe`); then `200 ok`. Under Spin v4.0.2 each variable and
//! key-value call runs in tokio's `block_in_place` and each SQLite statement on its blocking
//! pool, whatever asks for it: the benches hold health against this as well as the plain floor,
//! so that what is left between them is ours.

// `#[http_component]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use dochub_hub_spin::HubStore;
use dochub_spin_imports::{store, variables};
use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
fn handle(_request: IncomingRequest, out: ResponseOutparam) {
    let variables = [
        "environment",
        "auth_tokens",
        "allowed_hosts",
        "database_url",
        "hub_database_url",
    ];
    let read = variables.iter().all(|name| variables::get(name).is_ok());
    let stored =
        store::open("default").is_ok_and(|bucket| bucket.get("dochub:api:started_at").is_ok());
    // Health's own probe, so that this floor follows it.
    let probed = HubStore::Sqlite.open().and_then(|db| db.probe()).is_ok();
    // A failed call answers 500, so that a bench never holds health against calls refused
    // early.
    let status = if read && stored && probed { 200 } else { 500 };
    answer(out, status);
}

/// Answers `status` with the body `ok`, written before the response is set, as health's
/// `dochub_http_wasip2` writes it: set first, the body can reach the connection after the head
/// and wait for the client's delayed ACK.
fn answer(out: ResponseOutparam, status: u16) {
    let headers = [
        ("content-type".to_owned(), b"text/plain".to_vec()),
        ("content-length".to_owned(), b"2".to_vec()),
    ];
    let response = OutgoingResponse::new(Fields::from_list(&headers).expect("valid headers"));
    response.set_status_code(status).expect("a valid status");
    let body = response.body().expect("the body, taken once");
    let stream = body.write().expect("the body's stream, taken once");
    let written =
        stream.check_write().is_ok_and(|permit| permit >= 2) && stream.write(b"ok").is_ok();
    out.set(response);
    drop(stream);
    if written {
        let _ = OutgoingBody::finish(body, None);
    }
}
